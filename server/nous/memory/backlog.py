"""Vectors computed after the write: a store that defers embedding acknowledges a memory once its
row and full-text entry are committed (with an empty `embedding`), and this backlog embeds such
rows in batches on a thread with its own connection.

A row whose vector another model made (`embedding_model` is not the embedder's: the model
setting changed) is embedded again the same way: the store's index leaves it out until then.

A row without a vector is searchable by text at once and by vector once its batch lands. Nothing
is lost on a crash: the row is committed before the write returns, and a store opened later finds
every row still without a vector (`VectorIndex.pending`) and hands it back to its backlog.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from nous.memory.embedder import Embedder

log = logging.getLogger(__name__)

BATCH = 16
"""Rows per model call: small enough that a query waiting for the model waits one short batch."""
WINDOW = 128
"""Rows taken from the queue at once: sorted by length into model batches (rows of similar
length pad less: in arrival order a batch pads to its longest text, ~3x slower), stored in one
transaction."""
BUSY_TIMEOUT_MS = 10_000


class Backlog:
    """Ids of rows waiting for their vector, embedded on a daemon thread (started on demand)."""

    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.path = path
        self._embedder = embedder
        self._width = 4 * embedder.dimension
        """Bytes of one of its vectors: a row whose blob has another length has none of its."""
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._busy = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._held = 0
        self.embedded = 0
        """Rows this backlog gave a vector (what a benchmark reads)."""

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue) + self._busy

    def add(self, ids: Iterable[str]) -> None:
        with self._cond:
            if self._stopping:
                return
            for memory_id in ids:
                if memory_id not in self._queued:
                    self._queued.add(memory_id)
                    self._queue.append(memory_id)
            if self._queue and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="nous-embed", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    @contextmanager
    def held(self) -> Iterator[None]:
        """No new batch starts inside (a batch under way finishes): a harvest writing a few
        hundred rows has both cores to itself and answers sooner, its vectors come after (the
        rows are searchable by text meanwhile)."""
        with self._cond:
            self._held += 1
        try:
            yield
        finally:
            with self._cond:
                self._held -= 1
                self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every queued row has its vector (or failed); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._queue or self._busy:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        """Take no more rows; the thread finishes what is queued on its own connection, then
        ends (without holding up the caller). What a killed process left unembedded stays
        pending in the file: the next deferring store to open it embeds it."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    # -- the thread -----------------------------------------------------------------------------

    def _run(self) -> None:
        conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")  # as the store's connection (WAL)
        try:
            while True:
                with self._cond:
                    while (not self._queue or self._held) and not self._stopping:
                        self._cond.wait()
                    if not self._queue:  # stopping, and nothing left
                        self._thread = None
                        return
                    batch = [self._queue.popleft() for _ in range(min(WINDOW, len(self._queue)))]
                    self._busy = len(batch)
                try:
                    self.embedded += self._embed(conn, batch)
                except Exception:  # a row that cannot be embedded stays pending, never lost
                    log.exception("background embedding failed for %d rows", len(batch))
                finally:
                    with self._cond:
                        self._busy = 0
                        self._queued.difference_update(batch)
                        self._cond.notify_all()
        finally:
            conn.close()
            with self._cond:
                self._busy = 0
                self._cond.notify_all()

    def _embed(self, conn: sqlite3.Connection, ids: list[str]) -> int:
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            f"SELECT id, content, content_hash FROM memories WHERE id IN ({marks}) "
            "AND (length(embedding) != ? OR embedding_model != ?)",
            (*ids, self._width, self._embedder.name),
        ).fetchall()
        if not rows:
            return 0
        vectors = self._embedder.embed_many([r[1] for r in rows], batch_size=BATCH)
        conn.execute("BEGIN IMMEDIATE")
        try:
            change = conn.execute(
                "UPDATE counters SET value = value + 1 WHERE name = 'change_seq' RETURNING value"
            ).fetchone()[0]
            done = 0
            for (memory_id, _, content_hash), vector in zip(rows, vectors, strict=True):
                # the content it was computed from is still the row's: an edit in between
                # wrote its own vector, or leaves the row pending for the next pass
                done += conn.execute(
                    "UPDATE memories SET embedding = ?, embedding_model = ?, change_seq = ? "
                    "WHERE id = ? AND content_hash = ? "
                    "AND (length(embedding) != ? OR embedding_model != ?)",
                    (
                        np.asarray(vector, dtype="<f4").tobytes(),
                        self._embedder.name,
                        change,
                        memory_id,
                        content_hash,
                        self._width,
                        self._embedder.name,
                    ),
                ).rowcount
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return done
