"""Sealing the rows the rules in force have not scanned (a row's `redaction`, `memory/rows.py`):
rows from before migration 9, rows written under another rule set, rows whose text was rewritten
since (an edit, a new outcome). Until sealed they are scrubbed on every read, as all rows were
before the seal.

A pass takes a batch of such rows (through the `redaction` index), scans their text outside any
transaction, then stamps them in one short write transaction, each only if its text is still what
was scanned. Only the `redaction` column is written (no `change_seq`, no team outbox entry, no
full-text change), so a pass stopped anywhere leaves each row either stamped or as it was.
"""

from __future__ import annotations

from nous.memory.database import Database
from nous.memory.rows import sealed
from nous.text import secrets

BATCH = 25
"""Rows per batch: the daemon runs one batch between two requests (a few ms to ~20 ms)."""


def reseal(db: Database, limit: int = BATCH) -> int:
    """Scan up to `limit` rows the rules in force have not stamped and stamp them: sealed when
    found clean, `<rules id>.-` when not (scrubbed on every read, not scanned again). Returns how
    many it stamped: 0 once none is left (or none of the batch could be: each had changed)."""
    rules = secrets.rules_id()
    rows = db.conn.execute(
        "SELECT id, content, summary, micro, source, tags FROM memories "
        "WHERE redaction IS NULL OR redaction < ? OR redaction >= ? LIMIT ?",
        (f"{rules}.", f"{rules}/", limit),  # outside [`<rules>.`, `<rules>/`): another stamp
    ).fetchall()
    if not rows:
        return 0
    stamps = [(sealed((r[1], r[2], r[3], r[4], r[5])), *r) for r in rows]
    with db.write():
        done = db.conn.executemany(
            "UPDATE memories SET redaction = ? WHERE id = ? AND content = ? AND summary = ? "
            "AND micro = ? AND source = ? AND tags = ?",
            stamps,
        ).rowcount
    return int(done)
