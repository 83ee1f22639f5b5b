"""Moving memories to a project's key: what an upgraded store, or a project that gained a remote,
left under an older project scope.

Before project keys (migration 4), scopes were `project:<name>`; the names found then are listed
in `legacy_projects`. SQL cannot know which folder an old name meant, so the first folder that
resolves to that name afterwards claims it: its memories, harvest records and sessions move to
the folder's key, and the name leaves the list (a later folder with the same name starts empty:
the old rows of two same-named folders were already one set, and giving them to both would leak
one's memories to the other). A project's own earlier keys (its path key, before it had a remote)
are always claimed. One `BEGIN IMMEDIATE` transaction, so two processes claim once.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

from nous.memory import scope as scopes
from nous.memory.database import Database
from nous.memory.vectors import VectorIndex

log = logging.getLogger(__name__)


class Projects:
    """Claiming an older project scope's rows in one database (a store's `projects`); the
    moved rows' new scopes reach `index`, this process's vector index."""

    def __init__(self, db: Database, index: VectorIndex) -> None:
        self._db = db
        self._index = index

    def claim(self, key: str, legacy_name: str, aliases: Sequence[str] = ()) -> int:
        """Move what `project:<legacy_name>` (if still unclaimed) and `project:<alias>` hold
        to `project:<key>`; returns the number of memories moved. Cheap (reads only) when
        there is nothing to claim."""
        if not _pending(self._db.conn, legacy_name, aliases):
            return 0
        moved = 0
        with self._db.write() as conn:
            olds = [a for a in aliases if a != key]
            if conn.execute(
                "DELETE FROM legacy_projects WHERE name = ? RETURNING name", (legacy_name,)
            ).fetchall():
                olds.insert(0, legacy_name)
            change = self._db.next_change()
            for old in dict.fromkeys(o for o in olds if o != key):
                moved += _move(conn, scopes.project(old), scopes.project(key), change)
                for table in ("harvest_sources", "sessions"):
                    conn.execute(
                        f"UPDATE OR IGNORE {table} SET project = ? WHERE project = ?", (key, old)
                    )
                    conn.execute(f"DELETE FROM {table} WHERE project = ?", (old,))  # newer won
        self._index.pull(self._db.conn)  # the moved rows' scopes, in this process's index
        if moved:
            log.info("project %s: claimed %d memories from %s", key, moved, ", ".join(olds))
        return moved


def _pending(conn: sqlite3.Connection, legacy_name: str, aliases: Sequence[str]) -> bool:
    if conn.execute("SELECT 1 FROM legacy_projects WHERE name = ?", (legacy_name,)).fetchone():
        return True
    for alias in aliases:
        if (
            conn.execute(
                "SELECT 1 FROM memories WHERE scope = ? LIMIT 1", (scopes.project(alias),)
            ).fetchone()
            or conn.execute(
                "SELECT 1 FROM harvest_sources WHERE project = ? LIMIT 1", (alias,)
            ).fetchone()
            or conn.execute("SELECT 1 FROM sessions WHERE project = ? LIMIT 1", (alias,)).fetchone()
        ):
            return True
    return False


def _move(conn: sqlite3.Connection, old_scope: str, new_scope: str, change: int) -> int:
    """Move every row of `old_scope`; a row whose text the new scope already holds is folded into
    that row (its confirmations added, its usage records kept) instead of being copied."""
    moved = conn.execute(
        "UPDATE OR IGNORE memories SET scope = ?, change_seq = ? WHERE scope = ?",
        (new_scope, change, old_scope),
    ).rowcount
    twins = conn.execute(
        "SELECT old.id, new.id, old.confirmations FROM memories old JOIN memories new "
        "ON new.scope = ? AND new.content_hash = old.content_hash WHERE old.scope = ?",
        (new_scope, old_scope),
    ).fetchall()
    for old_id, new_id, confirmations in twins:
        conn.execute(
            "UPDATE memories SET confirmations = confirmations + ? + 1, change_seq = ? "
            "WHERE id = ?",
            (confirmations, change, new_id),
        )
        conn.execute("UPDATE usage SET memory_id = ? WHERE memory_id = ?", (new_id, old_id))
        conn.execute("DELETE FROM memories WHERE id = ?", (old_id,))
    return int(moved) + len(twins)
