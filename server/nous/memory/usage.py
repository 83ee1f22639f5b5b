"""Usage records (which injected memories the assistant referenced), chat-session rows and
fingerprints, in SQLite, so the feedback loop and the session cap survive restarts. The rows
only (`Usage`, a store's `usage`); the lifecycle effects of feedback are `memory.feedback`, the
session policy is `nous.context.session`."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from nous.memory.database import Database
from nous.memory.model import Memory, now, parse_time
from nous.memory.rows import read

HALF_LIFE_DAYS = 7.0


@dataclass(frozen=True)
class UsageStats:
    retrieved: int
    referenced: int
    score: float
    """Decayed referenced count (7-day half-life)."""
    decayed_retrieved: float

    @property
    def boost(self) -> float:
        """0.5 (never used) … 1.5 (always used); 1.0 until retrieved at least twice."""
        if self.retrieved < 2 or self.decayed_retrieved <= 0:
            return 1.0
        return 0.5 + min(1.0, self.score / self.decayed_retrieved)


NEUTRAL = UsageStats(0, 0, 0.0, 0.0)


def decay(age_days: float, half_life: float = HALF_LIFE_DAYS) -> float:
    return math.exp(-math.log(2) * max(0.0, age_days) / half_life)


@dataclass
class Session:
    id: str
    project: str
    used: int
    cap: int
    recalls: int
    injected: list[dict[str, Any]]
    state: dict[str, Any]


class Usage:
    """The `usage`, `sessions` and `fingerprints` tables of one database (a store's `usage`)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._answered = False
        """This object (this store, this process) has logged an answer: the next is not cold."""

    def stats(self, ids: list[str], half_life: float = HALF_LIFE_DAYS) -> dict[str, UsageStats]:
        """Usage stats of the given memories (missing ids are neutral)."""
        if not ids:
            return {}
        current = parse_time(now())
        rows: dict[str, list[tuple[str, int]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for memory_id, at, referenced in self._db.conn.execute(
                f"SELECT memory_id, at, referenced FROM usage WHERE memory_id IN ({marks})", chunk
            ):
                rows.setdefault(memory_id, []).append((at, referenced))
        out = {}
        for memory_id, records in rows.items():
            score = decayed = 0.0
            for at, referenced in records:
                weight = decay((current - parse_time(at)).total_seconds() / 86400, half_life)
                decayed += weight
                score += weight * referenced
            out[memory_id] = UsageStats(len(records), sum(r for _, r in records), score, decayed)
        return out

    def record(
        self, session_id: str, outcomes: list[tuple[str, bool, float]], project: str | None = None
    ) -> None:
        """One usage row per (memory id, referenced?, overlap), in the session's project."""
        stamp = now()
        with self._db.write():
            self._db.conn.executemany(
                "INSERT INTO usage (memory_id, session_id, at, referenced, overlap, project) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(m, session_id, stamp, int(r), overlap, project) for m, r, overlap in outcomes],
            )

    def activate(self, memory_id: str) -> Memory:
        """One more activation (an injected memory the assistant referenced)."""
        with self._db.write():
            self._db.conn.execute(
                "UPDATE memories SET activations = activations + 1 WHERE id = ?", (memory_id,)
            )
        return read(self._db.conn, memory_id)

    def load_session(self, session_id: str, project: str, cap: int) -> Session:
        """The project's session row, created on first use: sessions are keyed by (project,
        id), so one project's session id never opens another project's session."""
        row = self._db.conn.execute(
            "SELECT id, project, used, cap, recalls, injected FROM sessions "
            "WHERE project = ? AND id = ?",
            (project, session_id),
        ).fetchone()
        if row is None:
            return Session(session_id, project, 0, cap, 0, [], {})
        injected = json.loads(row[5])
        if isinstance(injected, dict):
            return Session(
                row[0], row[1], row[2], row[3], row[4], injected["items"], injected["state"]
            )
        return Session(row[0], row[1], row[2], row[3], row[4], injected, {})

    def save_session(self, session: Session, added: int) -> Session:
        """Add `added` tokens to the session atomically (re-reading the row inside the write)."""
        stamp = now()
        payload = json.dumps({"items": session.injected[-500:], "state": session.state})
        with self._db.write():
            row = self._db.conn.execute(
                "SELECT used FROM sessions WHERE project = ? AND id = ?",
                (session.project, session.id),
            ).fetchone()
            used = (row[0] if row else 0) + added
            self._db.conn.execute(
                "INSERT INTO sessions (id, project, created_at, updated_at, used, cap, recalls, "
                "injected) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project, id) DO UPDATE SET "
                "updated_at = ?, used = ?, cap = ?, recalls = ?, injected = ?",
                (
                    session.id, session.project, stamp, stamp, used, session.cap, session.recalls,
                    payload, stamp, used, session.cap, session.recalls, payload,
                ),
            )  # fmt: skip
        session.used = used
        return session

    def log_fingerprint(
        self, session_id: str | None, data: dict[str, Any], project: str | None = None
    ) -> None:
        """One row of local fingerprint telemetry (never sent anywhere); `refresh`,
        `conversationTokens`, `elapsedMs` and `items` in `data` are optional (a session's turn
        has the first, a client that reports its conversation's size the second, a built
        context the third, an answer that knows what it injected the ids: `nous stats --by`).
        The first answer this store object logs is marked cold: the process's first."""
        items = data.get("items")
        cold, self._answered = not self._answered, True
        with self._db.write():
            self._db.conn.execute(
                "INSERT INTO fingerprints (session_id, at, frame, mode, complexity, file_count, "
                "file_hash, profile, total_tokens, budget, kinds, compression_ratio, tier_counts, "
                "selected, available, project, refresh, conversation_tokens, elapsed_ms, cold, "
                "items) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id, now(), data["frame"], data["mode"], data["complexity"],
                    data["fileCount"], data["fileHash"], data["profile"], data["totalTokens"],
                    data["budget"], json.dumps(data["kinds"]), data["compressionRatio"],
                    json.dumps(data["tierCounts"]), data["selected"], data["available"],
                    project, data.get("refresh"), data.get("conversationTokens"),
                    data.get("elapsedMs"), int(cold),
                    None if items is None else json.dumps(items),
                ),
            )  # fmt: skip

    def fingerprints(self) -> list[dict[str, Any]]:
        """Every fingerprint row, oldest first (local telemetry; read by tests and `status`)."""
        cursor = self._db.conn.execute("SELECT * FROM fingerprints ORDER BY rowid")
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
