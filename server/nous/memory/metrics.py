"""The rows the seeds' metrics and the calibration note read (design §14): reviewed decisions with
their stated confidence, judged usage and fingerprints per project or chat session. Reads only
(`Metrics`, a store's `metrics`); the figures are computed by `nous.context.calibration`
and `nous.context.stats`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from nous.memory.database import Database

FINAL_OUTCOMES = ("success", "partial", "failure")


@dataclass(frozen=True)
class Answer:
    """One fingerprint row: an answer the pipeline gave (startup, turn or recall)."""

    session_id: str | None
    mode: str
    frame: str
    tokens: int
    budget: int
    refresh: str | None
    """The refresh verdict of a session's turn (`initial`, `none`, `frame-switch`, …); None
    when none was made (startup, recall, a turn without a session, or a row from before)."""
    conversation_tokens: int | None
    """The conversation's tokens as the client reported them, if it did."""
    elapsed_ms: float | None
    """How long building the context took (`nous/context`; None for a recall)."""
    cold: bool
    """The first answer of its process (of the store object that logged it)."""
    id: int = 0
    """The row's id: the order answers were given in."""
    at: str = ""
    profile: str | None = None
    items: tuple[str, ...] | None = None
    """The ids of the memories the answer injected; None for a row from before migration 8."""


@dataclass(frozen=True)
class Judged:
    """One usage row: an injected memory `nous/feedback` judged against a reply."""

    session_id: str
    memory_id: str
    at: str
    referenced: bool


class Metrics:
    """Reads over `memories`, `usage`, `sessions` and `fingerprints` (a store's `metrics`)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def reviewed_decisions(self, scope: str, limit: int = 50) -> list[tuple[float, str]]:
        """(confidence, outcome) of the scope's most recently reviewed decisions, newest first.

        Reviewed: a final outcome (success, partial, failure) is logged; a forgotten
        (`inactive`) decision is left out. Harvested records (sources `file:` and `git:`: ADRs,
        decision logs, commits) state no confidence (the harvest writes 1.0), so they do not
        count; a decision remembered by a person or a chat does, with the confidence it was
        given (1.0 when none was)."""
        rows = self._db.conn.execute(
            "SELECT confidence, outcome FROM memories WHERE kind = 'decision' AND scope = ? "
            "AND outcome IN (?, ?, ?) AND status != 'inactive' "
            "AND substr(source, 1, 5) != 'file:' AND substr(source, 1, 4) != 'git:' "
            "ORDER BY updated_at DESC, seq DESC LIMIT ?",
            (scope, *FINAL_OUTCOMES, limit),
        ).fetchall()
        return [(float(c), str(o)) for c, o in rows]

    def usage_counts(self, project: str, session_id: str | None = None) -> tuple[int, int]:
        """(judged, referenced) usage rows of the project (or of one of its sessions): each row
        is one injected item `nous/feedback` judged against a reply."""
        where, args = _of(project, session_id)
        row = self._db.conn.execute(
            f"SELECT count(*), coalesce(sum(referenced), 0) FROM usage WHERE {where}", args
        ).fetchone()
        return int(row[0]), int(row[1])

    def answers(self, project: str, session_id: str | None = None) -> list[Answer]:
        """The project's (or one of its sessions') fingerprints, oldest first."""
        where, args = _of(project, session_id)
        rows = self._db.conn.execute(
            "SELECT session_id, mode, frame, total_tokens, budget, refresh, conversation_tokens, "
            f"elapsed_ms, cold, id, at, profile, items FROM fingerprints WHERE {where} "
            "ORDER BY id",
            args,
        ).fetchall()
        return [_answer(row) for row in rows]

    def judged(self, project: str, session_id: str | None = None) -> list[Judged]:
        """The project's (or one of its sessions') usage rows, oldest first."""
        where, args = _of(project, session_id)
        rows = self._db.conn.execute(
            f"SELECT session_id, memory_id, at, referenced FROM usage WHERE {where} "
            "ORDER BY at, rowid",
            args,
        ).fetchall()
        return [Judged(s, m, at, bool(r)) for s, m, at, r in rows]

    def session_decisions(self, scope: str) -> dict[str, list[tuple[str, str]]]:
        """(decision id, outcome) of the reviewed decisions each chat session of `scope` left,
        by session: a decision (or a captured decision note, tag `dec`) whose source names the
        session (`chat:<session>`, as `@nous /remember` writes it, or `chat:<session>#<turn>`,
        as capture does) with a final outcome logged; a forgotten one does not count."""
        rows = self._db.conn.execute(
            "SELECT id, source, outcome FROM memories INDEXED BY memories_source "
            "WHERE source >= 'chat:' AND source < 'chat;' AND scope = ? "
            "AND (kind = 'decision' OR (kind = 'note' AND EXISTS "
            "(SELECT 1 FROM json_each(memories.tags) WHERE value = 'dec'))) "
            "AND outcome IN (?, ?, ?) AND status != 'inactive' ORDER BY seq",
            (scope, *FINAL_OUTCOMES),
        ).fetchall()
        out: dict[str, list[tuple[str, str]]] = {}
        for memory_id, source, outcome in rows:
            session = str(source)[len("chat:") :].rpartition("#")
            name = session[0] if session[1] and session[2].isdigit() else "".join(session)
            if name:
                out.setdefault(name, []).append((str(memory_id), str(outcome)))
        return out


def _answer(row: tuple[Any, ...]) -> Answer:
    s, mode, frame, tokens, budget, refresh, conversation, elapsed, cold, row_id, at = row[:11]
    profile, items = row[11:]
    return Answer(
        s, mode, frame, tokens, budget, refresh, conversation, elapsed, bool(cold), id=row_id,
        at=at, profile=profile, items=None if items is None else tuple(json.loads(items)),
    )  # fmt: skip


def _of(project: str, session_id: str | None) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause (and its arguments) of a project's rows, or of one of its sessions'."""
    if session_id is None:
        return "project = ?", (project,)
    return "project = ? AND session_id = ?", (project, session_id)
