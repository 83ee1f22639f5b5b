"""The metrics of the repository-documentation set, exactly as shared/eval/repos/README.md defines
them: which file an injected item comes from, whether it holds the key phrases (strict: all,
lenient: one), the rank of the first hit, precision by source and tokens per question, and the
summaries per repository, per note and overall. Pure: no store, no model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

THEMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("prohibition", ("prohibition",)),
    ("rule", ("rule",)),
    ("why X over Y", ("why x over y",)),
    ("how-to", ("how-to",)),
    ("paraphrased", ("paraphrased",)),
    ("deep in a long file", ("deep", "long")),
    ("nested or linked file", ("nested", "linked")),
)
"""Coarse groups of the questions' `note` text (a question may be in several), for tuning."""


@dataclass(frozen=True)
class Injected:
    """One injected item as the metrics see it."""

    paths: tuple[str, ...]
    """Source files relative to the repository root (empty when not from a file)."""
    text: str
    tokens: int
    always: bool = False
    """In an always-on layer (identity, censors, frame, working memory; the rules at a chat
    start): it counts for a hit, but not as retrieved (precision, tokens), and is reported apart."""


@dataclass(frozen=True)
class Judgement:
    strict: bool
    lenient: bool
    rank_strict: int | None
    rank_lenient: int | None
    precision: float
    items: int
    tokens: int
    always_items: int = 0
    always_tokens: int = 0


@dataclass(frozen=True)
class Row:
    """One question in one mode, as the summaries need it."""

    repo: str
    kind: str
    note: str
    judgement: Judgement
    framing: int = 0


def normalise(text: str) -> str:
    """Lowercased, runs of whitespace collapsed to one space (punctuation kept)."""
    return " ".join(text.lower().split())


def source_paths(sources: Iterable[str]) -> tuple[str, ...]:
    """`file:<relpath>#<anchor>` → `<relpath>`; other sources (git:, chat, manual) → nothing."""
    out: list[str] = []
    for source in sources:
        if not source.startswith("file:"):
            continue
        path = source.removeprefix("file:").split("#", 1)[0].removeprefix("./")
        if path and path not in out:
            out.append(path)
    return tuple(out)


def judge(
    items: Sequence[Injected], expected_files: Iterable[str], key_phrases: Iterable[str]
) -> Judgement:
    """Hits and ranks (1-based, injection order) over every injected item; precision and tokens
    over the retrieved ones (the always-on layers' items are counted apart)."""
    expected = set(expected_files)
    phrases = [normalise(p) for p in key_phrases]
    rank_strict = rank_lenient = None
    from_expected = 0
    retrieved = [i for i in items if not i.always]
    for position, item in enumerate(items, start=1):
        if not expected.intersection(item.paths):
            continue
        from_expected += not item.always
        text = normalise(item.text)
        found = [p in text for p in phrases]
        if phrases and rank_lenient is None and any(found):
            rank_lenient = position
        if phrases and rank_strict is None and all(found):
            rank_strict = position
    return Judgement(
        strict=rank_strict is not None, lenient=rank_lenient is not None,
        rank_strict=rank_strict, rank_lenient=rank_lenient,
        precision=from_expected / len(retrieved) if retrieved else 0.0,
        items=len(retrieved), tokens=sum(i.tokens for i in retrieved),
        always_items=len(items) - len(retrieved),
        always_tokens=sum(i.tokens for i in items if i.always),
    )  # fmt: skip


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if values else None


def _p95(values: Sequence[float]) -> float | None:
    """95th percentile, linear interpolation between the closest ranks (numpy's default)."""
    return float(np.percentile(values, 95)) if values else None


def _answerable(rows: Sequence[Row]) -> dict[str, Any]:
    js = [r.judgement for r in rows]
    strict_ranks = [j.rank_strict for j in js if j.rank_strict is not None]
    lenient_ranks = [j.rank_lenient for j in js if j.rank_lenient is not None]
    tokens = [j.tokens for j in js]
    return {
        "n": len(js),
        "strict": _mean([j.strict for j in js]),
        "lenient": _mean([j.lenient for j in js]),
        "mrr": _mean([1 / j.rank_strict if j.rank_strict else 0.0 for j in js]),
        "mrrLenient": _mean([1 / j.rank_lenient if j.rank_lenient else 0.0 for j in js]),
        "medianRank": _median(strict_ranks),
        "medianRankLenient": _median(lenient_ranks),
        "precision": _mean([j.precision for j in js]),
        "zeroItems": sum(j.items == 0 for j in js),
        "alwaysTokens": _mean([j.always_tokens for j in js]),
        "meanItems": _mean([j.items for j in js]),
        "meanTokens": _mean(tokens),
        "p95Tokens": _p95(tokens),
    }


def _unanswerable(rows: Sequence[Row]) -> dict[str, Any]:
    js = [r.judgement for r in rows]
    return {
        "n": len(js),
        "meanTokens": _mean([j.tokens for j in js]),
        "injectionRate": _mean([j.items > 0 for j in js]),
        "meanItems": _mean([j.items for j in js]),
        "alwaysTokens": _mean([j.always_tokens for j in js]),
    }


def summarise(rows: Sequence[Row]) -> dict[str, Any]:
    """The README's report for one group of questions (one repository, or all)."""
    by_kind = {k: [r for r in rows if r.kind == k] for k in ("answerable", "no-answer", "greeting")}
    framing = [r.framing for r in rows]
    return {
        "answerable": _answerable(by_kind["answerable"]),
        "noAnswer": _unanswerable(by_kind["no-answer"]),
        "greeting": _unanswerable(by_kind["greeting"]),
        "framing": {"meanTokens": _mean(framing), "maxTokens": max(framing, default=None)},
    }


def themes_of(note: str) -> list[str]:
    text = note.lower()
    return [name for name, words in THEMES if any(w in text for w in words)]


def _hits(rows: Sequence[Row]) -> dict[str, Any]:
    return {
        "n": len(rows),
        "strict": _mean([r.judgement.strict for r in rows]),
        "lenient": _mean([r.judgement.lenient for r in rows]),
    }


def by_note(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Hit rates of the answerable questions grouped by their exact `note` text."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        if row.kind == "answerable":
            groups.setdefault(row.note or "(no note)", []).append(row)
    return {note: _hits(group) for note, group in sorted(groups.items())}


def by_theme(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Hit rates of the answerable questions grouped by `THEMES` (from the note text)."""
    answerable = [r for r in rows if r.kind == "answerable"]
    out = {}
    for name, _ in THEMES:
        group = [r for r in answerable if name in themes_of(r.note)]
        if group:
            out[name] = _hits(group)
    return out
