"""LoCoMo: each conversation's turns as episode memories in a fresh store, each question a
query; fractional evidence recall@5/10/25 and evidence recall inside the recall (500) and
startup (2,000) budgets, overall, for categories 1–4 and per category."""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nous.context import chat
from nous.evaluation import metrics
from nous.evaluation.data import CATEGORIES, LOCOMO_SPLITS, Conversation, Turn
from nous.evaluation.harness import DEPTH, CachingEmbedder, Packer, progress, rank
from nous.memory import turns
from nous.memory.embedder import Embedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text.tokens import TokenCounter

KS = (5, 10, 25)
BUDGETS = (500, 2000)
SCOPES = ["universal"]


def _day(turn: Turn) -> str:
    """`1:56 pm on 8 May, 2023` → `8 May 2023`."""
    day = turn.date.split(" on ", 1)[-1]
    return re.sub(r"\s*,\s*", " ", day).strip()


def _said(turn: Turn) -> str:
    return f'{turn.speaker} said, "{turn.text}"'


def _shared(turn: Turn) -> str:
    return f" and shared {turn.caption}." if turn.caption else ""


FORMATS: dict[str, Callable[[Turn], str]] = {
    "colon": lambda t: f"{t.speaker}: {t.text}",
    "said": _said,
    "said-shared": lambda t: _said(t) + _shared(t),
    "dated": lambda t: f"{_said(t)}{_shared(t)} ({_day(t)})",
    "date-first": lambda t: f"On {_day(t)}, {_said(t)}{_shared(t)}",
}
"""Turn texts as stored. `dated` was picked on the development split (docs/benchmarks.md)."""
DEFAULT_FORMAT = "dated"


def drafts(conv: Conversation, fmt: str) -> list[Draft]:
    """The turns as chat episodes, through the capture path (`memory.turns`): LoCoMo's session
    `D3` of conversation `conv-26` is session `conv-26-D3`, its turn `D3:12` index 12."""
    render = FORMATS[fmt]
    out = []
    for t in conv.turns:
        session, _, index = t.dia_id.partition(":")
        out.append(turns.draft(f"{conv.sample_id}-{session}", int(index), render(t),
                               scope="universal", tags=["locomo"]))  # fmt: skip
    return out


@dataclass
class Timing:
    query: dict[str, float]
    build: float = 0.0
    turns: int = 0
    recall: float = 0.0


def run(
    conversations: Sequence[Conversation],
    split: str,
    systems: Sequence[str],
    embedder: Embedder,
    counter: TokenCounter,
    fmt: str = DEFAULT_FORMAT,
    limit: int | None = None,
) -> dict[str, Any]:
    """Evaluate the split's conversations (the first `limit` questions when given)."""
    chosen = [c for c in conversations if c.index in LOCOMO_SPLITS[split]]
    caching = CachingEmbedder(embedder)
    rows: list[tuple[int, dict[str, dict[str, float]]]] = []
    packed_nous: dict[int, list[float]] = {b: [] for b in BUDGETS}
    pipeline_stats: dict[int, dict[str, list[float]]] = {
        b: {"tokens": [], "items": []} for b in BUDGETS
    }
    timing = Timing(query={s: 0.0 for s in systems})
    used_convs = []
    remaining = limit
    started = time.perf_counter()
    for conv in chosen:
        if remaining is not None and remaining <= 0:
            break
        questions = conv.questions if remaining is None else conv.questions[:remaining]
        if remaining is not None:
            remaining -= len(questions)
        used_convs.append(conv.sample_id)
        with tempfile.TemporaryDirectory(prefix="nous-eval-") as tmp:
            store = MemoryStore(Path(tmp) / "locomo.db", caching, counter)
            try:
                t0 = time.perf_counter()
                results = store.remember_many(drafts(conv, fmt))
                store.wait_embedded()  # searched at once: every vector must be in
                timing.build += time.perf_counter() - t0
                timing.turns += len(conv.turns)
                mapping: dict[str, list[str]] = {}
                for turn, result in zip(conv.turns, results, strict=True):
                    mapping.setdefault(result.memory.id, []).append(turn.dia_id)
                packer = Packer(store)
                for q in questions:
                    vector = caching.embed(q.question)
                    row: dict[str, dict[str, float]] = {}
                    for system in systems:
                        t1 = time.perf_counter()
                        ranking = rank(system, store, q.question, vector, SCOPES, DEPTH)
                        timing.query[system] += time.perf_counter() - t1
                        row[system] = {
                            f"R@{k}": metrics.recall_at(ranking, mapping, q.evidence, k) for k in KS
                        }
                        for b in BUDGETS:
                            ids, _ = packer.pack(ranking, b)
                            share = metrics.found_share(metrics.units(ids, mapping), q.evidence)
                            if system == "nous":
                                packed_nous[b].append(share)
                            else:
                                row[system][f"B{b}"] = share
                    if "nous" in systems:
                        for b in BUDGETS:
                            t1 = time.perf_counter()
                            answer = chat.recall_in(store, q.question, SCOPES, b)
                            timing.recall += time.perf_counter() - t1
                            ids = [i.id for i in chat.ranked(answer)]
                            row["nous"][f"B{b}"] = metrics.found_share(
                                metrics.units(ids, mapping), q.evidence
                            )
                            pipeline_stats[b]["tokens"].append(answer.tokens)
                            pipeline_stats[b]["items"].append(len(ids))
                    rows.append((q.category, row))
            finally:
                store.close()
        progress(
            f"locomo {conv.sample_id}: {len(conv.turns)} turns, {len(questions)} questions, "
            f"{time.perf_counter() - started:.0f}s"
        )
    return _summary(rows, systems, split, fmt, used_convs, packed_nous, pipeline_stats, timing)


def _aggregate(rows: Sequence[dict[str, dict[str, float]]], systems: Sequence[str]) -> Any:
    out: dict[str, dict[str, float]] = {}
    for system in systems:
        names = rows[0][system].keys() if rows else []
        out[system] = {n: metrics.mean(r[system][n] for r in rows) for n in names}
    return out


def _summary(
    rows: list[tuple[int, dict[str, dict[str, float]]]],
    systems: Sequence[str],
    split: str,
    fmt: str,
    convs: list[str],
    packed_nous: dict[int, list[float]],
    pipeline_stats: dict[int, dict[str, list[float]]],
    timing: Timing,
) -> dict[str, Any]:
    n = len(rows)
    overall = _aggregate([r for _, r in rows], systems)
    core = _aggregate([r for c, r in rows if c != 5], systems)
    categories = {}
    for cat, name in CATEGORIES.items():
        subset = [r for c, r in rows if c == cat]
        if subset:
            categories[name] = {"n": len(subset), "systems": _aggregate(subset, systems)}
    out: dict[str, Any] = {
        "dataset": "locomo",
        "split": split,
        "format": fmt,
        "conversations": convs,
        "questions": n,
        "questionsCat1to4": sum(1 for c, _ in rows if c != 5),
        "depth": DEPTH,
        "systems": overall,
        "cat1to4": core,
        "categories": categories,
        "budgetHow": {
            "nous": "recall(store, question, ['universal'], budget): the pipeline's items",
            "dense": "its ranking packed best-first as '- summary' lines under one heading",
            "bm25": "its ranking packed best-first as '- summary' lines under one heading",
        },
    }
    if "nous" in systems:
        out["nousRankedPacked"] = {f"B{b}": metrics.mean(v) for b, v in packed_nous.items()}
        out["nousPipeline"] = {
            f"B{b}": {
                "meanTokens": metrics.mean(s["tokens"]),
                "meanItems": metrics.mean(s["items"]),
            }
            for b, s in pipeline_stats.items()
        }
    out["timing"] = {
        "buildSeconds": timing.build,
        "turnsPerSecond": timing.turns / timing.build if timing.build else None,
        "queryMs": {s: 1000 * v / max(1, n) for s, v in timing.query.items()},
        "recallMsPerCall": 1000 * timing.recall / max(1, n * len(BUDGETS)),
    }
    return out
