"""`nous eval repos`: the repository-documentation development set (shared/eval/repos/).

Each repository folder is copied without its SOURCE.md (provenance, not docs) into a fresh temp
folder, which also means no git root above it, and harvested into a fresh store with the real
embedder. Every question then goes through the paths a live chat takes, via the public Engine:
turn context at the frame's default budget, startup at 2,000 tokens and recall at 500. No session
id is sent, so each call gets its own ad-hoc session: no question shares a session cap, a recall
limit or a topic with another, and with no feedback call no usage record is written. Beside it,
the BM25 baseline (`bm25.py`) over the same copy's Markdown sections, packed into 500 tokens and
into the item tokens Nous's recall used. Metrics: `repos_metrics.py`; tables: `repos_report.py`.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nous.context import chat
from nous.engine import Engine
from nous.evaluation import bm25
from nous.evaluation.data import EvalDataError, RepoQuestion, mini_files, split_of
from nous.evaluation.harness import progress
from nous.evaluation.repos_metrics import (
    Injected,
    Row,
    by_note,
    by_theme,
    judge,
    source_paths,
    summarise,
)
from nous.memory.embedder import Embedder
from nous.protocol import ContextParams, ContextResult, Item, RecallParams
from nous.settings import Settings
from nous.text import tokens
from nous.text.tokens import TokenCounter

NOUS_MODES = ("turn", "startup", "recall")
MODES = (*NOUS_MODES, "bm25@500", "bm25@same")
STARTUP_BUDGET = 2000
RECALL_BUDGET = 500
TEXT_CHARS = 300
"""Characters of each item's text kept in the per-question detail."""


@dataclass
class _Collect:
    counter: TokenCounter
    rows: dict[str, list[Row]] = field(default_factory=lambda: {m: [] for m in MODES})
    records: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: {m: 0.0 for m in MODES})
    session_cuts: int = 0
    """Answers cut by a session cap: must stay 0 (no session is shared)."""

    def add(
        self, q: RepoQuestion, mode: str, items: Sequence[Injected],
        shown: list[dict[str, Any]], framing: int, total: int, **extra: Any,
    ) -> dict[str, Any]:  # fmt: skip
        j = judge(items, q.expected_files, q.key_phrases)
        self.rows[mode].append(Row(q.repo, q.kind, q.note, j, framing))
        return {
            "strict": j.strict, "lenient": j.lenient, "rankStrict": j.rank_strict,
            "rankLenient": j.rank_lenient, "precision": j.precision, "itemTokens": j.tokens,
            "alwaysTokens": j.always_tokens,
            "framingTokens": framing, "totalTokens": total, **extra, "items": shown,
        }  # fmt: skip


def copy_repository(source: Path, target: Path) -> None:
    """A repository of the set as a workspace: its folder without SOURCE.md (provenance)."""

    def skip(folder: str, names: list[str]) -> set[str]:
        return {"SOURCE.md"} if Path(folder) == source else set()

    shutil.copytree(source, target, ignore=skip)


def copy_mini(source: Path, target: Path, questions: Sequence[RepoQuestion]) -> None:
    """A repository's **mini** variant as a workspace: its root instruction files, CONTRIBUTING
    and the expected files of its questions (`data.mini_files`)."""
    for rel in mini_files(source, list(questions)):
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, target / rel)
    target.mkdir(parents=True, exist_ok=True)


def item_sources(item: Item) -> list[str]:
    """The item's sources: a `sources` list when the wire model has one, else `source`."""
    many = item.model_dump().get("sources")
    if isinstance(many, list) and many:
        return [s if isinstance(s, str) else str(s.get("source", "")) for s in many]
    return [item.source]


def framing_tokens(result: ContextResult, counter: TokenCounter) -> int:
    """Tokens of the rendered text that are not item text: headings, fences, fixed layer text."""
    rest = result.text
    for section in result.sections:
        for item in section.items:
            if item.text:
                rest = rest.replace(item.text, "", 1)
    kept = [line for line in rest.splitlines() if line.strip() not in ("", "-")]
    return counter.count("\n".join(kept)) if kept else 0


ALWAYS_ON = frozenset({"identity", "constraints", "frame", "working"})
"""The always-on layers (design §2.7): in whatever the input, so not retrieved; at a chat start
the project's rules are too."""


def always_on(mode: str, layer: str) -> bool:
    return layer in ALWAYS_ON or (mode == "startup" and layer == "rules")


def _nous(result: ContextResult) -> tuple[list[Injected], list[dict[str, Any]]]:
    items: list[Injected] = []
    shown: list[dict[str, Any]] = []
    for section in result.sections:
        for item in section.items:
            sources = item_sources(item)
            paths = source_paths(sources)
            # a censor (in by the censors layer alone) is always-on wherever it is rendered
            always = always_on(result.mode, section.layer) or bool(item.terms.get("censor"))
            items.append(Injected(paths, item.text, item.tokens, always))
            shown.append(
                {"source": ", ".join(sources), "paths": list(paths), "kind": item.kind,
                 "layer": section.layer, "detail": item.detail, "tokens": item.tokens,
                 "always": always, "text": item.text[:TEXT_CHARS]}
            )  # fmt: skip
    return items, shown


def _ask(engine: Engine, mode: str, question: str) -> ContextResult:
    if mode == "recall":
        return chat.recall(engine, RecallParams(query=question, budget=RECALL_BUDGET))
    budget = STARTUP_BUDGET if mode == "startup" else None  # turn: the frame's default
    turn_or_startup: Literal["startup", "turn"] = "startup" if mode == "startup" else "turn"
    return chat.context(engine, ContextParams(input=question, mode=turn_or_startup, budget=budget))


def _question(
    run: _Collect, engine: Engine, sections: list[bm25.Section], index: bm25.BM25,
    q: RepoQuestion,
) -> dict[str, Any]:  # fmt: skip
    modes: dict[str, dict[str, Any]] = {}
    for mode in NOUS_MODES:
        started = time.perf_counter()
        result = _ask(engine, mode, q.question)
        run.seconds[mode] += time.perf_counter() - started
        run.session_cuts += result.session.cut
        items, shown = _nous(result)
        modes[mode] = run.add(
            q, mode, items, shown, framing_tokens(result, run.counter), result.tokens,
            budget=result.budget, frame=result.frame,
        )  # fmt: skip
    budgets = {"bm25@500": RECALL_BUDGET, "bm25@same": int(modes["recall"]["itemTokens"])}
    for mode, budget in budgets.items():
        started = time.perf_counter()
        ranked = [sections[i] for i in index.rank(bm25.words(q.question))]
        packed = bm25.pack(ranked, budget, run.counter)
        run.seconds[mode] += time.perf_counter() - started
        items = [Injected((p.path,), p.text, p.tokens) for p in packed]
        shown = [
            {"source": p.path, "paths": [p.path], "detail": "cut" if p.cut else "section",
             "tokens": p.tokens, "text": p.text[:TEXT_CHARS]}
            for p in packed
        ]  # fmt: skip
        modes[mode] = run.add(
            q, mode, items, shown, 0, sum(p.tokens for p in packed), budget=budget
        )
    return {
        "id": q.id, "repo": q.repo, "kind": q.kind, "question": q.question, "note": q.note,
        "expectedFiles": list(q.expected_files), "keyPhrases": list(q.key_phrases), "modes": modes,
    }  # fmt: skip


def _repo(
    run: _Collect, source: Path, questions: Sequence[RepoQuestion], embedder: Embedder,
    encoding: str, variant: str = "full", gate: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="nous-eval-repos-") as tmp:
        workspace = Path(tmp) / source.name
        if variant == "mini":
            copy_mini(source, workspace, questions)
        else:
            copy_repository(source, workspace)
        settings = Settings(db=Path(tmp) / "nous.db", encoding=encoding)
        engine = Engine(settings, workspace, embedder=embedder)
        if gate:  # a leave-one-repository-out fold: the gate fitted without this repository
            engine.config = engine.config.model_copy(
                update={"gate": engine.config.gate.model_copy(update=gate)}
            )
        try:
            started = time.perf_counter()
            harvest = engine.harvest()
            seconds = time.perf_counter() - started
            memories = engine.status()["memories"]
            sections = bm25.markdown_sections(workspace)
            index = bm25.BM25([bm25.words(s.text) for s in sections])
            progress(
                f"{source.name}: harvested {harvest['files']} files into {memories} memories in "
                f"{seconds:.1f} s; BM25 over {len(sections)} sections; {len(questions)} questions"
            )
            for q in questions:
                run.records.append(_question(run, engine, sections, index, q))
        finally:
            engine.store.close()
    return {
        "files": harvest["files"], "memories": memories, "commits": harvest["commits"],
        "errors": harvest["errors"], "seconds": seconds,
        "markdownFiles": len({s.path for s in sections}), "sections": len(sections),
    }  # fmt: skip


def _per_repo(rows: Sequence[Row], names: Sequence[str]) -> dict[str, Any]:
    out = {name: summarise([r for r in rows if r.repo == name]) for name in names}
    splits = {}
    for split in ("tune", "check"):
        part = [r for r in rows if split_of(r.repo) == split]
        if part and len(part) < len(rows):
            splits[f"split:{split}"] = summarise(part)
    return {**out, **splits, "overall": summarise(rows)}


def run(
    path: Path,
    questions: Sequence[RepoQuestion],
    embedder: Embedder,
    encoding: str = tokens.DEFAULT_ENCODING,
    repos: Sequence[str] | None = None,
    limit: int | None = None,
    variant: str = "full",
    gates: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Evaluate the chosen repositories (default all, in file order), the first `limit`
    questions of each: the `full` copies or their `mini` variants; `gates` replaces the gate
    settings of the repositories it names (leave-one-repository-out folds)."""
    names = list(dict.fromkeys(q.repo for q in questions))
    if repos:
        unknown = [r for r in repos if r not in names]
        if unknown:
            raise EvalDataError(f"unknown repo(s) {', '.join(unknown)}: use {','.join(names)}")
        names = [n for n in names if n in repos]
    collect = _Collect(tokens.counter(encoding))
    harvests = {
        name: _repo(collect, path / name, [q for q in questions if q.repo == name][:limit],
                    embedder, encoding, variant, (gates or {}).get(name))
        for name in names
    }  # fmt: skip
    summary = {mode: _per_repo(rows, names) for mode, rows in collect.rows.items()}
    asked = len(collect.records) or 1
    return {
        "dataset": "repos",
        "split": "dev",
        "variant": variant,
        "leaveOneOut": sorted(gates or {}),
        "data": str(path),
        "repos": names,
        "questions": len(collect.records),
        "kinds": {
            k: sum(r["kind"] == k for r in collect.records)
            for k in ("answerable", "no-answer", "greeting")
        },
        "modes": list(MODES),
        "budgets": {
            "turn": "frame default",
            "startup": STARTUP_BUDGET,
            "recall": RECALL_BUDGET,
            "bm25@500": RECALL_BUDGET,
            "bm25@same": "Nous recall item tokens",
        },
        "encoding": encoding,
        "model": embedder.name,
        "harvest": harvests,
        "sessionCuts": collect.session_cuts,
        "summary": summary,
        "byTheme": {mode: by_theme(rows) for mode, rows in collect.rows.items()},
        "byNote": {mode: by_note(rows) for mode, rows in collect.rows.items()},
        "timing": {
            "harvestSeconds": sum(h["seconds"] for h in harvests.values()),
            "msPerQuestion": {m: 1000 * s / asked for m, s in collect.seconds.items()},
        },
        "detail": collect.records,
    }
