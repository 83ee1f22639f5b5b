"""Browsing memory (design §11): the paged, filtered, sorted listing behind `nous/list`, with each
memory's use (how often injected, last injected and referenced) and, for a record view, its usage
history and lifecycle transitions (`Browser`, a store's `browse`). Read-only; edits go through
`MemoryStore.edit`.

Source types come from the `source` field: `file:<path>#<anchor>` is a harvested file,
`git:<sha>` a commit, `chat`, `chat:<session>` or `chat-tool` (an agent's
`nous_remember`) what chat captured, anything else manual. The
review queue is what chat concluded (not its turns: those are episodes), not reviewed yet (no
`reviewed` tag), and not forgotten.
Forgotten (`inactive`) memories are listed only when a status filter or an id asks for them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nous.memory import lifecycle, turns
from nous.memory.database import Database
from nous.memory.model import Memory
from nous.memory.rows import NAMES, decode
from nous.text.words import split

REVIEWED_TAG = "reviewed"
SOURCE_TYPES = ("file", "commit", "chat", "manual")
SORTS = ("recent", "use", "score")
HISTORY_LIMIT = 50
"""Usage records and transitions returned per memory in a record view (newest first)."""

_FILE = "m.source LIKE 'file:%'"
_COMMIT = "m.source LIKE 'git:%'"
_CHAT = "(m.source = 'chat' OR m.source LIKE 'chat:%' OR m.source LIKE 'chat-%')"
_SOURCE_SQL = {
    "file": _FILE,
    "commit": _COMMIT,
    "chat": _CHAT,
    "manual": f"NOT ({_FILE} OR {_COMMIT} OR {_CHAT})",
}
# A captured chat turn (kind `episode`) is the record of what was said, not a claim to review:
# the queue holds what chat concluded (session notes, remembered memories).
_REVIEW = (
    f"{_CHAT} AND m.kind != 'episode' AND m.tags NOT LIKE '%\"{REVIEWED_TAG}\"%' "
    "AND m.status != 'inactive'"
)
_CAPTURED = "m.source LIKE 'chat:%#%'"
"""What chat captured on its own (a turn, a note drawn from one: `chat:<session>#<index>`), as
against project knowledge (harvested, committed, remembered on purpose)."""
_USAGE = (
    "SELECT memory_id, count(*) AS injected, sum(referenced) AS referenced, max(at) AS last_at, "
    "max(CASE WHEN referenced THEN at END) AS last_referenced_at FROM usage GROUP BY memory_id"
)


def source_type(source: str) -> str:
    """`file`, `commit`, `chat` or `manual` for a memory's `source`."""
    if source.startswith("file:"):
        return "file"
    if source.startswith("git:"):
        return "commit"
    if source == "chat" or source.startswith(("chat:", "chat-")):
        return "chat"
    return "manual"


def captured(memory: Memory) -> bool:
    """Captured from a chat on its own (a turn or a session note), not project knowledge."""
    return turns.session_of(memory.source or "") is not None


@dataclass(frozen=True)
class Filters:
    """What a listing keeps; `None` (or empty) keeps everything."""

    project_scope: str
    """Memories of this project, of any language and universal ones: never another project's."""
    query: str | None = None
    kinds: Sequence[str] | None = None
    scope: str | None = None
    statuses: Sequence[str] | None = None
    source_types: Sequence[str] | None = None
    since: str | None = None
    pinned: bool | None = None
    review: bool = False
    ids: Sequence[str] | None = None
    captured: bool | None = None
    """True: only what chat captured (turns, session notes); False: only project knowledge."""


@dataclass
class Listed:
    """One memory of a page and its use."""

    memory: Memory
    injected: int = 0
    referenced: int = 0
    last_injected_at: str | None = None
    last_referenced_at: str | None = None
    usage: list[dict[str, Any]] | None = None
    transitions: list[dict[str, Any]] | None = None


@dataclass
class Page:
    items: list[Listed]
    total: int
    review_pending: int
    offset: int
    next_offset: int | None = None


def _like(text: str) -> str:
    return "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"


def _where(filters: Filters) -> tuple[str, list[Any], str | None]:
    """The WHERE clause, its arguments, and the full-text expression (when the query has
    words)."""
    clauses = ["(m.scope = ? OR m.scope NOT LIKE 'project:%')"]
    args: list[Any] = [filters.project_scope]
    match = None
    if filters.query and filters.query.strip():
        words = list(dict.fromkeys(split(filters.query)))[:32]
        text = filters.query.strip()
        found = "m.id LIKE ? ESCAPE '\\' OR m.source LIKE ? ESCAPE '\\'"
        args += [re.sub(r"([\\%_])", r"\\\1", text.lower()) + "%", _like(text)]
        if words:
            match = " AND ".join(f'"{w}"*' for w in words)
            found = (
                f"m.seq IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?) OR {found}"
            )
            args.insert(len(args) - 2, match)
        clauses.append(f"({found})")
    for column, values in (("kind", filters.kinds), ("status", filters.statuses)):
        if values:
            clauses.append(f"m.{column} IN ({','.join('?' * len(values))})")
            args += [v.strip().lower() for v in values]
    if not filters.statuses and filters.ids is None:
        clauses.append(f"m.status != '{lifecycle.INACTIVE}'")  # forgotten: only when asked for
    if filters.scope:
        clauses.append("m.scope = ?")
        args.append(filters.scope)
    if filters.source_types:
        clauses.append("(" + " OR ".join(_SOURCE_SQL[t] for t in filters.source_types) + ")")
    if filters.since:
        clauses.append("m.created_at >= ?")
        args.append(filters.since)
    if filters.pinned is not None:
        clauses.append("m.pinned = ?")
        args.append(int(filters.pinned))
    if filters.review:
        clauses.append(_REVIEW)
    if filters.captured is not None:
        clauses.append(_CAPTURED if filters.captured else f"NOT ({_CAPTURED})")
    if filters.ids is not None:
        clauses.append(f"m.id IN ({','.join('?' * len(filters.ids))})" if filters.ids else "0")
        args += list(filters.ids)
    return " AND ".join(clauses), args, match


class Browser:
    """The browser's reads of one database (a store's `browse`)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def page(
        self,
        filters: Filters,
        sort: str = "recent",
        offset: int = 0,
        limit: int = 50,
        history: bool = False,
    ) -> Page:
        """One page of the memories `filters` keeps, sorted by `recent` (last updated first),
        `use` (most often injected first) or `score` (best text match first when there is a
        query, else pinned, then importance, confidence and references)."""
        if sort not in SORTS:
            raise ValueError(f"unknown sort {sort!r}")
        conn = self._db.conn
        where, args, match = _where(filters)
        total = int(
            conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", args).fetchone()[0]
        )
        columns = ", ".join(f"m.{c}" for c in (*NAMES, "redaction"))
        joins = f"LEFT JOIN ({_USAGE}) u ON u.memory_id = m.id"
        join_args: list[Any] = []
        order = {
            "recent": "m.updated_at DESC, m.seq DESC",
            "use": "coalesce(u.injected, 0) DESC, u.last_at DESC, m.updated_at DESC, m.seq DESC",
            "score": "m.pinned DESC, m.importance DESC, m.confidence DESC, "
            "coalesce(u.referenced, 0) DESC, m.updated_at DESC, m.seq DESC",
        }[sort]
        if sort == "score" and match:
            joins += (
                " LEFT JOIN (SELECT rowid, bm25(memories_fts) AS rank FROM memories_fts "
                "WHERE memories_fts MATCH ?) f ON f.rowid = m.seq"
            )
            join_args.append(match)
            order = "f.rank IS NULL, f.rank, " + order
        rows = conn.execute(
            f"SELECT {columns}, coalesce(u.injected, 0), coalesce(u.referenced, 0), u.last_at, "
            f"u.last_referenced_at FROM memories m {joins} WHERE {where} ORDER BY {order} "
            "LIMIT ? OFFSET ?",
            (*join_args, *args, limit, offset),
        ).fetchall()
        width = len(NAMES) + 1  # and the seal
        items = [
            Listed(
                decode(row[:width]),
                int(row[width]),
                int(row[width + 1]),
                row[width + 2],
                row[width + 3],
            )
            for row in rows
        ]
        if history:
            for item in items:
                item.usage, item.transitions = self._history(item.memory.id)
        review_where, review_args, _ = _where(Filters(filters.project_scope, review=True))
        review = int(
            conn.execute(
                f"SELECT count(*) FROM memories m WHERE {review_where}", review_args
            ).fetchone()[0]
        )
        following = offset + len(items)
        return Page(items, total, review, offset, following if following < total else None)

    def _history(self, memory_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        usage = [
            {"session_id": s, "at": at, "referenced": bool(ref), "overlap": float(overlap)}
            for s, at, ref, overlap in self._db.conn.execute(
                "SELECT session_id, at, referenced, overlap FROM usage WHERE memory_id = ? "
                "ORDER BY at DESC, id DESC LIMIT ?",
                (memory_id, HISTORY_LIMIT),
            )
        ]
        transitions = [
            {"from_status": old, "to_status": new, "at": at, "reason": reason}
            for old, new, at, reason in self._db.conn.execute(
                "SELECT from_status, to_status, at, reason FROM transitions WHERE memory_id = ? "
                "ORDER BY id DESC LIMIT ?",
                (memory_id, HISTORY_LIMIT),
            )
        ]
        return usage, transitions
