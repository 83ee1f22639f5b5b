"""The rows the seeds' metrics and the calibration note read (design §14): reviewed decisions with
their stated confidence, judged usage and fingerprints per project or chat session. Reads only
(`MetricRows`, part of `MemoryStore`); the figures are computed by `nous.context.calibration`
and `nous.context.stats`."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

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


class MetricRows:
    """Reads over `memories`, `usage`, `sessions` and `fingerprints` (a part of `MemoryStore`)."""

    _conn: sqlite3.Connection

    def reviewed_decisions(self, scope: str, limit: int = 50) -> list[tuple[float, str]]:
        """(confidence, outcome) of the scope's most recently reviewed decisions, newest first.

        Reviewed: a final outcome (success, partial, failure) is logged; a forgotten
        (`inactive`) decision is left out. Harvested records (sources `file:` and `git:`: ADRs,
        decision logs, commits) state no confidence (the harvest writes 1.0), so they do not
        count; a decision remembered by a person or a chat does, with the confidence it was
        given (1.0 when none was)."""
        rows = self._conn.execute(
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
        row = self._conn.execute(
            f"SELECT count(*), coalesce(sum(referenced), 0) FROM usage WHERE {where}", args
        ).fetchone()
        return int(row[0]), int(row[1])

    def answers(self, project: str, session_id: str | None = None) -> list[Answer]:
        """The project's (or one of its sessions') fingerprints, oldest first."""
        where, args = _of(project, session_id)
        rows = self._conn.execute(
            "SELECT session_id, mode, frame, total_tokens, budget, refresh, conversation_tokens, "
            f"elapsed_ms, cold FROM fingerprints WHERE {where} ORDER BY id",
            args,
        ).fetchall()
        return [
            Answer(s, mode, frame, tokens, budget, refresh, conversation, elapsed, bool(cold))
            for s, mode, frame, tokens, budget, refresh, conversation, elapsed, cold in rows
        ]


def _of(project: str, session_id: str | None) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause (and its arguments) of a project's rows, or of one of its sessions'."""
    if session_id is None:
        return "project = ?", (project,)
    return "project = ? AND session_id = ?", (project, session_id)
