"""Hybrid search: vector top-k and FTS5/BM25 fused into one ranking of memory ids.

`ranked` is the retrieval the whole pipeline and the evaluation harness share; the fusion method
is chosen with numbers from the development split (see docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from nous.memory.embedder import Vector
from nous.memory.store import MemoryStore

RRF_K = 60


def fuse(*rankings: Sequence[tuple[str, float]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: sum of 1/(k + rank) over the lists each id appears in."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, (memory_id, _) in enumerate(ranking, start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])


def ranked(
    store: MemoryStore,
    query: str,
    scopes: Sequence[str] | None,
    k: int = 50,
    vector: Vector | None = None,
) -> list[tuple[str, float]]:
    """The fused ranking (id, score) of up to `k` memories for `query` within `scopes`."""
    if vector is None:
        vector = store.embedder.embed(query)
    dense = store.vector_search(vector, k, scopes)
    lexical = store.text_search(query, k, scopes)
    return fuse(dense, lexical)[:k]
