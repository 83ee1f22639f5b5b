"""Build one benchmark database of N memories, and measure write throughput while doing it.

The set is written in three parts, all through `MemoryStore.remember_many` / `remember` (prepare,
secret scan, renderings, FTS, transactions, vector index — the normal write path):

1. **bulk** (N − sample − single memories): the vectors come from a lookup table of *real* model
   embeddings computed beforehand (`Pool`), so the bulk is not re-embedded one more time; for
   memories that are variants of a pool text (index ≥ pool size) the vector is the real embedding of
   the pool text they vary. Not timed as a write figure.
2. **sample** (2,000 by default): written in batches of 100 on a store that already holds the
   bulk and defers vectors as the daemon does (`defer_vectors`): the acknowledged-write figure
   (rows and full-text entries committed), then the background-embedding figure (from the first
   write until the last vector of the sample is stored, real model).
3. **single** (100): `remember` one at a time (a chat `nous/remember`), acknowledged the same way;
   its vectors are waited for before anything is measured on the set.

Then creation dates are spread over the last 540 days (the store stamps "now"), and the WAL is
checkpointed so the file size is the database size.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nous.bench.corpus import Corpus, Spec
from nous.memory import renderings, snapshot
from nous.memory.embedder import Embedder
from nous.memory.store import MemoryStore
from nous.text import secrets
from nous.text.tokens import TokenCounter

BULK_BATCH = 1000
SAMPLE_BATCH = 100


def store_key(content: str) -> str:
    """The text `remember_many` hands the embedder for a draft with this content."""
    return secrets.redact(renderings.normalise(content))[0]


class Pool:
    """Real embeddings of pool texts (by pool index), computed once and shared by every size."""

    def __init__(self, corpus: Corpus, embedder: Embedder) -> None:
        self.corpus = corpus
        self.embedder = embedder
        self.vectors: dict[int, npt.NDArray[np.float32]] = {}
        self.seconds = 0.0
        self.embedded = 0

    def fingerprint(self) -> str:
        """Identifies the pool: set seed and size, model (by its output), the texts' generator."""
        probe = np.round(self.embedder.embed("nous bench fingerprint"), 4).astype("<f4")
        last = self.corpus.spec(self.corpus.pool - 1).draft.content
        parts = [self.embedder.name, str(self.corpus.seed), str(self.corpus.pool),
                 self.corpus.spec(0).draft.content, last]  # fmt: skip
        digest = hashlib.sha256("\0".join(parts).encode() + probe.tobytes())
        return digest.hexdigest()[:16]

    def load(self, path: Path) -> int:
        """Reuse real embeddings saved by an earlier run with the same fingerprint."""
        if not path.is_file():
            return 0
        with np.load(path) as saved:
            for b, row in zip(saved["bases"].tolist(), saved["vectors"], strict=True):
                self.vectors[int(b)] = row.astype(np.float32)
        return len(self.vectors)

    def save(self, path: Path) -> None:
        bases = np.array(sorted(self.vectors), dtype=np.int64)
        vectors = np.stack([self.vectors[int(b)] for b in bases]) if len(bases) else np.zeros(0)
        np.savez(path, bases=bases, vectors=vectors)

    def ensure(self, bases: Sequence[int], known: dict[int, Spec] | None = None) -> None:
        missing = sorted({b for b in bases if b not in self.vectors})
        if not missing:
            return
        texts = [
            store_key((known[b] if known and b in known else self.corpus.spec(b)).draft.content)
            for b in missing
        ]
        started = time.perf_counter()
        matrix = self.embedder.embed_many(texts)
        self.seconds += time.perf_counter() - started
        self.embedded += len(texts)
        for b, row in zip(missing, matrix, strict=True):
            self.vectors[b] = row


class LookupEmbedder(Embedder):
    """Vectors from a table keyed by stored text; a text not in it goes to the real model."""

    def __init__(self, real: Embedder, table: dict[str, npt.NDArray[np.float32]]) -> None:
        self.name = real.name
        self.dimension = real.dimension
        self.real = real
        self.table = table
        self.misses = 0

    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        missing = []
        for row, text in enumerate(texts):
            vector = self.table.get(text)
            if vector is None:
                missing.append(row)
            else:
                out[row] = vector
        if missing:
            self.misses += len(missing)
            out[missing] = self.real.embed_batch([texts[r] for r in missing])
        return out


def fresh_database(db: Path) -> None:
    """Remove a database a kept folder (`--keep`) holds from the last run: the file, its WAL
    files and its vector snapshot."""
    for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), snapshot.path_for(db)):
        path.unlink(missing_ok=True)


@dataclass
class BuildReport:
    size: int
    generate_seconds: float
    bulk: int
    bulk_real_own: int
    """Bulk memories whose vector is the real embedding of their own text."""
    bulk_variants: int
    """Bulk memories whose vector is the real embedding of the pool text they vary."""
    bulk_seconds: float
    bulk_lookup_misses: int
    pool_embedded: int
    pool_embed_seconds: float
    sample: int
    sample_seconds: float
    write_per_s: float
    """Acknowledged writes: rows and full-text entries committed, vectors deferred."""
    embed_seconds: float
    """From the first sample write until its last vector is stored (background embedding)."""
    embed_per_s: float
    single: int
    single_seconds: float
    single_per_s: float
    index_load_seconds: float
    """Opening the full store (schema check + loading every vector into the numpy index)."""
    db_bytes: int
    memories: int
    mean_tokens: float
    token_range: tuple[int, int]
    kinds: dict[str, int]
    scopes: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def split(size: int, sample: int, single: int) -> tuple[int, int, int]:
    """(bulk, sample, single) counts for a set of `size` memories."""
    single = min(single, size // 10)
    sample = min(sample, size // 2)
    return size - sample - single, sample, single


def build(
    path: Path,
    size: int,
    corpus: Corpus,
    pool: Pool,
    real: Embedder,
    counter: TokenCounter,
    sample: int = 2000,
    single: int = 100,
) -> BuildReport:
    """Write `size` memories into a new database at `path`; see the module docstring."""
    started = time.perf_counter()
    specs = list(corpus.specs(0, size))
    generate_seconds = time.perf_counter() - started
    n_bulk, n_sample, n_single = split(size, sample, single)
    bulk = specs[:n_bulk]

    own = {s.index: s for s in specs if s.index < corpus.pool}
    embedded_before, seconds_before = pool.embedded, pool.seconds
    pool.ensure([s.base for s in bulk], own)
    table = {store_key(s.draft.content): pool.vectors[s.base] for s in bulk}
    lookup = LookupEmbedder(real, table)

    started = time.perf_counter()
    store = MemoryStore(path, lookup, counter)
    ids: list[str] = []
    for start in range(0, len(bulk), BULK_BATCH):
        results = store.remember_many([s.draft for s in bulk[start : start + BULK_BATCH]])
        ids += [r.memory.id for r in results]
    store.close()
    bulk_seconds = time.perf_counter() - started

    started = time.perf_counter()
    store = MemoryStore(path, real, counter, defer_vectors=True)
    index_load_seconds = time.perf_counter() - started
    batch = specs[n_bulk : n_bulk + n_sample]
    started = time.perf_counter()
    for start in range(0, len(batch), SAMPLE_BATCH):
        results = store.remember_many([s.draft for s in batch[start : start + SAMPLE_BATCH]])
        ids += [r.memory.id for r in results]
    sample_seconds = time.perf_counter() - started
    store.wait_embedded()
    embed_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for s in specs[n_bulk + n_sample :]:
        ids.append(store.remember(s.draft).memory.id)
    single_seconds = time.perf_counter() - started
    store.wait_embedded()

    _spread_dates(store, ids, specs)
    store.checkpoint()
    memories = store.memory_count()
    db_bytes = store.size_bytes()
    store.close()

    tokens = [s.tokens for s in specs]
    kinds: dict[str, int] = {}
    scopes: dict[str, int] = {}
    for s in specs:
        kinds[s.draft.kind] = kinds.get(s.draft.kind, 0) + 1
        scope = s.draft.scope or "universal"
        scopes[scope] = scopes.get(scope, 0) + 1
    return BuildReport(
        size=size,
        generate_seconds=round(generate_seconds, 3),
        bulk=n_bulk,
        bulk_real_own=sum(s.index < corpus.pool for s in bulk),
        bulk_variants=sum(s.index >= corpus.pool for s in bulk),
        bulk_seconds=round(bulk_seconds, 3),
        bulk_lookup_misses=lookup.misses,
        pool_embedded=pool.embedded - embedded_before,
        pool_embed_seconds=round(pool.seconds - seconds_before, 3),
        sample=n_sample,
        sample_seconds=round(sample_seconds, 3),
        write_per_s=round(n_sample / sample_seconds, 1) if sample_seconds else 0.0,
        embed_seconds=round(embed_seconds, 3),
        embed_per_s=round(n_sample / embed_seconds, 1) if embed_seconds else 0.0,
        single=n_single,
        single_seconds=round(single_seconds, 3),
        single_per_s=round(n_single / single_seconds, 1) if single_seconds else 0.0,
        index_load_seconds=round(index_load_seconds, 3),
        db_bytes=db_bytes,
        memories=memories,
        mean_tokens=round(float(np.mean(tokens)), 1),
        token_range=(min(tokens), max(tokens)),
        kinds=dict(sorted(kinds.items(), key=lambda kv: -kv[1])),
        scopes=dict(sorted(scopes.items(), key=lambda kv: -kv[1])),
    )


def _spread_dates(store: MemoryStore, ids: list[str], specs: list[Spec]) -> None:
    """Creation/update dates from each spec's age (the store stamps everything "now")."""
    now = datetime.now(UTC)
    stamps = {}
    for memory_id, spec in zip(ids, specs, strict=True):
        stamp = (now - timedelta(days=spec.age_days)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        stamps[memory_id] = stamp
    store.backdate(stamps)
