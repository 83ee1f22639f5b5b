"""What the harvester and the code-anchor check ask of the store: the harvest ledger (which
file was harvested at which hash, per project) and the live rows drawn from a source or naming
a file. The rows only (`Sources`, a store's `sources`); the policy is `nous.workspace`."""

from __future__ import annotations

from nous.memory.database import Database
from nous.memory.model import now

Row = tuple[str, str, str]
"""(id, kind, status)"""


def prefix_range(prefix: str) -> tuple[str, str]:
    """(low, high) such that `low <= source < high` holds exactly for the sources starting with
    `prefix` (SQLite's binary order), for a range on the source index."""
    if not prefix:
        raise ValueError("a source prefix must not be empty")
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


class Sources:
    """The `harvest_sources` table and source lookups of one database (a store's `sources`)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- the harvest ledger ----------------------------------------------------------------------

    def harvested(self, project: str) -> dict[str, str]:
        """{workspace-relative path: sha256} of the files harvested into `project` (its key)."""
        rows = self._db.conn.execute(
            "SELECT path, sha256 FROM harvest_sources WHERE project = ?", (project,)
        ).fetchall()
        return {str(path): str(sha) for path, sha in rows}

    def note_harvested(self, project: str, rel: str, sha: str) -> None:
        with self._db.write():
            self._db.conn.execute(
                "INSERT INTO harvest_sources (project, path, sha256, harvested_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (project, path) DO UPDATE SET "
                "sha256 = excluded.sha256, harvested_at = excluded.harvested_at",
                (project, rel, sha, now()),
            )

    def drop_harvested(self, project: str, rel: str) -> None:
        with self._db.write():
            self._db.conn.execute(
                "DELETE FROM harvest_sources WHERE project = ? AND path = ?", (project, rel)
            )

    # -- rows by source ---------------------------------------------------------------------------

    def live_from_source(self, prefix: str, scope: str) -> list[Row]:
        """(id, kind, status) of the rows of `scope` whose source starts with `prefix` and that
        are not inactive. A range on the source index, not LIKE: LIKE reads `_` and `%` in a
        file name as wildcards ("a_b.md" matched "aXb.md") and scans the whole scope."""
        rows = self._db.conn.execute(
            "SELECT id, kind, status FROM memories INDEXED BY memories_source "
            "WHERE source >= ? AND source < ? AND status != 'inactive' AND scope = ?",
            (*prefix_range(prefix), scope),
        ).fetchall()
        return [(str(i), str(k), str(s)) for i, k, s in rows]

    def id_of_source(self, source: str, scope: str) -> str | None:
        """The id of a row of `scope` with exactly this source, whatever its state."""
        row = self._db.conn.execute(
            "SELECT id FROM memories WHERE source = ? AND scope = ?", (source, scope)
        ).fetchone()
        return str(row[0]) if row else None

    def live_adr(self, number: str, scope: str) -> str | None:
        """The id of a live row of `scope` harvested from ADR `number` (`file:…#adr-<number>`)."""
        row = self._db.conn.execute(
            "SELECT id FROM memories WHERE source LIKE 'file:%#adr-' || ? AND scope = ? "
            "AND status != 'inactive'",
            (number, scope),
        ).fetchone()
        return str(row[0]) if row else None

    def mentioning(self, scope: str, text: str) -> list[tuple[str, str, str, str]]:
        """(id, kind, status, content) of the live rows of `scope` whose content holds `text`
        (a file path, for the code-anchor check)."""
        rows = self._db.conn.execute(
            "SELECT id, kind, status, content FROM memories WHERE scope = ? "
            "AND instr(content, ?) > 0 AND status NOT IN ('inactive', 'retired', 'superseded')",
            (scope, text),
        ).fetchall()
        return [(str(i), str(k), str(s), str(c)) for i, k, s, c in rows]
