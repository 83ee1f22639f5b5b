"""The reference judge (design §14): did the assistant's reply use an injected memory? By meaning
and by rare shared terms, so a paraphrase counts ("persisted in Postgres, reached through the
ORM" uses "Store orders in PostgreSQL 16 through SQLAlchemy"); no LLM, no second model.

Each reply sentence is embedded once (one batch with the items' texts that have no stored vector
of the same text, the daemon's own model); per item, `FEATURES`:

- `cosine`: the best cosine of any reply sentence with the item;
- `lift`: how far that stands above the median item's (the reply is about this one);
- `rare`: the share of the item's rare words (by weight) the reply holds;
- `rare_sentence`: the best share of one reply sentence's rare words the item holds (the
  sentence says what the item says);
- `jaccard`: the old word-set Jaccard of the item and the whole reply.

A word's weight is its background rarity in English (`rarity.background`: names and identifiers
are fully rare), times how much it tells the injected items apart (its IDF among them, 0..1): a
word every item holds (the project's name, a speaker's) tells nothing. A logistic model over the
features gives the score; the item is referenced at or above `threshold`. Weights and threshold
are data (`[judge]` in defaults.toml), fitted on LoCoMo's development conversations by `nous eval
judge`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from nous.context import dedup, rarity, relevance
from nous.memory.embedder import Vector
from nous.text import words

FEATURES = ("cosine", "lift", "rare", "rare_sentence", "jaccard")
MAX_SENTENCES = 48
"""A longer reply is cut into this many runs of consecutive sentences (one embedding each)."""
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CODE = re.compile(r"```.*?```", re.S)


def sentences(text: str) -> list[str]:
    """The reply's sentences (and lines), code blocks as they are; at most `MAX_SENTENCES`."""
    out: list[str] = []
    last = 0
    for block in _CODE.finditer(text):
        out += _prose(text[last : block.start()])
        out.append(block.group(0))
        last = block.end()
    out += _prose(text[last:])
    out = [s for s in out if re.search(r"\w\w", s)]
    if len(out) > MAX_SENTENCES:
        size = math.ceil(len(out) / MAX_SENTENCES)
        out = [" ".join(out[i : i + size]) for i in range(0, len(out), size)]
    return out


def _prose(text: str) -> list[str]:
    return [s.strip(" \t-*>#") for s in _SENTENCE.split(text) if s.strip()]


def weights(text: str) -> dict[str, float]:
    """{stem: background rarity} of the text's content words (a stem takes its rarest word)."""
    out: dict[str, float] = {}
    for word in words.content_words(text):
        stem = words.stem(word)
        out[stem] = max(out.get(stem, 0.0), rarity.background(word))
    return out


PREFIX = 5
"""Two words the one of which begins the other, the shorter of at least this many letters, are
the same term ("postgres" and "postgresql", "async" and "asyncpg", "config" and
"configuration")."""


def _holds(others: frozenset[str] | set[str], stem: str) -> bool:
    if stem in others:
        return True
    if len(stem) < PREFIX:
        return False
    return any(len(o) >= PREFIX and (o.startswith(stem) or stem.startswith(o)) for o in others)


def _share(part: Mapping[str, float], others: frozenset[str] | set[str]) -> float:
    """The weighted share of `part`'s stems that `others` holds."""
    total = sum(part.values())
    if total <= 0:
        return 0.0
    return sum(w for s, w in part.items() if _holds(others, s)) / total


@dataclass(frozen=True)
class Verdict:
    referenced: bool
    score: float
    """The model's probability that the reply used the item (0..1)."""
    features: tuple[float, ...]


def features(
    reply: str,
    items: Sequence[str],
    reply_vectors: npt.NDArray[np.float32],
    item_vectors: npt.NDArray[np.float32],
    parts: Sequence[str],
) -> list[tuple[float, ...]]:
    """`FEATURES` of each item against the reply; `parts` are the reply's `sentences` and
    `reply_vectors` their embeddings, `item_vectors` the items' (rows, L2-normalised)."""
    if not items:
        return []
    item_weights = [weights(t) for t in items]
    df: dict[str, int] = {}
    for w in item_weights:
        for s in w:
            df[s] = df.get(s, 0) + 1
    n = len(items)

    def telling(s: str) -> float:  # 1 for a word one item holds, 0 for one all items hold
        return math.log(n / df.get(s, 1)) / math.log(n) if n > 1 else 1.0

    item_weights = [{s: w * telling(s) for s, w in iw.items()} for iw in item_weights]
    reply_stems = relevance.stems(reply)
    reply_words = dedup.words(reply)
    part_weights = [{s: w * telling(s) for s, w in weights(p).items()} for p in parts]
    cosines = item_vectors @ reply_vectors.T if len(parts) else np.zeros((n, 1), dtype=np.float32)
    best = np.maximum(cosines.max(axis=1), 0.0)
    middle = float(np.median(best))
    out: list[tuple[float, ...]] = []
    for i, text in enumerate(items):
        held = set(item_weights[i])
        out.append((
            float(best[i]),
            float(best[i]) - middle,
            _share(item_weights[i], reply_stems),
            max((_share(pw, held) for pw in part_weights), default=0.0),
            dedup.jaccard(dedup.words(text), reply_words),
        ))  # fmt: skip
    return out


def probability(values: Sequence[float], model: Mapping[str, float]) -> float:
    return relevance.logistic(FEATURES, values, model)


def judge(
    embed_many: Callable[[Sequence[str]], npt.NDArray[np.float32]],
    reply: str,
    items: Sequence[str],
    model: Mapping[str, float],
    threshold: float,
    known: Mapping[int, Vector] | None = None,
) -> list[Verdict]:
    """One verdict per item text. The reply's sentences and the items are embedded in one
    pass; `known` holds the vectors the caller has already (by item index: a memory whose stored
    vector is of exactly the injected text), which are not embedded again."""
    parts = sentences(reply)
    if not items:
        return []
    known = known or {}
    todo = [i for i in range(len(items)) if i not in known]
    vectors = embed_many([*parts, *(items[i] for i in todo)])  # L2-normalised rows
    item_vectors = np.empty((len(items), vectors.shape[1]), dtype=np.float32)
    for at, i in enumerate(todo):
        item_vectors[i] = vectors[len(parts) + at]
    for i, vector in known.items():
        item_vectors[i] = vector
    out = []
    for row in features(reply, items, vectors[: len(parts)], item_vectors, parts):
        score = probability(row, model)
        out.append(Verdict(score >= threshold, round(score, 4), row))
    return out
