"""The in-memory vector index: one int8 matrix with a scale per row, for top-k by dot product.

Each normalised vector is kept as int8 with its own scale (its largest component / 127): a
quarter of float32's memory (at 100k rows 38 MB instead of 154 MB, design §8's 400 MB), cosines
within ~0.002 of the exact ones. Scoring dequantises a block of rows at a time into float32 and
multiplies by the query (BLAS): as fast as one float32 product, without a float copy of it all.

It mirrors the `memories` table. Before answering, `sync` asks SQLite whether any other
connection committed (`PRAGMA data_version`); if so it pulls only rows whose `change_seq` moved
and drops tombstoned ids, so a second editor window's writes are seen without a full reload.

It holds the vectors of one model only: a row whose vector another model made (its
`embedding_model`; a settings change, a store written by another version) is left out and listed
as pending like a row with no vector yet, so a query vector is never compared with another
model's (their cosines mean nothing). The store's backlog re-embeds such rows.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from nous.memory import lifecycle, snapshot

Matrix = npt.NDArray[np.float32]

BLOCK = 512
"""Rows dequantised per step of a search: 768 KB of float32 at 384 dimensions, in cache."""

LOAD_ROWS = 2048
"""Stored rows read and quantised together when the index loads."""


def quantise(vectors: Matrix) -> tuple[npt.NDArray[np.int8], Matrix]:
    """(int8 rows, a scale per row) with `rows · scale` ≈ `vectors` (a zero row: scale 1)."""
    peaks = np.abs(vectors).max(axis=1)
    scales = np.where(peaks > 0, peaks / 127.0, 1.0).astype(np.float32)
    return np.rint(vectors / scales[:, None]).astype(np.int8), scales


class VectorIndex:
    """Rows of (id, scope, excluded?, vector) with a growable matrix, all of `model`."""

    def __init__(self, dimension: int, model: str, saved: Path | None = None, key: int = 0) -> None:
        """`saved`: where this database's snapshot is kept (`memory.snapshot`), `key` the
        database's own; none for a database in memory."""
        self.dimension = dimension
        self._saved = saved
        self._key = key
        self._missing: set[str] = set()
        """Rows seen without a vector of this model (a snapshot keeps them, to re-check)."""
        self._unsaved = 0
        """Rows changed since the snapshot was read or written."""
        self.model = model
        self._matrix = np.zeros((1024, dimension), dtype=np.int8)
        self._scale = np.zeros(1024, dtype=np.float32)
        self._size = 0
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._scope_code = np.zeros(1024, dtype=np.int32)
        self._live = np.zeros(1024, dtype=bool)
        self._scopes: dict[str, int] = {}
        self.change_seq = 0
        self._data_version: int | None = None
        self.pending: list[str] = []
        """Ids of rows the last pull found without a vector yet (written with their vector to
        come: `memory.backlog`) or with another model's vector; they are searchable by text
        only until theirs lands."""
        self.other_models: Counter[str] = Counter()
        """{model: rows} of the rows the last pull found with another model's vector (among
        `pending`)."""

    def __len__(self) -> int:
        return int(self._live[: self._size].sum())

    # -- keeping in step with the table ---------------------------------------------------------

    def sync(self, conn: sqlite3.Connection) -> bool:
        """Pull changes committed by any connection since the last sync; True if any."""
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if version == self._data_version:
            return False
        self._data_version = version
        return self.pull(conn)

    def pull(self, conn: sqlite3.Connection) -> bool:
        """Apply rows and tombstones newer than `change_seq` (also after this process's writes)."""
        self.pending = []
        self.other_models = Counter()
        top = int(
            conn.execute("SELECT value FROM counters WHERE name = 'change_seq'").fetchone()[0]
        )
        restored = self._size == 0 and self.change_seq == 0 and self._restore(conn, top)
        if top == self.change_seq:
            return restored
        # sized once and streamed: at 100k, fetching every row first held ~150 MB of blobs at
        # once, and the matrix doubling to 131,072 rows another ~50 MB (both stayed resident)
        (count,) = conn.execute(
            "SELECT count(*) FROM memories WHERE change_seq > ?", (self.change_seq,)
        ).fetchone()
        self._reserve(self._size + int(count))
        rows = conn.execute(
            "SELECT id, scope, kind, status, embedding, embedding_model FROM memories "
            "WHERE change_seq > ?",
            (self.change_seq,),
        )
        width = self.dimension * 4
        batch: list[tuple[str, str, bool, bytes]] = []
        for memory_id, scope, kind, status, blob, model in rows:
            self._unsaved += 1
            if not blob:
                self.pending.append(memory_id)
                self._missing.add(memory_id)
                continue
            if model != self.model or len(blob) != width:
                self.remove(memory_id)  # out of search: its earlier vector, if any, is stale
                self.pending.append(memory_id)
                self._missing.add(memory_id)
                self.other_models[model] += 1
                continue
            batch.append((memory_id, scope, not lifecycle.is_excluded(kind, status), blob))
            if len(batch) == LOAD_ROWS:
                self._put_many(batch)
                batch = []
        self._put_many(batch)
        for (memory_id,) in conn.execute(
            "SELECT memory_id FROM tombstones WHERE change_seq > ?", (self.change_seq,)
        ):
            self.remove(memory_id, gone=True)
            self._unsaved += 1
        self.change_seq = top
        return True

    # -- the snapshot beside the database (memory.snapshot) --------------------------------------

    def _restore(self, conn: sqlite3.Connection, top: int) -> bool:
        """Start from the saved snapshot when there is a valid one; the pull goes on from its
        sequence. The rows it had without a vector of this model are looked at again."""
        if self._saved is None:
            return False
        snap = snapshot.load(self._saved, self._key, self.model, self.dimension, top)
        if snap is None:
            return False
        n = len(snap.ids)
        self._reserve(n)
        self._matrix[:n] = snap.matrix
        self._scale[:n] = snap.scale
        self._scope_code[:n] = snap.scope_code
        self._live[:n] = snap.live
        self._ids = list(snap.ids)
        self._row = {memory_id: i for i, memory_id in enumerate(self._ids)}
        self._scopes = {scope: i for i, scope in enumerate(snap.scopes)}
        self._size = n
        self.change_seq = snap.change_seq
        width = self.dimension * 4
        for start in range(0, len(snap.missing), 500):
            chunk = snap.missing[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for memory_id, model, length, seq in conn.execute(
                "SELECT id, embedding_model, length(embedding), change_seq FROM memories "
                f"WHERE id IN ({marks})",
                chunk,
            ):
                if seq > self.change_seq:
                    continue  # changed since: the pull reads it
                self._missing.add(memory_id)
                self.pending.append(memory_id)
                if length and (model != self.model or length != width):
                    self.other_models[model] += 1
        return True

    def save(self, conn: sqlite3.Connection) -> None:
        """Write the snapshot when the index is large and has moved on since the last one
        (`snapshot.MIN_ROWS`, `STALE_ROWS`); in step with the table first, so every row
        deleted by then is zeroed."""
        if self._saved is None:
            return
        self.sync(conn)
        if self._size < snapshot.MIN_ROWS or self._unsaved < snapshot.STALE_ROWS:
            return
        n = self._size
        scopes = sorted(self._scopes, key=self._scopes.__getitem__)
        state = snapshot.Snapshot(
            self.change_seq, self._ids[:n], scopes, self._scope_code[:n], self._live[:n],
            self._scale[:n], self._matrix[:n], sorted(self._missing),
        )  # fmt: skip
        snapshot.save(self._saved, self._key, self.model, state)
        self._unsaved = 0

    def put(self, memory_id: str, scope: str, live: bool, blob: bytes | Matrix) -> None:
        vector = np.frombuffer(blob, dtype="<f4") if isinstance(blob, bytes) else blob
        row = self._place(memory_id, scope, live)
        values, scales = quantise(vector.reshape(1, self.dimension))
        self._matrix[row], self._scale[row] = values[0], scales[0]
        self._missing.discard(memory_id)

    def _put_many(self, batch: list[tuple[str, str, bool, bytes]]) -> None:
        """`put` for a block of stored rows, quantised together (one numpy pass, not one each:
        a 100k load would spend a second in per-row calls)."""
        if not batch:
            return
        vectors = np.frombuffer(b"".join(b for *_, b in batch), dtype="<f4")
        quantised, scales = quantise(vectors.reshape(len(batch), self.dimension))
        rows = [self._place(memory_id, scope, live) for memory_id, scope, live, _ in batch]
        self._matrix[rows] = quantised
        self._scale[rows] = scales
        if self._missing:
            self._missing.difference_update(memory_id for memory_id, *_ in batch)

    def _place(self, memory_id: str, scope: str, live: bool) -> int:
        """The row of `memory_id` (a new one at the end if it has none), scope and state set."""
        row = self._row.get(memory_id)
        if row is None:
            if self._size == len(self._matrix):
                self._reserve(self._size + 1)
            row = self._size
            self._size += 1
            self._ids.append(memory_id)
            self._row[memory_id] = row
        self._scope_code[row] = self._scopes.setdefault(scope, len(self._scopes))
        self._live[row] = live
        return row

    def remove(self, memory_id: str, gone: bool = False) -> None:
        """Out of search; `gone` (the row was deleted): its vector is zeroed too, so no
        snapshot written later keeps it."""
        row = self._row.get(memory_id)
        if row is not None:
            self._live[row] = False
            if gone:
                self._matrix[row] = 0
                self._scale[row] = 0.0
        if gone:
            self._missing.discard(memory_id)

    def _reserve(self, rows: int) -> None:
        """Room for `rows` rows: a bulk load gets what it needs and 1/16 more, a row that does
        not fit grows the matrix by a quarter."""
        if rows <= len(self._matrix):
            return
        capacity = max(rows + rows // 16, len(self._matrix) + len(self._matrix) // 4)
        matrix = np.zeros((capacity, self.dimension), dtype=np.int8)
        matrix[: self._size] = self._matrix[: self._size]
        self._matrix = matrix
        self._scale = np.resize(self._scale, capacity)
        self._scope_code = np.resize(self._scope_code, capacity)
        live = np.zeros(capacity, dtype=bool)
        live[: self._size] = self._live[: self._size]
        self._live = live

    # -- search ---------------------------------------------------------------------------------

    def search(
        self, query: Matrix, k: int, scopes: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top-k (id, cosine) among live rows, restricted to `scopes` when given."""
        if self._size == 0 or k <= 0:
            return []
        mask = self._live[: self._size].copy()
        if scopes is not None:
            codes = [self._scopes[s] for s in scopes if s in self._scopes]
            mask &= np.isin(self._scope_code[: self._size], codes)
        allowed = int(mask.sum())
        if allowed == 0:
            return []
        scores = self._scores(query)
        scores[~mask] = -np.inf
        k = min(k, allowed)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(self._ids[int(i)], float(scores[i])) for i in top]

    def _scores(self, query: Matrix) -> Matrix:
        """Every row's dot product with `query`, a block of dequantised rows at a time."""
        query = np.asarray(query, dtype=np.float32)
        scores = np.empty(self._size, dtype=np.float32)
        for start in range(0, self._size, BLOCK):
            stop = min(start + BLOCK, self._size)
            block = self._matrix[start:stop].astype(np.float32)
            np.matmul(block, query, out=scores[start:stop])
        scores *= self._scale[: self._size]
        return scores

    def vectors(self, ids: Iterable[str]) -> dict[str, Matrix]:
        """The stored vectors of the given ids (those present), dequantised."""
        return {
            i: self._matrix[row].astype(np.float32) * self._scale[row]
            for i in ids
            if (row := self._row.get(i)) is not None and self._scale[row] != 0  # 0: deleted
        }
