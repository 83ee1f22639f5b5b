"""One memory database file: its connection (WAL, the pragmas every process sets), its schema
(migrations applied on open), its write transactions and the counters every write moves.

Every write is one short `BEGIN IMMEDIATE` transaction (embedding and secret scanning happen
before it opens), so several processes can share a file without lost or duplicated rows. The
store and the row objects over the same file (`usage`, `sources`, `projects`, `metrics`,
`browse`, `search`) each hold this one `Database`, never a connection of their own.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nous.errors import StoreError
from nous.memory import migrations, snapshot
from nous.memory.model import now

log = logging.getLogger(__name__)

CACHE_KIB = 32 * 1024
BUSY_TIMEOUT_MS = 10_000
JOURNAL_LIMIT = 64 * 1024 * 1024
CHECKPOINT_AT = 16 * 1024 * 1024
"""WAL size past which a writer runs a TRUNCATE checkpoint: under a steady stream of readers the
automatic (passive) checkpoints never let the WAL restart, and it grew past 64 MB in 15 s."""
CHECKPOINT_WAIT_MS = 1000


class Database:
    """The connection to one memory file; use from one thread."""

    def __init__(self, path: Path | str) -> None:
        """Open (creating the file and its folder) and migrate; `StoreError` when it cannot."""
        self.path = Path(path)
        self.in_memory = str(path) == ":memory:"
        try:
            if not self.in_memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                str(path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
            )
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_LIMIT}")
            # The default 2 MB page cache re-reads the hot index pages on every request.
            self.conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            with self.write():
                migrations.apply(self.conn, now())
                self.key = snapshot.store_key(self.conn)  # what its vector snapshot names
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open memory database {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create memory database {path}: {exc.strerror}") from exc

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One `BEGIN IMMEDIATE` transaction; rolled back on any error."""
        for attempt in range(5):
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == 4:
                    raise StoreError(f"memory database is busy: {exc}") from exc
                time.sleep(0.05 * (attempt + 1))
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def next_change(self) -> int:
        """Move the `change_seq` counter (inside a write) and return its new value."""
        row = self.conn.execute(
            "UPDATE counters SET value = value + 1 WHERE name = 'change_seq' RETURNING value"
        ).fetchone()
        return int(row[0])

    def change(self) -> int:
        """The `change_seq` counter: every write to a memory row moves it."""
        row = self.conn.execute("SELECT value FROM counters WHERE name = 'change_seq'").fetchone()
        return int(row[0])

    def log_transition(
        self, memory_id: str, old: str | None, new: str, at: str, reason: str
    ) -> None:
        self.conn.execute(
            "INSERT INTO transitions (memory_id, from_status, to_status, at, reason) "
            "VALUES (?, ?, ?, ?, ?)",
            (memory_id, old, new, at, reason),
        )

    def bound_wal(self) -> None:
        """Checkpoint and truncate the WAL once it passes `CHECKPOINT_AT`, waiting at most
        `CHECKPOINT_WAIT_MS` for other connections' transactions (a busy checkpoint is retried
        after the next write)."""
        try:
            if Path(f"{self.path}-wal").stat().st_size < CHECKPOINT_AT:
                return
        except OSError:
            return
        self.checkpoint(wait_ms=CHECKPOINT_WAIT_MS)

    def checkpoint(self, wait_ms: int = CHECKPOINT_WAIT_MS) -> bool:
        """A TRUNCATE checkpoint (call when idle too); False when other connections kept it
        from completing within `wait_ms`."""
        self.conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
        try:
            busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.OperationalError as exc:
            log.info("checkpoint skipped: %s", exc)
            return False
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return not busy

    def size_bytes(self) -> int:
        files = [self.path, Path(f"{self.path}-wal")]
        return sum(p.stat().st_size for p in files if p.exists())

    def integrity(self) -> str:
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])
