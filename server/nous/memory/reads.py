"""The request path's reads of the `memories` table: full-text search (FTS5 BM25 over an OR of
the query's words), chat-turn windows, the always-on and standing rules (kept until a memory
changes), document frequencies for a query's IDF (kept until 64 changes have landed), id
completion and counts. `Reads` is a store's; the store answers these verbs through it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nous.memory import fts, turns
from nous.memory.database import Database
from nous.memory.rows import EXCLUDED_STATUSES
from nous.memory.sources import prefix_range

DF_STALENESS = 64
"""Changes after which cached document frequencies are counted again."""
PRUNE_FROM = 20_000
"""Stores of at least this many memories leave the very common words out of a full-text query
(below it the whole OR-query costs a few milliseconds)."""
PRUNE_SHARE = 0.05
"""A word in more than this share of the memories is left out of the full-text query (unless
every word of it is: then the rarest stays)."""


class Reads:
    """The reads of one database's memories that a request makes (a store's)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._df_cache: dict[str, int] = {}
        self._df_seen = -1
        self._df_total = 0
        self._always_on: dict[tuple[object, ...], list[str]] = {}
        self._always_on_seen = -1

    def ids_starting(
        self, prefix: str, project_scope: str, limit: int = 10
    ) -> list[tuple[str, str, str]]:
        """(id, kind, micro) of the memories whose id starts with `prefix` that `project_scope`
        may see (its own, any language's, universal), at most `limit`."""
        escaped = prefix.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._db.conn.execute(
            "SELECT id, kind, micro FROM memories WHERE id LIKE ? ESCAPE '\\' "
            "AND (scope = ? OR scope NOT LIKE 'project:%') ORDER BY id LIMIT ?",
            (escaped + "%", project_scope, limit),
        ).fetchall()
        return [(str(i), str(kind), str(micro)) for i, kind, micro in rows]

    def text_search(
        self, query: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top-k (id, BM25 score, higher is better) by FTS5 over an OR of the query's words;
        in a store of `PRUNE_FROM` memories or more, the words held by more than `PRUNE_SHARE`
        of them are left out of the query (`fts.prune`)."""
        terms = fts.fts_terms(query)
        if len(terms) > 1 and self._df_total_now() >= PRUNE_FROM:
            frequencies, total = self.document_frequencies(terms)
            terms = fts.prune(terms, frequencies, total, PRUNE_SHARE)
        match = fts.fts_match(terms)
        if not match or k <= 0:
            return []
        where = f"m.status NOT IN ({','.join('?' * len(EXCLUDED_STATUSES))})"
        params: list[Any] = [match, *EXCLUDED_STATUSES]
        if scopes is not None:
            where += f" AND m.scope IN ({','.join('?' * len(scopes))})"
            params += list(scopes)
        rows = self._db.conn.execute(
            "SELECT m.id, bm25(memories_fts) AS rank FROM memories_fts "
            # the covering index reads no memory rows (they hold the embeddings): ~2x faster
            "JOIN memories m INDEXED BY memories_seq_filter ON m.seq = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND {where} ORDER BY rank LIMIT ?",
            (*params, k),
        ).fetchall()
        return [(memory_id, -float(rank)) for memory_id, rank in rows]

    def turn_window(
        self, ids: Sequence[str], reach: int, scopes: Sequence[str] | None = None
    ) -> tuple[dict[str, list[tuple[str, int]]], frozenset[str]]:
        """(`turn_neighbours`, the turns among them and `ids` that end by asking: `turns.asks`,
        read from the rows the neighbours are found with)."""
        wanted: dict[str, list[tuple[str, int]]] = {}
        asking: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for memory_id, source, content in self._db.conn.execute(
                # `+kind`: by id, not by the kind index (a quarter of the table at 100k)
                f"SELECT id, source, content FROM memories WHERE id IN ({marks}) "
                "AND +kind = 'episode' AND source LIKE 'chat:%'",
                chunk,
            ):
                at = turns.position(source)
                if at is None:
                    continue
                if turns.asks(content):
                    asking.add(memory_id)
                for step in range(-reach, reach + 1):
                    if step:
                        near = turns.source(at[0], at[1] + step)
                        wanted.setdefault(near, []).append((memory_id, step))
        out: dict[str, list[tuple[str, int]]] = {}
        sources = list(wanted)
        where = f"+status NOT IN ({','.join('?' * len(EXCLUDED_STATUSES))})"
        extra: list[Any] = list(EXCLUDED_STATUSES)
        if scopes is not None:
            where += f" AND +scope IN ({','.join('?' * len(scopes))})"
            extra += list(scopes)
        for start in range(0, len(sources), 500):
            chunk = sources[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for near_id, source, content in self._db.conn.execute(
                # by source (`+`: not by the kind or scope indexes)
                f"SELECT id, source, content FROM memories WHERE source IN ({marks}) "
                f"AND +kind = 'episode' AND {where}",
                (*chunk, *extra),
            ):
                if turns.asks(content):
                    asking.add(near_id)
                for memory_id, step in wanted[source]:
                    if near_id != memory_id:
                        out.setdefault(memory_id, []).append((near_id, step))
        return out, frozenset(asking)

    def session_rows(self, session: str, scope: str) -> list[tuple[str, str, str]]:
        """(id, kind, source) of what a chat session left in `scope`: its turns and the notes
        drawn from them (sources `chat:<session>#<index>`), live or not."""
        prefix = turns.source(session, 0)[:-1]  # "chat:<session>#"
        rows = self._db.conn.execute(
            # by source: the planner would take the scope index and read half the table
            "SELECT id, kind, source FROM memories INDEXED BY memories_source "
            "WHERE source >= ? AND source < ? AND scope = ?",
            (*prefix_range(prefix), scope),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def recent_notes(self, scope: str, limit: int = 30) -> list[str]:
        """Ids of the live session notes (kind `note`) in `scope`, newest first."""
        rows = self._db.conn.execute(
            "SELECT id FROM memories WHERE scope = ? AND kind = 'note' "
            "AND status NOT IN ('inactive', 'retired', 'superseded') "
            "ORDER BY created_at DESC, seq DESC LIMIT ?",
            (scope, limit),
        ).fetchall()
        return [r[0] for r in rows]

    def always_on(self, scopes: Sequence[str], limit: int = 40) -> list[str]:
        """Ids of live pinned memories and escalated (blocking) constraints in `scopes`.
        No index serves `pinned = 1 OR status = 'escalated'` (the scope index reads half the
        table): the answer is kept until a memory changes (`change_seq` moves)."""
        change = self._db.change()
        key = (tuple(scopes), limit)
        if self._always_on_seen != change:
            self._always_on.clear()
            self._always_on_seen = change
        if key in self._always_on:
            return list(self._always_on[key])
        marks = ",".join("?" * len(scopes))
        rows = self._db.conn.execute(
            f"SELECT id FROM memories WHERE scope IN ({marks}) "
            "AND (pinned = 1 OR status = 'escalated') AND status NOT IN ('inactive', 'retired') "
            "ORDER BY importance DESC, updated_at DESC LIMIT ?",
            (*scopes, limit),
        ).fetchall()
        self._always_on[key] = [r[0] for r in rows]
        return list(self._always_on[key])

    def standing_rules(self, scope: str, instructions: bool = False, limit: int = 200) -> list[str]:
        """Ids of the live constraints of `scope` (the censors layer, design §2.7) and, with
        `instructions`, every live rule harvested from its instruction files (a chat start
        carries them): newest first. Kept until a memory changes, like `always_on`."""
        change = self._db.change()
        key = ("standing", scope, instructions, limit)
        if self._always_on_seen != change:
            self._always_on.clear()
            self._always_on_seen = change
        if key not in self._always_on:
            rows = self._db.conn.execute(
                "SELECT id FROM memories WHERE scope = ? "
                "AND (kind = 'constraint' OR (? AND tags LIKE '%\"instructions\"%')) "
                "AND status NOT IN ('inactive', 'retired', 'superseded') "
                "ORDER BY importance DESC, updated_at DESC LIMIT ?",
                (scope, int(instructions), limit),
            ).fetchall()
            self._always_on[key] = [r[0] for r in rows]
        return list(self._always_on[key])

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """({term: live memories whose text holds it}, live memories in all), for the IDF of a
        query's words (FTS5 stems the term the way it stemmed the text). Cached until 64 more
        changes have landed: frequencies drift slowly, and recounting after every write of a
        busy writer would keep readers in long statements that hold checkpoints back."""
        change = self._df_change()
        if self._df_seen < 0 or change - self._df_seen >= DF_STALENESS or change < self._df_seen:
            self._df_cache.clear()
            self._df_seen = change
            self._df_total = int(
                self._db.conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            )
        out: dict[str, int] = {}
        for term in terms:
            if term not in self._df_cache:
                quoted = '"' + term.replace('"', "") + '"'
                self._df_cache[term] = int(
                    self._db.conn.execute(
                        "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (quoted,)
                    ).fetchone()[0]
                )
            out[term] = self._df_cache[term]
        return out, self._df_total

    def _df_total_now(self) -> int:
        """The memory count `document_frequencies` last read (read now if never)."""
        if self._df_seen < 0:
            self.document_frequencies([])
        return self._df_total

    def _df_change(self) -> int:
        row = self._db.conn.execute("SELECT coalesce(max(change_seq), 0) FROM memories").fetchone()
        return int(row[0])

    def counts(self, scopes: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
        """{kind: {status: n}}, over `scopes` only when given."""
        out: dict[str, dict[str, int]] = {}
        where, args = "", list(scopes or [])
        if scopes is not None:
            where = f"WHERE scope IN ({','.join('?' * len(args))})"
        for kind, status, n in self._db.conn.execute(
            f"SELECT kind, status, count(*) FROM memories {where} GROUP BY kind, status "
            "ORDER BY kind",
            args,
        ):
            out.setdefault(kind, {})[status] = n
        return out

    def memory_count(self) -> int:
        """Every row, whatever its state or scope."""
        return int(self._db.conn.execute("SELECT count(*) FROM memories").fetchone()[0])
