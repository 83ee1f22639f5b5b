"""Query relevance on an absolute scale: what the gate (SPEC §2.5) admits on, and what the
extract ranks a record's units by.

`relevance = share·cosine + (1 − share)·coverage`, where coverage is the IDF-weighted share of
the query's content words that the memory's text holds. Unlike BM25 divided by the best BM25 of
the candidates (which gives the best candidate 1.0 whatever the query), both terms are absolute,
so a question nothing answers scores low everywhere and the floor can refuse it.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from itertools import chain

_WORD = re.compile(r"[a-z0-9][a-z0-9_]*(?:[.:-][a-z0-9_]+)*")
STOP = frozenset(
    """a an and are as at be been being but by can could did do does doing done for from had has
    have having how i if in into is it its just me my no not of on or our ours out over own so
    some such than that the their them then there these they this those through to too under up
    very was we were what when where which while who whom why will with would you your yours
    should shall may might must ok okay about also any all each more most other only same here
    get got use using used want need make like new one two way thing things lot really still now
    let lets please tell know see show give take just""".split()
)
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "es", "ed", "ly", "s")


@functools.lru_cache(maxsize=16_384)
def stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word


SYNONYMS = {
    "pr": ("pull", "request"),
    "prs": ("pull", "requests"),
    "repo": ("repository",),
    "config": ("configuration",),
    "deps": ("dependencies",),
    "env": ("environment",),
    "docs": ("documentation",),
    "auth": ("authentication",),
    "db": ("database",),
}
"""Developer shorthand a document and a question may spell differently (both directions)."""
_LONG_FORMS = {" ".join(v): k for k, v in SYNONYMS.items()}


def expand(text: str) -> str:
    """`text` with each shorthand's long form and each long form's shorthand appended."""
    lowered = text.lower()
    extra = [" ".join(SYNONYMS[w]) for w in re.findall(r"[a-z]+", lowered) if w in SYNONYMS]
    extra += [short for long, short in _LONG_FORMS.items() if long in lowered]
    return f"{text} {' '.join(extra)}" if extra else text


def words(text: str) -> list[str]:
    """Lowercase content words of `text` (identifiers split at `_`/`.`/`:`/`-` too)."""
    out: list[str] = []
    for token in _WORD.findall(text.lower()):
        parts = [token, *_JOINERS.split(token)] if _JOINER.search(token) else [token]
        out += [p for p in parts if p and p not in STOP and len(p) > 1]
    return out


_JOINER = re.compile(r"[._:-]")
_JOINERS = re.compile(r"[._:-]+")


@functools.lru_cache(maxsize=16_384)
def stems(text: str) -> frozenset[str]:
    """The stems of `words(text)` (a token's are computed once per process: the vocabulary is
    small, the texts many)."""
    return frozenset(chain.from_iterable(map(_token_stems, _WORD.findall(text.lower()))))


@functools.lru_cache(maxsize=65_536)
def _token_stems(token: str) -> tuple[str, ...]:
    parts = [token, *_JOINERS.split(token)] if _JOINER.search(token) else [token]
    return tuple(stem(p) for p in parts if p and p not in STOP and len(p) > 1)


@dataclass(frozen=True)
class Query:
    """A query's content words (stemmed) with their IDF weights; `unknown` is the weight of a
    word no memory holds."""

    weights: dict[str, float]
    unknown: float = math.inf

    @property
    def total(self) -> float:
        return sum(self.weights.values())

    def coverage(self, text: str) -> float:
        """IDF-weighted share of the query's words that `text` holds (0..1)."""
        if not self.weights or self.total <= 0:
            return 0.0
        held = stems(text)
        return sum(w for t, w in self.weights.items() if t in held) / self.total

    def held(self, text: str) -> frozenset[str]:
        """The query's words that `text` holds."""
        return frozenset(t for t in stems(text) if t in self.weights)

    def overlap(self, text: str) -> float:
        """IDF weight of the query's words in `text` (not normalised: ranks units)."""
        held = stems(text)
        return sum(w for t, w in self.weights.items() if t in held)


def query(text: str, frequencies: dict[str, int], total: int) -> Query:
    """`frequencies` maps each raw query word to the number of memories holding it."""
    weights: dict[str, float] = {}
    unknown = math.log(1 + (total + 0.5) / 0.5) if total else math.inf
    for word in dict.fromkeys(words(text)):
        # counted a moment apart (or from a cache), a word's count can pass the total: clamp,
        # so every weight stays positive
        df = min(max(0, frequencies.get(word, 0)), total)
        idf = math.log(1 + (total - df + 0.5) / (df + 0.5)) if total > 0 else 1.0
        key = stem(word)
        weights[key] = max(weights.get(key, 0.0), idf)
    return Query(weights, unknown)


def query_words(text: str) -> list[str]:
    return list(dict.fromkeys(words(text)))


FEATURES = ("cosine", "coverage", "heading", "unit", "rarest", "lexical", "unknown")
"""What the gate model reads of a (query, memory) pair, each in 0..1:
cosine of the embeddings; IDF coverage of the query's words by the whole text; by the record's
heading path alone; by its best single unit (one sentence, item or code line: is the answer in
one place?); whether it holds the query's rarest word that the store knows; the search's BM25
relative to the best candidate's; and, for the query as a whole, the share of its weight in words
no memory holds ("ProGuard", "Helm": a question about what memory never saw)."""


def unknown_share(query: Query) -> float:
    """The share of the query's IDF weight in words no memory holds."""
    if not query.weights or query.total <= 0:
        return 0.0
    return sum(w for w in query.weights.values() if w >= query.unknown) / query.total


def features(
    query: Query, content: str, cosine: float, lexical: float, unknown: float = 0.0
) -> list[float]:
    from nous.memory.markdown import units

    heading = content[2:].split("\n", 1)[0] if content.startswith("# ") else ""
    total = query.total if query.total > 0 else 1.0
    best_unit = max((query.overlap(f"{u.lead} {u.text}") for u in units(content)), default=0.0)
    known = {t: w for t, w in query.weights.items() if w < query.unknown}
    rarest = max(known, key=lambda t: known[t]) if known else None
    return [
        max(0.0, cosine),
        query.coverage(content),
        query.coverage(heading) if heading else 0.0,
        min(1.0, best_unit / total),
        1.0 if rarest is not None and rarest in stems(content) else 0.0,
        max(0.0, min(1.0, lexical)),
        unknown,
    ]


def probability(values: list[float], weights: dict[str, float]) -> float:
    """The gate model: a logistic regression over FEATURES (weights are data, fitted on the
    development sets by `scripts/fit-gate`)."""
    z = weights.get("bias", 0.0) + sum(
        weights.get(n, 0.0) * v for n, v in zip(FEATURES, values, strict=True)
    )
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
