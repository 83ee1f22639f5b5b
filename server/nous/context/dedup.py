"""Dedup (design §2.6): against the conversation window (cosine > 0.85, or word Jaccard > 0.5 when
no embedding is available), among the selected memories, and against instruction-file text the
client already injects."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nous.text.words import split

Matrix = npt.NDArray[np.float32]
SHORTEST = 3
"""Words shorter than this do not count towards a Jaccard: "a", "is", "of" are in every text."""


def words(text: str) -> set[str]:
    """`text`'s distinct words (`text.words.split`) of SHORTEST letters or more."""
    return {w for w in split(text) if len(w) >= SHORTEST}


def jaccard(a: str | set[str], b: str | set[str]) -> float:
    wa = a if isinstance(a, set) else words(a)
    wb = b if isinstance(b, set) else words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def containment(part: str | set[str], whole: str | set[str]) -> float:
    """Share of `part`'s words that appear in `whole`."""
    wp = part if isinstance(part, set) else words(part)
    ww = whole if isinstance(whole, set) else words(whole)
    return len(wp & ww) / len(wp) if wp else 0.0


def redundant_with(
    text: str,
    vector: Matrix | None,
    others: Sequence[str],
    other_vectors: Matrix | None,
    cosine: float,
    jaccard_limit: float,
) -> int | None:
    """Index of the first of `others` this text repeats, or None."""
    if not others:
        return None
    if vector is not None and other_vectors is not None and len(other_vectors):
        sims = other_vectors @ vector
        best = int(np.argmax(sims))
        return best if float(sims[best]) > cosine else None
    mine = words(text)
    for index, other in enumerate(others):
        if jaccard(mine, other) > jaccard_limit:
            return index
    return None


def repeats_instructions(text: str, instructions: Sequence[str], share: float = 0.8) -> bool:
    """True when nearly all of the memory's words are in text the client already injects."""
    mine = words(text)
    return any(containment(mine, block) >= share for block in instructions)
