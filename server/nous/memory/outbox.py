"""The team outbox (design §13): the local queue of changes waiting for the team store.

A shared memory's write and its outbox entry commit in one SQLite transaction (triggers of
migration 5), so a write acknowledged locally is never lost: the entry stays until the team store
has it, and is pushed again after a failure or a restart. Entries are taken in order and deleted
only after the push committed; pushing an entry twice is harmless (upserts by id).

Read on the team's sync thread through a connection of its own (a SQLite connection belongs to
the thread that opened it), like `memory.backlog` (`Outbox`); a change to a team row this file
does not hold is queued by the store, on the store's connection (`Queue`, a store's `outbox`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nous.memory.database import Database
from nous.memory.embedder import Vector

BUSY_TIMEOUT_MS = 10_000


@dataclass
class Entry:
    seq: int
    memory_id: str
    op: str
    """`put` (push the row as it is now), `delete`, or `status` (a team row someone else
    holds: forget, supersede)."""
    payload: dict[str, Any]


@dataclass
class Local:
    """A shared row as it is now: its record fields, its vector (None while still pending)."""

    fields: dict[str, Any]
    vector: Vector | None
    model: str


class Outbox:
    """One connection to the memory file, for the sync thread."""

    def __init__(self, path: Path, columns: str) -> None:
        self._columns = columns
        self._names = [c.strip() for c in columns.split(",")]
        self._conn = sqlite3.connect(
            str(path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
        )  # fmt: skip
        self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def close(self) -> None:
        self._conn.close()

    def take(self, scope: str, limit: int = 200) -> list[Entry]:
        """The oldest entries of `scope`, in order, but those of rows whose vector is still
        being computed (they stay queued: the row is pushed once its vector is stored)."""
        rows = self._conn.execute(
            "SELECT o.seq, o.memory_id, o.op, o.payload FROM team_outbox o "
            "LEFT JOIN memories m ON m.id = o.memory_id WHERE o.scope = ? "
            "AND NOT (o.op = 'put' AND m.id IS NOT NULL AND length(m.embedding) = 0) "
            "ORDER BY o.seq LIMIT ?",
            (scope, limit),
        ).fetchall()
        return [Entry(r[0], r[1], r[2], json.loads(r[3] or "{}")) for r in rows]

    def rows(self, ids: list[str]) -> dict[str, Local]:
        """The shared rows among `ids` as they are now (a purged or unshared one is absent)."""
        out: dict[str, Local] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._conn.execute(
                f"SELECT {self._columns}, embedding, embedding_model FROM memories "
                f"WHERE id IN ({marks}) AND shared = 1",
                chunk,
            ):
                fields = dict(zip(self._names, row[:-2], strict=True))
                fields["tags"] = json.loads(fields["tags"])
                blob = row[-2]
                vector = np.frombuffer(blob, dtype="<f4") if blob else None
                out[fields["id"]] = Local(fields, vector, row[-1])
        return out

    def done(self, seqs: list[int]) -> None:
        """Drop entries the team store has (in one transaction)."""
        if not seqs:
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for start in range(0, len(seqs), 500):
                chunk = seqs[start : start + 500]
                self._conn.execute(
                    f"DELETE FROM team_outbox WHERE seq IN ({','.join('?' * len(chunk))})", chunk
                )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def count(self, scope: str) -> int:
        row = self._conn.execute(
            "SELECT count(*) FROM team_outbox WHERE scope = ?", (scope,)
        ).fetchone()
        return int(row[0])


class Queue:
    """The store's side of the outbox (a store's `outbox`); `after_write` is the store's (it
    pokes the team link to push what was queued)."""

    def __init__(self, db: Database, after_write: Callable[[], None]) -> None:
        self._db = db
        self._after_write = after_write

    def add(self, memory_id: str, scope: str, op: str, payload: dict[str, Any]) -> None:
        """Queue a change to a team row this file does not hold (forget or supersede a memory
        someone else shared). A shared row of this file queues its own changes (triggers)."""
        with self._db.write():
            self._db.conn.execute(
                "INSERT INTO team_outbox (memory_id, scope, op, payload) VALUES (?, ?, ?, ?)",
                (memory_id, scope, op, json.dumps(payload)),
            )
        self._after_write()

    def count(self, scope: str) -> int:
        """Changes of `scope` waiting to be pushed to the team store."""
        row = self._db.conn.execute(
            "SELECT count(*) FROM team_outbox WHERE scope = ?", (scope,)
        ).fetchone()
        return int(row[0])
