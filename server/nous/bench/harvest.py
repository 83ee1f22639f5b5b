"""Harvest throughput on a synthetic workspace: AGENTS.md and copilot-instructions rules, a
CONTRIBUTING.md, ADRs and a git history (built with `git fast-import`), harvested by
`Engine.harvest` (the daemon's startup harvest) with the real model into an empty database, vectors
deferred as the daemon defers them: the harvest is timed to its acknowledgement (answers by text
from then on), and again to its last vector."""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from nous.bench import build, corpus
from nous.engine import Engine
from nous.memory.embedder import Embedder
from nous.settings import Settings

GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def _rules(rng: random.Random, count: int, kinds: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    while len(out) < count:
        filler = corpus.Filler(rng, rng, "python")
        rule = filler.fill(rng.choice(corpus.TEMPLATES[rng.choice(kinds)]))
        if rule not in out:
            out.append(rule)
    return out


def make_workspace(root: Path, rules: int, adrs: int, sections: int, commits: int) -> Path:
    """A workspace folder the harvesters read; returns it. Needs `git` for the history."""
    rng = random.Random("bench:harvest")
    ws = root / "harvest-ws"
    if ws.exists():
        shutil.rmtree(ws)
    (ws / "docs" / "adr").mkdir(parents=True)
    (ws / ".github").mkdir()
    (ws / "pyproject.toml").write_text('[project]\nname = "orderflow-harvest"\n')
    headings = ("Build and test", "Code style", "Security", "Data access", "Reviews", "Releases")
    body = ["# Agent instructions", ""]
    for n, rule in enumerate(_rules(rng, rules, ("constraint", "convention", "preference"))):
        if n % max(1, rules // len(headings)) == 0:
            body += [
                "",
                f"## {headings[(n // max(1, rules // len(headings))) % len(headings)]}",
                "",
            ]
        body.append(f"- {rule}")
    (ws / "AGENTS.md").write_text("\n".join(body) + "\n")
    copilot = _rules(rng, max(1, rules // 4), ("convention", "constraint"))
    (ws / ".github" / "copilot-instructions.md").write_text(
        "# Copilot instructions\n\n" + "".join(f"- {r}\n" for r in copilot)
    )
    parts = ["# Contributing", ""]
    for n in range(sections):
        filler = corpus.Filler(rng, rng, "python")
        task = corpus.TASKS[n % len(corpus.TASKS)]
        steps = " ".join(filler.fill(t) for t in rng.sample(corpus.DETAILS, 3))
        parts += [
            f"## How to {task}",
            "",
            filler.fill(rng.choice(corpus.TEMPLATES["procedure"])),
            "",
            steps,
            "",
        ]
    (ws / "CONTRIBUTING.md").write_text("\n".join(parts))
    for n in range(1, adrs + 1):
        filler = corpus.Filler(rng, rng, "python")
        status = rng.choice(("Accepted", "Accepted", "Accepted", "Proposed", "Deprecated"))
        decision = filler.fill(rng.choice(corpus.TEMPLATES["decision"]))
        context = " ".join(filler.fill(t) for t in rng.sample(corpus.DETAILS, 3))
        (ws / "docs" / "adr" / f"{n:04d}-{filler.topic_value('area')}-{n}.md").write_text(
            f"# {n}. {filler.topic_value('component').capitalize()}\n\n## Status\n\n{status}\n\n"
            f"## Context\n\n{context}\n\n## Decision\n\n{decision}\n\n"
            f"## Consequences\n\n{filler.fill(rng.choice(corpus.DETAILS))}\n"
        )
    _git_history(ws, rng, commits)
    return ws


def _git_history(ws: Path, rng: random.Random, commits: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True, env=GIT_ENV)
    stream: list[bytes] = []
    stamp = 1_700_000_000
    for n in range(commits):
        filler = corpus.Filler(rng, rng, "python")
        subject = filler.fill(
            rng.choice(
                (
                    "Fix {error} in the {component}",
                    "Add {func} to {file}",
                    "Refactor the {component}",
                    "Bump {lib} to {version}",
                    "Document how to {task}",
                    "Make the {component} idempotent",
                )
            )
        )
        message = f"{subject}\n\n{filler.fill(rng.choice(corpus.DETAILS))}\n".encode()
        person = rng.choice(corpus.PEOPLE)
        content = f"# change {n}\n".encode()
        stamp += rng.randint(600, 86_400)
        stream += [
            b"commit refs/heads/main\n",
            f"author {person} <{person.lower()}@example.com> {stamp} +0000\n".encode(),
            f"committer {person} <{person.lower()}@example.com> {stamp} +0000\n".encode(),
            b"data %d\n" % len(message),
            message,
            b"M 644 inline src/change.py\n",
            b"data %d\n" % len(content),
            content,
            b"\n",
        ]
    subprocess.run(
        ["git", "-C", str(ws), "fast-import", "--quiet"],
        input=b"".join(stream),
        check=True,
        env=GIT_ENV,
        capture_output=True,
    )


def measure(
    root: Path,
    embedder: Embedder,
    rules: int = 150,
    adrs: int = 40,
    sections: int = 12,
    commits: int = 300,
) -> dict[str, Any]:
    """Harvest the synthetic workspace twice into a fresh database: first (everything new, real
    embeddings) and again unchanged (hash-skipped files; the git episodes are confirmations)."""
    if shutil.which("git") is None:
        return {"skipped": "git is not installed: no history to harvest"}
    started = time.perf_counter()
    ws = make_workspace(root, rules, adrs, sections, commits)
    setup = time.perf_counter() - started
    db = root / "harvest.db"
    build.fresh_database(db)
    engine = Engine(Settings(db=db), ws, embedder=embedder)
    engine.defer_vectors = True  # as the daemon harvests: answers come before the vectors
    try:
        started = time.perf_counter()
        first = engine.harvest(git_limit=commits)
        engine.store.wait_embedded()
        vectors_seconds = time.perf_counter() - started
        started = time.perf_counter()
        engine.harvest(git_limit=commits)
        again_seconds = time.perf_counter() - started
        memories = engine.store.vector_count()
    finally:
        engine.close()
    written = first["created"] + first["confirmed"]
    return {
        "workspace": f"{rules} AGENTS.md rules + {max(1, rules // 4)} copilot rules, "
        f"{sections} CONTRIBUTING sections, {adrs} ADRs, {commits} commits",
        "setupSeconds": round(setup, 3),
        "files": first["files"],
        "created": first["created"],
        "confirmed": first["confirmed"],
        "commits": first["commits"],
        "seconds": first["seconds"],
        "perSecond": round(written / first["seconds"], 1) if first["seconds"] else 0.0,
        "vectorsSeconds": round(vectors_seconds, 3),
        "unchangedSeconds": round(again_seconds, 3),
        "memories": memories,
        "errors": first["errors"],
    }
