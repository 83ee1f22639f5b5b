"""`nous bench --team`: the team store (PostgreSQL + pgvector, design §13) beside SQLite.

Per size, one memory set (the bench corpus, every memory in the bench project's scope) is
written twice: into a SQLite file (`MemoryStore.remember_many`, batches of 1,000) and into a
PostgreSQL database that `pgserver` starts in a temporary directory (`TeamStore.load`: COPY with
the GIN index in place, then the HNSW index built over the whole set, in one transaction).
Vectors are real model embeddings of the pool texts; a variant (memory ≥ pool size) carries its
pool text's vector plus a little noise (σ 0.02, then normalised), so the HNSW graph is not built
over exact duplicates.

Measured on each set:

- **candidates**: the local search (`vector_search` + `text_search`, k = 100) against the team
  store's (`TeamStore.search`, the same two lists plus their rows in one transaction);
- **recall**: `nous/recall` end to end (`chat.recall`, real model) with the set in SQLite and no
  team store, with the set only in the team store (an empty local file), and with both;
- **writes**: upserts by id (`TeamStore.put_many`, batches of 200, what the sync thread sends),
  and shared memories from the local write to the team store (`Engine.remember` of
  pre-embedded drafts in scope `team`, then until the outbox is empty).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from nous.bench.measure import percentiles

PUT_ROWS = 1000
PUT_BATCH = 200
SHARED_ROWS = 500
JITTER = 0.02


def run(args: argparse.Namespace) -> dict[str, Any]:
    from pgserver.postgres_server import get_server

    from nous.bench.build import LookupEmbedder, Pool, store_key
    from nous.bench.corpus import Corpus, make_workspace, recall_queries
    from nous.context import chat
    from nous.engine import Engine
    from nous.memory.embedder import default_embedder
    from nous.memory.store import MemoryStore
    from nous.memory.team import Row, TeamStore
    from nous.memory.teamlink import TeamLink
    from nous.protocol import RecallParams
    from nous.settings import Settings
    from nous.text import tokens
    from nous.workspace import identity

    counter = tokens.counter()
    real = default_embedder()
    corpus = Corpus(counter, seed=args.seed, pool=args.pool)
    pool = Pool(corpus, real)
    queries = recall_queries(args.queries)
    out: dict[str, Any] = {"pool": args.pool, "queries": len(queries), "sizes": []}
    with tempfile.TemporaryDirectory(prefix="nous-team-bench-") as tmp:
        root = Path(tmp)
        ws = make_workspace(root)
        project = identity.resolve(ws)
        server = get_server(root / "pg", cleanup_mode="stop")
        try:
            for size in args.sizes:
                _say(f"team: {size:,} memories")
                url = _database(server, f"bench_{size}")
                specs = list(corpus.specs(0, size))
                pool.ensure([s.base for s in specs], {s.index: s for s in specs})
                rng = np.random.default_rng(size)
                drafts, vectors = [], []
                for s in specs:
                    vector = pool.vectors[s.base]
                    if s.index >= corpus.pool:
                        vector = vector + rng.normal(0, JITTER, vector.shape).astype(np.float32)
                        vector = (vector / np.linalg.norm(vector)).astype(np.float32)
                    drafts.append(s.draft.model_copy(update={"scope": project.scope}))
                    vectors.append(vector)
                table = {store_key(d.content): v for d, v in zip(drafts, vectors, strict=True)}
                lookup = LookupEmbedder(real, table)

                db = root / f"local-{size}.db"
                started = time.perf_counter()
                local = MemoryStore(db, lookup, counter)
                written = []
                for start in range(0, size, 1000):
                    written += local.remember_many(drafts[start : start + 1000])
                sqlite_seconds = time.perf_counter() - started
                rows = [
                    Row(r.memory.model_dump(), v, real.name)
                    for r, v in zip(written, vectors, strict=True)
                ]
                local.close()

                team = TeamStore(url, project.key, real.dimension, real.name)
                started = time.perf_counter()
                team.load(rows)  # COPY, then the HNSW index built over all of it
                load_seconds = time.perf_counter() - started
                _say(f"  loaded: SQLite {sqlite_seconds:.1f} s, PostgreSQL {load_seconds:.1f} s")

                qvecs = [real.embed(q) for q in queries]
                scopes = [project.scope]
                local = MemoryStore(db, real, counter)
                team.warm()
                for q, v in zip(queries[:5], qvecs, strict=False):  # warm-up: index, caches
                    local.vector_search(v, 100, scopes)
                    local.text_search(q, 100, scopes)
                    team.search(q, v, 100, scopes)
                sqlite_ms, team_ms = [], []
                for q, v in zip(queries, qvecs, strict=True):
                    started = time.perf_counter()
                    local.vector_search(v, 100, scopes)
                    local.text_search(q, 100, scopes)
                    sqlite_ms.append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    team.search(q, v, 100, scopes)
                    team_ms.append((time.perf_counter() - started) * 1000)
                local.close()

                recall_ms = {}
                for name, path, team_store in (
                    ("sqlite", db, None),
                    ("team", root / f"empty-{size}.db", url),
                    ("both", db, url),
                ):
                    engine = Engine(Settings(db=path, team_store=team_store, team_timeout_ms=5000),
                                    ws, embedder=real)  # fmt: skip
                    for q in queries[:5]:  # warm-up
                        chat.recall(engine, RecallParams(query=q))
                    samples = []
                    origins = {"local": 0, "team": 0}
                    for q in queries:
                        started = time.perf_counter()
                        answer = chat.recall(engine, RecallParams(query=q))
                        samples.append((time.perf_counter() - started) * 1000)
                        for section in answer.sections:
                            for item in section.items:
                                origins[item.origin] += 1
                    state = engine.team_status()["state"]
                    engine.close()
                    recall_ms[name] = {**percentiles(samples), "items": origins, "team": state}
                    _say(f"  recall {name}: p50 {recall_ms[name]['p50']} ms ({origins})")

                extra = rows[:PUT_ROWS]
                fresh = [
                    Row({**r.fields, "id": f"put{size}x{n:06d}"}, r.vector, r.model)
                    for n, r in enumerate(extra)
                ]
                started = time.perf_counter()
                for start in range(0, len(fresh), PUT_BATCH):
                    team.put_many(fresh[start : start + PUT_BATCH])
                put_seconds = time.perf_counter() - started
                started = time.perf_counter()
                for start in range(0, len(fresh), PUT_BATCH):  # the same rows again: retries
                    team.put_many(fresh[start : start + PUT_BATCH])
                again_seconds = time.perf_counter() - started
                count = team.count()
                team.close()

                shared = [
                    d.model_copy(update={"scope": "team", "content": f"{d.content} (shared)"})
                    for d in drafts[:SHARED_ROWS]
                ]
                for d, v in zip(shared, vectors[:SHARED_ROWS], strict=True):
                    lookup.table[store_key(d.content)] = v
                writer = Engine(Settings(db=root / f"writer-{size}.db", team_store=url), ws,
                                embedder=lookup)  # fmt: skip
                link = writer.store.team
                assert isinstance(link, TeamLink)
                started = time.perf_counter()
                writer.remember_many(shared)
                acked = time.perf_counter() - started
                while writer.store.outbox.count(project.scope):
                    link.flush(30.0)
                pushed = time.perf_counter() - started
                writer.close()

                out["sizes"].append({
                    "size": size, "sqlite_write_s": round(sqlite_seconds, 2),
                    "sqlite_write_per_s": round(size / sqlite_seconds, 1),
                    "team_load_s": round(load_seconds, 2),
                    "team_load_per_s": round(size / load_seconds, 1),
                    "candidates_sqlite_ms": percentiles(sqlite_ms),
                    "candidates_team_ms": percentiles(team_ms),
                    "recall_ms": recall_ms,
                    "put_per_s": round(len(fresh) / put_seconds, 1),
                    "put_again_per_s": round(len(fresh) / again_seconds, 1),
                    "rows_after": count,
                    "shared_acked_per_s": round(SHARED_ROWS / acked, 1),
                    "shared_pushed_per_s": round(SHARED_ROWS / pushed, 1),
                })  # fmt: skip
        finally:
            server.cleanup()
    return out


def _database(server: Any, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    from nous.memory.team import create_database

    base = str(server.get_uri())
    create_database(base, name)
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _say(message: str) -> None:
    import sys

    print(f"[bench] {message}", file=sys.stderr, flush=True)


def markdown(data: dict[str, Any]) -> str:
    """The tables of docs/benchmarks.md's team section."""
    lines = [
        "| size | SQLite write/s (batches of 1,000) | PostgreSQL COPY + HNSW build, rows/s "
        "| candidates SQLite p50 / p95 ms | candidates team p50 / p95 ms "
        "| recall SQLite p50 / p95 | recall team only p50 / p95 | recall both p50 / p95 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in data["sizes"]:
        r = s["recall_ms"]
        lines.append(
            f"| {s['size']:,} | {s['sqlite_write_per_s']:,} | {s['team_load_per_s']:,} "
            f"| {s['candidates_sqlite_ms']['p50']} / {s['candidates_sqlite_ms']['p95']} "
            f"| {s['candidates_team_ms']['p50']} / {s['candidates_team_ms']['p95']} "
            + " ".join(f"| {r[k]['p50']} / {r[k]['p95']}" for k in ("sqlite", "team", "both"))
            + " |"
        )
    lines += [
        "",
        "| size | upserts/s (batches of 200) | same rows again/s (retries) "
        "| shared remember: acknowledged/s | shared remember: in the team store/s "
        "| items injected (local / team), both |",
        "|---|---|---|---|---|---|",
    ]
    for s in data["sizes"]:
        both = s["recall_ms"]["both"]["items"]
        lines.append(
            f"| {s['size']:,} | {s['put_per_s']:,} | {s['put_again_per_s']:,} "
            f"| {s['shared_acked_per_s']:,} | {s['shared_pushed_per_s']:,} "
            f"| {both['local']} / {both['team']} |"
        )
    return "\n".join(lines) + "\n"
