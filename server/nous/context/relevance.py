"""Query relevance: what the gate (design §2.5) admits on, and what the extract ranks a record's
units by. The gate model is a logistic regression over `FEATURES`, fitted leave-one-repository-out
on the repository development set (`scripts/fit-gate`): its output is the probability that the
memory holds the answer, calibrated (docs/benchmarks.md has the reliability table), so one floor
serves every store. Its words are `text/words.py`'s `content_words`, stemmed; their weights
blend the store's IDF with background English rarity (`rarity.py`), so a store of five memories
still weighs its words sensibly.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from nous.context import rarity
from nous.text import words

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
    "everyone": ("everybody",),  # plain English spelt two ways ("--everyone" / "for everybody")
    "someone": ("somebody",),
    "anyone": ("anybody",),
}
"""Developer shorthand a document and a question may spell differently. The search finds either
spelling (`expand` appends the other to the query); the relevance features read every spelling
as the shorthand on both sides (`stems`, `query`: "pull requests" is "prs", "configuration" is
"config"), so a document that says "pull requests" holds the question's "PR", and a question
that says "pull request" is not weighed twice, once for its words and once more for an appended
"pr" that no document spelling it out holds."""
_LONG_FORMS = {" ".join(v): k for k, v in SYNONYMS.items()}


def expand(text: str) -> str:
    """`text` with each shorthand's long form and each long form's shorthand appended."""
    lowered = text.lower()
    extra = [" ".join(SYNONYMS[w]) for w in words.letters(lowered) if w in SYNONYMS]
    extra += [short for long, short in _LONG_FORMS.items() if long in lowered]
    return f"{text} {' '.join(extra)}" if extra else text


@functools.lru_cache(maxsize=16_384)
def stems(text: str) -> frozenset[str]:
    """The stems of `words.content_words(text)` (a compound's are computed once per process: the
    vocabulary is small, the texts many)."""
    return frozenset(chain.from_iterable(map(_compound_stems, words.compounds(_phrases(text)))))


ECHO_WORDS = 3
"""A text that holds every content word of a question and at most this many more says the
question again: it answers nothing (`says_again`)."""


def says_again(asked: frozenset[str], text: str) -> bool:
    """`text` holds all of `asked` (a question's stems) and at most ECHO_WORDS more."""
    said = stems(text)
    return bool(asked) and asked <= said and len(said - asked) <= ECHO_WORDS


@functools.lru_cache(maxsize=65_536)
def _compound_stems(compound: str) -> tuple[str, ...]:
    return tuple(_canonical(words.stem(p)) for p in words.pieces(compound) if words.is_content(p))


_PHRASE_SHORT = {" ".join(v): k for k, v in SYNONYMS.items() if len(v) > 1}
_PHRASES = re.compile(
    "|".join(
        r"\b" + r"[\s-]+".join(map(re.escape, long.split())) + r"\b" for long in _PHRASE_SHORT
    ),
    re.IGNORECASE,
)


_PHRASE_FIRST = frozenset(long.split()[0] for long in _PHRASE_SHORT)


def _phrases(text: str) -> str:
    """`text` with each multi-word long form said as its shorthand ("pull requests" → "prs").
    Most texts name no phrase's first word: a substring test spares them the regular expression
    (1.8 µs against 29 µs on a 2,000-character record)."""
    folded = text.lower()
    if not any(first in folded for first in _PHRASE_FIRST):
        return text
    return _PHRASES.sub(lambda m: _PHRASE_SHORT[re.sub(r"[\s-]+", " ", m[0].lower())], text)


@functools.cache
def _shorthands() -> dict[str, str]:
    """{stem of a one-word long form: its shorthand's stem} ("configur" → "config")."""
    return {words.stem(v[0]): words.stem(k) for k, v in SYNONYMS.items() if len(v) == 1}


def _canonical(stem: str) -> str:
    """The stem every spelling of `stem`'s concept is read as (`SYNONYMS`)."""
    return _shorthands().get(stem, stem)


@dataclass(frozen=True)
class Query:
    """A query's content words (stemmed) with their weights (`rarity.blended`: the store's IDF
    blended with background English rarity); `unseen` are the words no memory holds."""

    weights: dict[str, float]
    unseen: frozenset[str] = frozenset()

    @functools.cached_property
    def total(self) -> float:
        return sum(self.weights.values())

    @functools.cached_property
    def rarest(self) -> str | None:
        """The query's rarest word that the store knows (None when it knows none)."""
        known = {t: w for t, w in self.weights.items() if t not in self.unseen}
        return max(known, key=lambda t: known[t]) if known else None

    def coverage(self, text: str) -> float:
        """Weighted share of the query's words that `text` holds (0..1)."""
        return self.covered(stems(text))

    def covered(self, held: frozenset[str]) -> float:
        """Weighted share of the query's words among the stems `held` (0..1)."""
        if not self.weights or self.total <= 0:
            return 0.0
        return sum(w for t, w in self.weights.items() if t in held) / self.total

    def held(self, text: str) -> frozenset[str]:
        """The query's words that `text` holds."""
        return frozenset(t for t in stems(text) if t in self.weights)

    def overlap(self, text: str) -> float:
        """Weight of the query's words in `text` (not normalised: ranks units)."""
        held = stems(text)
        return sum(w for t, w in self.weights.items() if t in held)


STORE_HALF = 100.0
"""A store of this many memories weighs its own IDF and the background rarity equally
(`gate.rarity_store_half` in defaults.toml)."""


ALTERNATIVE_WEIGHT = 0.25
"""The weight left to the words of a proposal's alternative ("… to Postgres?"): the decision
that chose otherwise is about the subject and may never name it (`intent.alternative`). The
repositories' questions cannot choose it: 0, 0.25, 0.5 and 1 give the same hits on both splits
(a handful of proposals, answered either way); 0.25 puts ADR 1 first for `scripts/run`'s
question, 0.5 does not."""


def query(
    text: str, frequencies: dict[str, int], total: int, store_half: float = STORE_HALF,
    alternative: Sequence[str] = (),
) -> Query:  # fmt: skip
    """`frequencies` maps each raw query word to the number of the store's `total` memories
    holding it; the words of `alternative` weigh ALTERNATIVE_WEIGHT of their rarity."""
    weights: dict[str, float] = {}
    seen: set[str] = set()
    muted = {
        _canonical(words.stem(w)) for w in words.content_words(_phrases(" ".join(alternative)))
    }
    for word in dict.fromkeys(words.content_words(_phrases(text))):
        # counted a moment apart (or from a cache), a word's count can pass the total: clamp
        df = min(max(0, frequencies.get(word, 0)), total)
        key = _canonical(words.stem(word))
        weight = rarity.blended(word, df, total, store_half)
        if key in muted:
            weight *= ALTERNATIVE_WEIGHT
        weights[key] = max(weights.get(key, 0.0), weight)
        if df > 0:
            seen.add(key)
    return Query(weights, frozenset(weights) - seen)


def without(text: str, drop: Sequence[str]) -> str:
    """`text` without the words of `drop` (compared stemmed)."""
    gone = {words.stem(w) for w in words.content_words(" ".join(drop))}
    return " ".join(w for w in re.findall(r"\S+", text) if not (stems(w) and stems(w) <= gone))


def query_words(text: str) -> list[str]:
    return list(dict.fromkeys(words.content_words(text)))


FEATURES = ("cosine", "coverage", "heading", "unit", "rarest", "lexical", "closeness", "asked")
"""What the gate model reads of a (query, memory) pair, each in 0..1:
- cosine of the embeddings;
- weighted coverage of the query's words by the whole text; by the record's heading path alone;
  by its best single unit (one sentence, item or code line: is the answer in one place?);
- whether it holds the query's rarest word that the store knows;
- the search's BM25 relative to the best candidate's, damped when even the best candidate's
  cosine is below `LEXICAL_ANCHOR`;
- the cosine's closeness to the best candidate's, or to `CLOSENESS_ANCHOR` when the best is
  below it (1 − the gap).
  Both relative features alone give the best of five memories 1.0 whatever it says: anchored,
  a poor best candidate is not the answer just for being the best there is;
- whether the memory is of the kind the question asks for (a decision for "why did we…", a
  constraint for "can I…").
Nothing counts the query's words the store never saw: new library names and placeholders are
normal in a question. Tried and left out by leave-one-repository-out log loss (docs/benchmarks.md):
BM25 relative to the best candidate times that candidate's coverage (worse on full and mini
stores), and coverage without the query's rarest word (no gain)."""


CLOSENESS_ANCHOR = 0.5
LEXICAL_ANCHOR = 0.3
"""Chosen by leave-one-repository-out log loss over 0.3–0.7 and 0.2–0.4 (docs/benchmarks.md)."""


@dataclass(frozen=True)
class _Read:
    """What `features` reads of a text, worked out once per text (`_read`): its stems, its
    heading's (None without one), each unit's with its lead (tuples: a few words each, and a
    third of a set's memory), and all the units' together."""

    held: frozenset[str]
    heading: frozenset[str] | None
    units: tuple[tuple[str, ...], ...]
    in_units: frozenset[str]


@functools.lru_cache(maxsize=2048)
def _read(content: str) -> _Read:
    from nous.text.markdown import units

    heading = content[2:].split("\n", 1)[0] if content.startswith("# ") else ""
    # an item whole, as the gate model was fitted: its "one place" (`unit`) is the whole rule
    found = [stems(f"{u.lead} {u.text}") for u in units(content, long_items=False)]
    held = stems(content)
    in_units = frozenset().union(*found)
    return _Read(
        held, stems(heading) if heading else None, tuple(map(tuple, found)),
        held if in_units == held else in_units,  # most often the same words: one set
    )  # fmt: skip


def features(
    query: Query, content: str, cosine: float, lexical: float, best_cosine: float = 0.0,
    asked: bool = False,
) -> list[float]:  # fmt: skip
    read = _read(content)
    total = query.total if query.total > 0 else 1.0
    # a unit's overlap (`Query.overlap`), summed over the query's words in the same order
    words = [(t, w) for t, w in query.weights.items() if t in read.in_units]
    best_unit = max((sum(w for t, w in words if t in u) for u in read.units), default=0.0)
    rarest = query.rarest
    return [
        max(0.0, cosine),
        query.covered(read.held),
        query.covered(read.heading) if read.heading is not None else 0.0,
        min(1.0, best_unit / total),
        1.0 if rarest is not None and rarest in read.held else 0.0,
        max(0.0, min(1.0, lexical)) * max(0.0, min(1.0, best_cosine / LEXICAL_ANCHOR)),
        max(0.0, 1.0 - max(0.0, max(best_cosine, CLOSENESS_ANCHOR) - cosine)),
        1.0 if asked else 0.0,
    ]


def asked_kinds(dominant_hint: str | None, permission: bool) -> frozenset[str]:
    """The memory kinds a question asks for: its dominant hint's, and constraints when it asks
    whether it may do a thing."""
    kinds = {dominant_hint} if dominant_hint else set()
    if dominant_hint == "fact":
        kinds.add("convention")
    if permission:
        kinds.add("constraint")
    return frozenset(k for k in kinds if k)


def probability(values: list[float], weights: dict[str, float]) -> float:
    """The gate model: a logistic regression over FEATURES (weights are data, fitted on the
    development sets by `scripts/fit-gate`)."""
    return logistic(FEATURES, values, weights)


def logistic(names: Sequence[str], values: Sequence[float], weights: Mapping[str, float]) -> float:
    """A fitted logistic model's probability: `weights` by feature name, and "bias"."""
    z = weights.get("bias", 0.0) + sum(
        weights.get(n, 0.0) * v for n, v in zip(names, values, strict=True)
    )
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
