"""Hybrid search: vector top-k and FTS5/BM25 fused into one ranking of memory ids.

`blend` is the retrieval the whole pipeline and the evaluation harness share (`ranked` is its
ordering); the fusion method was chosen with numbers from the development split (see
docs/benchmarks.md). `fuse` (reciprocal-rank fusion) stays for the comparison.
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


def blend(
    store: MemoryStore,
    query: str,
    vector: Vector,
    scopes: Sequence[str] | None,
    depth: int = 100,
    share: float = 0.6,
) -> tuple[dict[str, float], int]:
    """The hybrid relevance of every candidate: `share`·cosine (clipped at 0, absolute, so a
    weak match stays weak) + (1 − `share`)·BM25 / the best BM25 among the candidates, over the
    union of the vector top-`depth` and the FTS5 top-`depth`. Returns ({id: relevance in 0..1},
    the number of candidates).

    Chosen on the development split over 96 variants (`nous eval fusion`): plain reciprocal-rank
    fusion lost to BM25 alone on LoCoMo (R@10 60.1 vs 65.8), this blend at share 0.6, depth 100
    reaches 69.9 there and nDCG@10 0.737 on SciFact (BM25 0.700, dense 0.660); see
    docs/benchmarks.md.
    """
    cosine, bm25 = signals(store, query, vector, scopes, depth)
    out = {i: share * max(0.0, cosine.get(i, 0.0)) + (1 - share) * bm25.get(i, 0.0) for i in cosine}
    return out, len(out)


def signals(
    store: MemoryStore, query: str, vector: Vector, scopes: Sequence[str] | None, depth: int = 100
) -> tuple[dict[str, float], dict[str, float]]:
    """({id: cosine}, {id: BM25 / the best BM25}) over the union of the vector top-`depth` and
    the FTS5 top-`depth` (every candidate has a cosine; a BM25 only when FTS5 found it)."""
    dense = store.vector_search(vector, depth, scopes)
    lexical = store.text_search(query, depth, scopes) if query.strip() else []
    top_bm25 = max((score for _, score in lexical), default=0.0) or 1.0
    cosine = dict(dense)
    missing = [i for i, _ in lexical if i not in cosine]
    for memory_id, row in store.vectors(missing).items():
        cosine[memory_id] = float(row @ vector)
    return cosine, {i: score / top_bm25 for i, score in lexical}


def ranked(
    store: MemoryStore,
    query: str,
    scopes: Sequence[str] | None,
    k: int = 50,
    vector: Vector | None = None,
    depth: int = 100,
    share: float = 0.6,
) -> list[tuple[str, float]]:
    """Up to `k` (id, relevance) for `query` within `scopes`, best first: the pipeline's hybrid."""
    if vector is None:
        vector = store.embed(query)
    scores, _ = blend(store, query, vector, scopes, max(depth, k), share)
    return sorted(scores.items(), key=lambda pair: -pair[1])[:k]
