"""Fusion variants for the `nous` ranking, compared on the development split of both datasets.

For every query the full dense list (cosine of every memory) and the full BM25 list (every
match) are taken from the store once; each variant is then a pure function of those two lists,
so a grid costs little beyond one pass over the data. `rrf k=60 d=100` (plain reciprocal-rank
fusion) is the reference every gain is measured against; `blend (pipeline …)` is
`context.search.blend` with the shipped defaults, which this comparison chose (`wsum max a=0.6
d=100`).
"""

from __future__ import annotations

import math
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nous.context import config as configs
from nous.context import search
from nous.evaluation import locomo, metrics, scifact
from nous.evaluation.data import LOCOMO_SPLITS, Conversation, SciFact
from nous.evaluation.harness import DEPTH, CachingEmbedder, progress
from nous.memory.embedder import Embedder
from nous.memory.store import MemoryStore
from nous.text.tokens import TokenCounter

Scored = list[tuple[str, float]]
Variant = Callable[["Lists"], list[str]]
BASELINE = "rrf k=60 d=100"
KEEP = 300


@dataclass
class Lists:
    dense: Scored
    """The top memories by cosine, best first."""
    bm25: Scored
    """The top FTS5 matches by BM25 score (higher is better), best first."""
    cosine: dict[str, float]
    lexical: dict[str, float]


def collect(store: MemoryStore, query: str, vector: Any, scopes: Sequence[str]) -> Lists:
    """Both full rankings, kept to the top `KEEP` each, with the exact cosine and BM25 of every
    memory in either kept list (the deepest variant reads 200)."""
    dense = store.vector_search(vector, store.vector_count() or 1, scopes)
    bm25 = store.text_search(query, 1_000_000, scopes)
    cos_all, lex_all = dict(dense), dict(bm25)
    dense, bm25 = dense[:KEEP], bm25[:KEEP]
    ids = {i for i, _ in dense} | {i for i, _ in bm25}
    return Lists(
        dense, bm25, {i: cos_all.get(i, 0.0) for i in ids}, {i: lex_all.get(i, 0.0) for i in ids}
    )


# -- the variants -------------------------------------------------------------------------------


def rrf(k: int, depth: int, w_dense: float = 1.0, w_bm25: float = 1.0) -> Variant:
    def fuse(lists: Lists) -> list[str]:
        dense, bm25 = lists.dense, lists.bm25
        if w_dense == w_bm25 == 1.0:
            return [i for i, _ in search.fuse(dense[:depth], bm25[:depth], k=k)][:DEPTH]
        scores: dict[str, float] = {}
        for weight, ranking in ((w_dense, dense[:depth]), (w_bm25, bm25[:depth])):
            for rank, (memory_id, _) in enumerate(ranking, start=1):
                scores[memory_id] = scores.get(memory_id, 0.0) + weight / (k + rank)
        return [i for i, _ in sorted(scores.items(), key=lambda p: -p[1])][:DEPTH]

    return fuse


def _norm(values: dict[str, float], how: str) -> dict[str, float]:
    if not values:
        return values
    if how == "max":
        top = max(values.values()) or 1.0
        return {i: v / top for i, v in values.items()}
    if how == "minmax":
        lo, hi = min(values.values()), max(values.values())
        span = (hi - lo) or 1.0
        return {i: (v - lo) / span for i, v in values.items()}
    if how == "z":
        mu = sum(values.values()) / len(values)
        sd = math.sqrt(sum((v - mu) ** 2 for v in values.values()) / len(values)) or 1.0
        return {i: (v - mu) / sd for i, v in values.items()}
    raise ValueError(how)


def weighted(alpha: float, depth: int, how: str, exact: bool) -> Variant:
    """alpha · cosine' + (1 − alpha) · BM25' over the union of both top-`depth` lists.

    `how`: `max` = raw cosine (clipped at 0) and BM25 / the best BM25 among the candidates (the
    pipeline's blend); `minmax` / `z` normalise both over the candidates. With `exact`, a
    candidate outside the BM25 top-`depth` keeps its real BM25 (as a second FTS lookup would
    give it), else it scores 0 there; the cosine is always exact (the index has every vector).
    """

    def fuse(lists: Lists) -> list[str]:
        dense, bm25 = lists.dense, lists.bm25
        ids = list(dict.fromkeys([i for i, _ in dense[:depth]] + [i for i, _ in bm25[:depth]]))
        cos_all = lists.cosine
        lex_all = lists.lexical if exact else dict(bm25[:depth])
        cos = {i: cos_all.get(i, 0.0) for i in ids}
        lex = {i: lex_all.get(i, 0.0) for i in ids}
        if how == "max":
            cos = {i: max(0.0, v) for i, v in cos.items()}
            top = max(lex.values(), default=0.0) or 1.0
            lex = {i: v / top for i, v in lex.items()}
        else:
            cos, lex = _norm(cos, how), _norm(lex, how)
        scores = {i: alpha * cos[i] + (1 - alpha) * lex[i] for i in ids}
        return [i for i, _ in sorted(scores.items(), key=lambda p: -p[1])][:DEPTH]

    return fuse


def variants() -> dict[str, Variant]:
    out: dict[str, Variant] = {
        "dense": lambda lists: [i for i, _ in lists.dense[:DEPTH]],
        "bm25": lambda lists: [i for i, _ in lists.bm25[:DEPTH]],
    }
    for k in (5, 10, 20, 30, 60, 100):
        for depth in (50, 100, 200):
            out[f"rrf k={k} d={depth}"] = rrf(k, depth)
    for k in (10, 60):
        for wd in (0.5, 0.7):
            out[f"rrf k={k} d=100 wdense={wd}"] = rrf(k, 100, w_dense=wd)
    scoring = configs.defaults().scoring
    share, depth = scoring.semantic_cosine_share, scoring.candidates
    out[f"blend (pipeline: share {share}, max, d={depth})"] = weighted(
        share, depth, "max", exact=False
    )
    for alpha in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        for how in ("max", "minmax", "z"):
            for depth, exact in ((60, False), (100, False), (100, True), (200, True)):
                tag = " exact" if exact else ""
                out[f"wsum {how} a={alpha} d={depth}{tag}"] = weighted(alpha, depth, how, exact)
    return out


def _score(
    all_lists: Sequence[Lists],
    golds: Sequence[Any],
    scorer: Callable[[list[str], Any], dict[str, float]],
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, variant in variants().items():
        sums: dict[str, float] = {}
        for item, gold in zip(all_lists, golds, strict=True):
            for metric, value in scorer(variant(item), gold).items():
                sums[metric] = sums.get(metric, 0.0) + value
        out[name] = {m: v / max(1, len(all_lists)) for m, v in sums.items()}
    return out


def compare(
    conversations: Sequence[Conversation],
    scifact_data: SciFact,
    embedder: Embedder,
    counter: TokenCounter,
    fmt: str,
    limit: int | None = None,
    corpus_sample: int | None = None,
    cache: Path | None = None,
) -> dict[str, Any]:
    caching = CachingEmbedder(embedder)
    started = time.perf_counter()
    # LoCoMo dev
    loco_lists: list[Lists] = []
    loco_golds: list[tuple[dict[str, list[str]], list[str]]] = []
    remaining = limit
    for conv in conversations:
        if conv.index not in LOCOMO_SPLITS["dev"] or (remaining is not None and remaining <= 0):
            continue
        questions = conv.questions if remaining is None else conv.questions[:remaining]
        if remaining is not None:
            remaining -= len(questions)
        with tempfile.TemporaryDirectory(prefix="nous-eval-") as tmp:
            store = MemoryStore(Path(tmp) / "locomo.db", caching, counter)
            try:
                results = store.remember_many(locomo.drafts(conv, fmt))
                store.wait_embedded()  # searched at once: every vector must be in
                mapping: dict[str, list[str]] = {}
                for turn, result in zip(conv.turns, results, strict=True):
                    mapping.setdefault(result.memory.id, []).append(turn.dia_id)
                for q in questions:
                    vector = caching.embed(q.question)
                    loco_lists.append(collect(store, q.question, vector, locomo.SCOPES))
                    loco_golds.append((mapping, q.evidence))
            finally:
                store.close()
        progress(f"fusion: locomo {conv.sample_id} done, {time.perf_counter() - started:.0f}s")
    loco_seconds = time.perf_counter() - started

    def loco_scorer(ranking: list[str], gold: Any) -> dict[str, float]:
        mapping, evidence = gold
        return {f"R@{k}": metrics.recall_at(ranking, mapping, evidence, k) for k in locomo.KS}

    loco = _score(loco_lists, loco_golds, loco_scorer)
    # SciFact train queries
    t0 = time.perf_counter()
    query_ids, docs = scifact.select(scifact_data, limit, corpus_sample)
    path, doc_map, _ = scifact.cached_store(docs, caching, counter, cache)
    sf_lists: list[Lists] = []
    sf_golds: list[dict[str, int]] = []
    store = MemoryStore(path, caching, counter)
    try:
        for qid in query_ids:
            query = scifact_data.queries[qid]
            sf_lists.append(collect(store, query, caching.embed(query), scifact.SCOPES))
            sf_golds.append(scifact_data.qrels[qid])
    finally:
        store.close()
        shutil.rmtree(path.parent, ignore_errors=True)

    def sf_scorer(ranking: list[str], relevant: Any) -> dict[str, float]:
        docs_ranked = metrics.units(ranking, doc_map)
        return {
            "nDCG@10": metrics.ndcg_at(docs_ranked, relevant, 10),
            "R@100": metrics.doc_recall_at(docs_ranked, relevant, 100),
        }

    sf = _score(sf_lists, sf_golds, sf_scorer)
    progress(f"fusion: scifact done, {time.perf_counter() - t0:.0f}s")
    return _summary(
        loco, sf, len(loco_lists), len(sf_lists), fmt, loco_seconds, time.perf_counter() - t0
    )


def _summary(
    loco: dict[str, dict[str, float]],
    sf: dict[str, dict[str, float]],
    n_loco: int,
    n_sf: int,
    fmt: str,
    loco_seconds: float,
    sf_seconds: float,
) -> dict[str, Any]:
    base_l, base_s = loco[BASELINE]["R@10"], sf[BASELINE]["nDCG@10"]
    rows: list[dict[str, Any]] = []
    for name in loco:
        gain_l = loco[name]["R@10"] - base_l
        gain_s = sf[name]["nDCG@10"] - base_s
        rows.append(
            {
                "variant": name,
                "locomo": loco[name],
                "scifact": sf[name],
                # relative gains over today's RRF, averaged over the two headline metrics
                "gain": (gain_l / base_l + gain_s / base_s) / 2 if base_l and base_s else 0.0,
            }
        )
    rows.sort(key=lambda r: -r["gain"])
    singles = {n: (loco[n]["R@10"], sf[n]["nDCG@10"]) for n in ("dense", "bm25")}
    beats_both = [
        r["variant"]
        for r in rows
        if r["variant"] not in singles
        and all(
            r["locomo"]["R@10"] > v[0] and r["scifact"]["nDCG@10"] > v[1] for v in singles.values()
        )
    ]
    return {
        "dataset": "fusion",
        "split": "dev",
        "format": fmt,
        "locomoQuestions": n_loco,
        "scifactQueries": n_sf,
        "baseline": BASELINE,
        "ranking": "by the mean relative gain over the baseline of LoCoMo R@10 and SciFact nDCG@10",
        "variants": rows,
        "beatBothSinglesOnBoth": beats_both,
        "winner": rows[0]["variant"] if rows else None,
        "timing": {"locomoSeconds": loco_seconds, "scifactSeconds": sf_seconds},
    }
