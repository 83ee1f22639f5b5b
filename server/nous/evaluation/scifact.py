"""BEIR SciFact: the abstracts as fact memories in one store (built once per model and corpus,
then reused from the cache), the split's queries run through each system; nDCG@10, R@10 and
R@100 with the qrels."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import platformdirs

from nous import assets
from nous.evaluation import metrics
from nous.evaluation.data import SCIFACT_SPLITS, Doc, SciFact
from nous.evaluation.harness import DEPTH, CachingEmbedder, progress, rank
from nous.memory.embedder import Embedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text.tokens import TokenCounter

CACHE_ENV = "NOUS_EVAL_CACHE"
LAYOUT = 1
"""Bump when the way abstracts become drafts changes (part of the cache key)."""
SCOPES = ["universal"]
BATCH = 256


def cache_dir(explicit: Path | None = None) -> Path:
    """`explicit` (`--cache`, else `Settings.eval_cache` from `NOUS_EVAL_CACHE`: the caller's),
    else the user cache dir."""
    if explicit is not None:
        return explicit
    return Path(platformdirs.user_cache_dir("nous")) / "eval"


def content(doc: Doc) -> str:
    return f"{doc.title}\n{doc.text}" if doc.title else doc.text


def drafts(docs: Sequence[Doc]) -> list[Draft]:
    return [
        Draft(kind="fact", content=content(d), scope="universal", source=f"scifact:{d.id}")
        for d in docs
    ]


def _model_sha(embedder: Embedder) -> str:
    try:
        return str(assets.manifest_entry("embedding", embedder.name)["model"]["sha256"])
    except Exception:  # a test embedder has no manifest entry
        return "none"


def cache_key(docs: Sequence[Doc], embedder: Embedder) -> str:
    digest = hashlib.sha256()
    digest.update(f"{LAYOUT}\0{embedder.name}\0{_model_sha(embedder)}\0".encode())
    for d in docs:
        digest.update(f"{d.id}\0{content(d)}\0".encode())
    return digest.hexdigest()[:24]


def build(
    docs: Sequence[Doc], embedder: Embedder, counter: TokenCounter, path: Path
) -> dict[str, list[str]]:
    """Write the corpus into a new store at `path`; memory id → doc ids."""
    store = MemoryStore(path, embedder, counter)
    mapping: dict[str, list[str]] = {}
    try:
        for start in range(0, len(docs), BATCH):
            chunk = docs[start : start + BATCH]
            for doc, result in zip(chunk, store.remember_many(drafts(chunk)), strict=True):
                mapping.setdefault(result.memory.id, []).append(doc.id)
            progress(f"scifact: embedded {start + len(chunk)}/{len(docs)} abstracts")
        store.wait_embedded()  # searched next: every vector must be in
    finally:
        store.close()
    return mapping


def cached_store(
    docs: Sequence[Doc], embedder: Embedder, counter: TokenCounter, cache: Path | None
) -> tuple[Path, dict[str, list[str]], dict[str, Any]]:
    """A private copy of the corpus store (built into the cache when missing), its mapping, and
    how it was obtained. `cache=None` builds in a temp dir and keeps nothing."""
    key = cache_key(docs, embedder)
    work = Path(tempfile.mkdtemp(prefix="nous-eval-"))
    target = work / "scifact.db"
    info: dict[str, Any] = {"key": key, "cached": False, "buildSeconds": None}
    if cache is not None:
        db, meta = cache / f"scifact-{key}.db", cache / f"scifact-{key}.json"
        if db.is_file() and meta.is_file():
            shutil.copyfile(db, target)
            info["cached"] = True
            info["buildSeconds"] = json.loads(meta.read_text())["buildSeconds"]
            return target, json.loads(meta.read_text())["mapping"], info
    t0 = time.perf_counter()
    mapping = build(docs, embedder, counter, target)
    info["buildSeconds"] = time.perf_counter() - t0
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        tmp_db = cache / f".scifact-{key}.db.{os.getpid()}"
        shutil.copyfile(target, tmp_db)
        os.replace(tmp_db, cache / f"scifact-{key}.db")
        tmp_meta = cache / f".scifact-{key}.json.{os.getpid()}"
        tmp_meta.write_text(json.dumps({"buildSeconds": info["buildSeconds"], "mapping": mapping}))
        os.replace(tmp_meta, cache / f"scifact-{key}.json")
    return target, mapping, info


def select(
    data: SciFact, limit: int | None, corpus_sample: int | None, seed: int = 7
) -> tuple[list[str], list[Doc]]:
    """The query ids (first `limit` by id order of the qrels) and the corpus: whole, or the
    queries' relevant documents plus `corpus_sample` random others."""
    query_ids = list(data.qrels)
    if limit is not None:
        query_ids = query_ids[:limit]
    if corpus_sample is None:
        return query_ids, data.corpus
    relevant = {d for q in query_ids for d in data.qrels[q]}
    others = [d for d in data.corpus if d.id not in relevant]
    picked = {d.id for d in random.Random(seed).sample(others, min(corpus_sample, len(others)))}
    return query_ids, [d for d in data.corpus if d.id in relevant or d.id in picked]


def run(
    data: SciFact,
    split: str,
    systems: Sequence[str],
    embedder: Embedder,
    counter: TokenCounter,
    limit: int | None = None,
    corpus_sample: int | None = None,
    cache: Path | None = None,
) -> dict[str, Any]:
    query_ids, docs = select(data, limit, corpus_sample)
    caching = CachingEmbedder(embedder)
    path, mapping, info = cached_store(docs, caching, counter, cache)
    per: dict[str, dict[str, list[float]]] = {
        s: {"nDCG@10": [], "R@10": [], "R@100": []} for s in systems
    }
    query_time = {s: 0.0 for s in systems}
    store = MemoryStore(path, caching, counter)
    started = time.perf_counter()
    try:
        for n, qid in enumerate(query_ids, start=1):
            query = data.queries[qid]
            relevant = data.qrels[qid]
            vector = caching.embed(query)
            for system in systems:
                t0 = time.perf_counter()
                ranking = rank(system, store, query, vector, SCOPES, DEPTH)
                query_time[system] += time.perf_counter() - t0
                docs_ranked = metrics.units(ranking, mapping)
                per[system]["nDCG@10"].append(metrics.ndcg_at(docs_ranked, relevant, 10))
                per[system]["R@10"].append(metrics.doc_recall_at(docs_ranked, relevant, 10))
                per[system]["R@100"].append(metrics.doc_recall_at(docs_ranked, relevant, 100))
            if n % 200 == 0:
                progress(f"scifact: {n}/{len(query_ids)} queries")
    finally:
        store.close()
        shutil.rmtree(path.parent, ignore_errors=True)
    n = len(query_ids)
    return {
        "dataset": "scifact",
        "split": split,
        "qrels": SCIFACT_SPLITS[split],
        "queries": n,
        "corpus": len(docs),
        "corpusSha256": data.corpus_sha256,
        "memories": len(mapping),
        "depth": DEPTH,
        "systems": {s: {m: metrics.mean(v) for m, v in per[s].items()} for s in systems},
        "store": info,
        "timing": {
            "buildSeconds": info["buildSeconds"],
            "storeFromCache": info["cached"],
            "queryMs": {s: 1000 * t / max(1, n) for s, t in query_time.items()},
            "queriesSeconds": time.perf_counter() - started,
        },
    }
