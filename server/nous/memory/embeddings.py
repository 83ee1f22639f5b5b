"""A store's vectors: its embedder, the in-process vector index (`memory.vectors`, kept beside the
file by `memory.snapshot`), the backlog that computes deferred vectors after their write
(`memory.backlog`) and the vectors a search needed before the backlog stored them."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt

from nous.memory import snapshot
from nous.memory.backlog import Backlog
from nous.memory.database import Database
from nous.memory.embedder import Embedder, Vector
from nous.memory.vectors import VectorIndex

log = logging.getLogger(__name__)

ON_DEMAND = 16
"""Pending rows a `vectors` call embeds at most (one model batch on the request path)."""
EARLY_LIMIT = 4096


class Embeddings:
    """The vectors of one database's memories, for one model."""

    def __init__(self, db: Database, embedder: Embedder, defer: bool) -> None:
        """`defer`: vectors are computed in the background after their write (`Backlog`), and
        the rows found without one when it opens are queued (a writer that stopped before their
        vector landed). Never for `:memory:` (one connection only)."""
        self._db = db
        self.embedder = embedder
        self._saved = None if db.in_memory else snapshot.path_for(db.path)
        self.index = VectorIndex(embedder.dimension, embedder.name, self._saved, db.key)
        self._early: dict[str, Vector] = {}
        """Vectors of pending rows computed for a search before the backlog stored theirs."""
        self._backlog = Backlog(db.path, embedder) if defer and not db.in_memory else None
        self.index.sync(db.conn)
        self._report_other_models()
        if self._backlog is not None:
            self._backlog.add(self.index.pending)

    @property
    def deferred(self) -> bool:
        """Whether vectors are computed after their write (by the backlog)."""
        return self._backlog is not None

    def _report_other_models(self) -> None:
        """Say so when the file holds vectors another model made (the `embedding_model`
        setting changed, or another version wrote them): they are left out of vector search
        and, in a deferring store, re-embedded in the background; found by text meanwhile.
        What the index's first load found: no extra read of the table."""
        found = self.index.other_models
        if not found:
            return
        models = ", ".join(f"{n} by {model}" for model, n in found.most_common())
        then = (
            "re-embedding them in the background"
            if self._backlog is not None
            else "a daemon (which defers vectors) re-embeds them"
        )
        log.warning(
            "%s: %d memories have vectors of another model (%s), not of %s: %s; they are "
            "found by text meanwhile",
            self._db.path, found.total(), models, self.embedder.name, then,
        )  # fmt: skip

    def close(self) -> None:
        """Deferred vectors still pending are finished by the backlog's own thread and
        connection in the background (or by the next deferring store to open the file)."""
        if self._backlog is not None:
            self._backlog.close()
        self.save_snapshot()

    def save_snapshot(self) -> None:
        """Keep a large vector index beside the file for the next process to open
        (`memory.snapshot`; only when it moved on since the last one). Never raises."""
        try:
            self.index.save(self._db.conn)
        except sqlite3.Error as exc:
            log.info("vector snapshot not written: %s", exc)

    def drop_snapshot(self) -> None:
        """Delete the saved index (it may hold a purged row's vector: made again later)."""
        if self._saved is not None:
            snapshot.drop(self._saved)

    def defer(self, ids: list[str]) -> None:
        """Queue rows just written without a vector (a deferring store's)."""
        if self._backlog is not None:
            self._backlog.add(ids)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the deferred vectors are stored and in the index; False on timeout."""
        if self._backlog is None:
            return True
        done = self._backlog.wait(timeout)
        self.index.sync(self._db.conn)
        return done

    @contextmanager
    def held(self) -> Iterator[None]:
        """Deferred vectors wait until the block ends (`Backlog.held`)."""
        if self._backlog is None:
            yield
            return
        with self._backlog.held():
            yield

    def pending(self) -> int:
        """Rows the backlog has yet to embed."""
        return 0 if self._backlog is None else len(self._backlog)

    def search(
        self, query: Vector, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top-k (id, cosine) among memories not excluded by their lifecycle state."""
        self.index.sync(self._db.conn)
        return self.index.search(query, k, scopes)

    def stored(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The vectors of `ids` this file has: from the index, else from the row, else (still
        pending) the first `ON_DEMAND` embedded now (in the order asked)."""
        out = self.index.vectors(ids)
        if len(out) < len(ids):
            out.update(self._early_vectors([i for i in ids if i not in out]))
        return out

    def _early_vectors(self, ids: list[str]) -> dict[str, Vector]:
        """Vectors of rows the index does not hold yet: stored since it last synced (read from
        the row), or still pending (embedded now, at most `ON_DEMAND`)."""
        out = {i: self._early[i] for i in ids if i in self._early}
        wanted = [i for i in ids if i not in out]
        if not wanted:
            return out
        pending: list[tuple[str, str]] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for memory_id, content, blob, model in self._db.conn.execute(
                f"SELECT id, content, embedding, embedding_model FROM memories "
                f"WHERE id IN ({marks})",
                chunk,
            ):
                if model == self.embedder.name and len(blob) == 4 * self.embedder.dimension:
                    out[memory_id] = np.frombuffer(blob, dtype="<f4")
                else:
                    pending.append((memory_id, content))
        order = {memory_id: n for n, memory_id in enumerate(wanted)}
        pending = sorted(pending, key=lambda r: order[r[0]])[:ON_DEMAND]
        if not pending:
            return out
        if len(self._early) > EARLY_LIMIT:
            self._early.clear()
        for (memory_id, _), vector in zip(
            pending, self.embedder.embed_batch([r[1] for r in pending]), strict=True
        ):
            vector.setflags(write=False)
            self._early[memory_id] = out[memory_id] = vector
        return out

    def all(self) -> npt.NDArray[np.float32]:
        """Every stored vector of the model as one (N, d) float32 matrix, read from the
        database (rows whose vector is still pending or another model's are left out)."""
        rows = self._db.conn.execute(
            "SELECT embedding FROM memories WHERE length(embedding) > 0 AND embedding_model = ?",
            (self.embedder.name,),
        ).fetchall()
        matrix = np.frombuffer(b"".join(r[0] for r in rows), dtype="<f4")
        return matrix.reshape(len(rows), self.embedder.dimension).astype(np.float32)
