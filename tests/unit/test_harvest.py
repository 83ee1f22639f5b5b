"""Harvesting a real temporary git workspace: rules, ADRs, procedures, commits, secrets."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from nous.context import chat
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.protocol import ContextParams, RecallParams
from nous.settings import Settings
from nous.workspace.harvest import adr, instructions, procedures

AWS = "AKIAZ7Q3EXAMPLE4KEY9"
GHP = "ghp_" + "R8c2Lw9QzX4vT1mN6pK3sY7uB5dF0hJ2aG8e"
ADR_TEXT = """# 1. Use Postgres for storage

## Status

{status}

## Context

We need one database for rows and vectors, with backups the team already knows.

## Decision

Use PostgreSQL with pgvector for all storage, including caching tables.

## Consequences

One service to operate; no Redis.
"""


def git(ws: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
                        "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
                        "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(ws)})  # fmt: skip


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "shop"
    (ws / "docs" / "adr").mkdir(parents=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    (ws / "app.py").write_text("print('shop')\n")
    (ws / "AGENTS.md").write_text(
        "# Rules\n\n- Never commit directly to main.\n- Use pytest for every test.\n"
        "- Prefer dataclasses over dicts for records.\n\n"
        f"```sh\nexport AWS_ACCESS_KEY_ID={AWS}\n```\n"
    )
    (ws / "docs" / "adr" / "0001-use-postgres.md").write_text(ADR_TEXT.format(status="Accepted"))
    (ws / "CONTRIBUTING.md").write_text(
        "# Contributing\n\n## Running the tests\n\nRun `scripts/test` from the repository root; it "
        "installs everything and runs the suite.\n"
    )
    (ws / ".env").write_text(f"AWS_ACCESS_KEY_ID={AWS}\nGITHUB_TOKEN={GHP}\n")
    (ws / ".github").mkdir()
    (ws / ".github" / "copilot-instructions.md").write_text(
        "Always answer with type hints in Python examples.\n"
    )
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "pyproject.toml", "app.py", "AGENTS.md")
    git(ws, "commit", "-q", "-m", "Start the shop service", "-m", f"token was {GHP} oops")
    git(ws, "add", "docs", "CONTRIBUTING.md")
    git(ws, "commit", "-q", "-m", "Record the storage decision")
    return ws


def test_workspace_harvest_end_to_end(
    workspace: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    db = tmp_path / "memory.db"
    engine = Engine(Settings(db=db), workspace, embedder=real_embedder)
    report = engine.harvest()
    assert report["errors"] == [] and report["commits"] == 2
    sources = {r[0] for r in engine.store._conn.execute("SELECT source FROM memories")}
    assert {s.split("#")[0] for s in sources if s.startswith("file:")} == {
        "file:AGENTS.md", "file:docs/adr/0001-use-postgres.md", "file:CONTRIBUTING.md",
        "file:.github/copilot-instructions.md",
    }  # fmt: skip
    assert sum(s.startswith("git:") for s in sources) == 2
    [(rules, kind)] = engine.store._conn.execute(
        "SELECT content, kind FROM memories WHERE source LIKE 'file:AGENTS.md%'"
    ).fetchall()
    # one record per rule block: the list stays whole, its code block stays with it
    assert "- Never commit directly to main.\n- Use pytest for every test." in rules
    assert kind == "procedure" and "```sh" in rules

    result = chat.context(engine, ContextParams(input="should we use Redis for caching?"))
    decisions = next(s for s in result.sections if s.layer == "decisions").items
    # the ADR's sections are one item (its best section leads; the others are merged into it)
    chosen = [m for i in decisions for m in (i.id, *i.merged)]
    assert any("PostgreSQL with pgvector" in engine.store.get(m).content for m in chosen)
    recall = chat.recall(engine, RecallParams(query="access key token"))
    engine.store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("memory.db*"))
    responses = json.dumps([result.model_dump(), recall.model_dump()])
    for secret in (AWS, GHP):
        assert secret.encode() not in raw
        assert secret not in responses

    adr_file = workspace / "docs" / "adr" / "0001-use-postgres.md"
    decision = engine.store._conn.execute(
        "SELECT id, status FROM memories WHERE kind = 'decision'"
    ).fetchone()
    assert decision[1] == "reviewed"
    (workspace / "docs" / "adr" / "0002-use-sqlite.md").write_text(
        ADR_TEXT.replace("1. Use Postgres", "2. Use SQLite")
        .replace("PostgreSQL with pgvector", "SQLite")
        .format(status="Accepted")
    )
    adr_file.write_text(ADR_TEXT.format(status="Superseded by [ADR 2](0002-use-sqlite.md)"))
    engine.harvest()
    old = engine.store.get(decision[0])
    assert old.status == "superseded"
    assert old.superseded_by is not None and "SQLite" in engine.store.get(old.superseded_by).content

    (workspace / "AGENTS.md").unlink()
    report = engine.harvest()
    statuses = {
        r[0]
        for r in engine.store._conn.execute(
            "SELECT status FROM memories WHERE source LIKE 'file:AGENTS.md%'"
        )
    }
    assert statuses == {"inactive"} and report["retired"] >= 1


def test_changed_rule_file_updates_without_duplicates(
    workspace: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    engine = Engine(Settings(db=tmp_path / "m.db"), workspace, embedder=real_embedder)
    engine.harvest()
    agents = workspace / "AGENTS.md"
    agents.write_text(
        "# Rules\n\n- Never commit directly to main.\n- Use unittest for every test.\n"
    )
    engine.harvest()
    rows = engine.store._conn.execute(
        "SELECT content, status FROM memories WHERE source LIKE 'file:AGENTS.md%'"
    ).fetchall()
    live = [c for c, s in rows if s != "inactive"]
    assert live == [
        "# AGENTS.md: Rules\n\n- Never commit directly to main.\n- Use unittest for every test."
    ]
    assert any("Use pytest for every test." in c and s == "inactive" for c, s in rows)


def test_a_new_harvester_version_reads_every_file_again(
    workspace: Path, tmp_path: Path, real_embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nous.workspace.harvest import sync

    engine = Engine(Settings(db=tmp_path / "m.db"), workspace, embedder=real_embedder)
    first = engine.harvest()
    assert first["changed"] >= 1 and engine.harvest()["changed"] == 0
    monkeypatch.setattr(sync, "HARVESTER_VERSION", sync.HARVESTER_VERSION + "-next")
    again = engine.harvest()
    assert again["changed"] == first["changed"] and again["created"] == 0  # confirmed, not copied


def test_instruction_file_glob_scopes_to_one_language() -> None:
    text = "---\napplyTo: '**/*.py'\n---\n- Use pathlib, not os.path.\n"
    [rule] = instructions.harvest(".github/instructions/python.instructions.md", text)
    assert rule.language == "python" and rule.anchor.startswith("file:.github/instructions/")


def test_madr_status_and_sections() -> None:
    text = "---\nstatus: proposed\n---\n# Use gRPC\n\n## Context and Problem Statement\n\nServices talk a lot.\n\n## Decision Outcome\n\nChosen: gRPC.\n"
    main, *rest = adr.harvest("docs/decisions/0007-use-grpc.md", text)
    assert main.status == "pending" and "Chosen: gRPC." in main.content
    assert main.anchor.endswith("#adr-7") and main.content.startswith(
        "# ADR 7: Use gRPC (status: proposed)"
    )
    assert [r.content for r in rest] == [
        "# ADR 7: Use gRPC › Context and Problem Statement\n\nServices talk a lot."
    ]


def test_readme_how_to_sections_become_procedures() -> None:
    text = "# Shop\n\nIntro words here and there.\n\n## How to deploy\n\nRun make deploy after the CI turns green on main.\n\n## License\n\nMIT licensed text here.\n"
    by_title = {h.content.split("\n", 1)[0]: h for h in procedures.harvest("README.md", text)}
    deploy = by_title["# README.md: Shop › How to deploy"]
    assert (
        deploy.kind == "procedure" and "Run make deploy after the CI turns green" in deploy.content
    )
    assert by_title["# README.md: Shop › License"].kind == "fact"


def test_env_files_and_nousignore_are_never_read(workspace: Path) -> None:
    from nous.workspace.harvest import sync

    (workspace / ".nousignore").write_text("CONTRIBUTING.md\n")
    (workspace / ".env.local").write_text("X=1\n")
    found = sync.candidates(workspace)
    assert "CONTRIBUTING.md" not in found and not any(".env" in f for f in found)


def test_a_heading_that_prohibits_leads_its_list() -> None:
    """ "## Don't" over "- Use the requests library." is a prohibition, as under "MUST NOT:"; a
    list under a heading that prohibits nothing, or a long heading that merely starts so, keeps
    its own reading."""
    text = (
        "# Rules\n\n## Do\n\n- Use httpx for HTTP calls.\n\n"
        "## Don't\n\n- Use the requests library.\n- Commit .env files.\n\n"
        "## What NOT to flag\n\n- Style nits handled by the formatter.\n\n"
        "## Anti-Patterns\n\n- **Don't call `save()` twice** — it is idempotent.\n"
        "- Never rename a registered slug.\n\n"
        "## Avoiding flaky tests in the integration suite of the service\n\n"
        "- Use the fixtures in `tests/fixtures/` for every network call.\n"
    )
    found = {h.content.split("\n", 1)[0]: h for h in instructions.harvest("AGENTS.md", text)}
    do, dont = found["# AGENTS.md: Rules › Do"], found["# AGENTS.md: Rules › Don't"]
    assert do.kind == "convention" and "Do:" not in do.content
    assert dont.kind == "constraint" and "Don't:\n- Use the requests library." in dont.content
    assert (
        "What NOT to flag:\n- Style nits" in found["# AGENTS.md: Rules › What NOT to flag"].content
    )
    anti = found["# AGENTS.md: Rules › Anti-Patterns"]  # each item says its own "don't"
    assert anti.kind == "constraint" and "Anti-Patterns:" not in anti.content
    long = found[
        "# AGENTS.md: Rules › Avoiding flaky tests in the integration suite of the service"
    ]
    assert long.kind == "convention" and ":\n- Use the fixtures" not in long.content


def test_html_comments_and_task_boxes_are_not_rules() -> None:
    """A template's `<!-- … -->` hints are no rules and a task list's boxes leave their items;
    code keeps every character."""
    text = (
        "<!-- This file guides AI coding agents. -->\n# Agent guide\n\n"
        "<!-- TODO: add the deploy steps -->\n\n"
        "## Before you open a PR\n\n- [ ] Run `make check` (not `<!-- x -->`)\n"
        "- [x] Update the changelog\n\n"
        "<details>\n<summary>Why</summary>\n\nCI is slow, so catch failures locally.\n</details>\n\n"
        "```html\n<!-- keep me -->\n<div>code</div>\n```\n"
    )
    records = instructions.harvest("AGENTS.md", text)
    said = "\n".join(r.content for r in records)
    assert "TODO" not in said and "guides AI coding agents" not in said
    assert len(records) == 1  # the comments made two records of their own
    assert "- Run `make check` (not `<!-- x -->`)\n- Update the changelog" in said
    assert "CI is slow, so catch failures locally." in said
    assert "```html\n<!-- keep me -->\n<div>code</div>\n```" in said
