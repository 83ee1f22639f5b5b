"""Editing a memory in place (the memory browser, design §11): what an edit asks for (`Edit`),
what it did (`EditResult`) and the store's side of it (`Editor`, behind `MemoryStore.edit`): new
content normalised, redacted, re-rendered and re-embedded, the status moved only along its
kind's legal transitions."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nous.errors import InvalidMemory
from nous.memory import lifecycle, renderings, turns
from nous.memory import scope as scopes
from nous.memory.database import Database
from nous.memory.embedder import Embedder
from nous.memory.model import OUTCOMES, Memory, check_kind, check_unit, now
from nous.memory.rows import blob, read
from nous.text import secrets
from nous.text.secrets import Redaction
from nous.text.tokens import TokenCounter


@dataclass(frozen=True)
class Edit:
    """What `MemoryStore.edit` changes; `None` leaves a field as it is."""

    content: str | None = None
    kind: str | None = None
    scope: str | None = None
    tags: list[str] | None = None
    pinned: bool | None = None
    importance: float | None = None
    outcome: str | None = None
    status: str | None = None
    shared: bool | None = None


@dataclass
class EditResult:
    memory: Memory
    changed: list[str]
    """Record fields (snake_case) whose value changed."""
    reembedded: bool
    redactions: list[Redaction] = field(default_factory=list)


def edited_status(memory: Memory, kind: str, changes: Edit, outcome: str | None) -> tuple[str, str]:
    """The status after an edit and why: a new kind whose machine lacks the current state starts
    over; a logged outcome moves a decision; pinning a fact-like memory makes it `core`; an
    asked-for status must be a legal transition from there."""
    status, reason = memory.status, "edited"
    if kind != memory.kind and status not in lifecycle.machine(kind).edges:
        status, reason = lifecycle.initial(kind), f"kind changed to {kind}"
    if changes.outcome is not None and outcome != memory.outcome:
        status, reason = lifecycle.on_outcome(kind, status, changes.outcome), f"outcome {outcome}"
    if changes.status is not None and changes.status != status:
        if changes.status not in lifecycle.machine(kind).edges:
            states = ", ".join(sorted(lifecycle.machine(kind).edges))
            raise InvalidMemory(
                f"status: {changes.status!r} is not a state {lifecycle.article(kind)} {kind} can "
                f"be in (its states: {states})"
            )
        lifecycle.check(kind, status, changes.status)
        status, reason = changes.status, "set by hand"
    elif changes.status is None and changes.pinned and not memory.pinned:
        m = lifecycle.machine(kind)
        if m is lifecycle.FACTLIKE and m.allows(status, "core"):
            status, reason = "core", "pinned"
    return status, reason


class Editor:
    """Edits of one database's memories; `after_write` is the store's (the vector index, the
    WAL bound, the team's outbox)."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        counter: TokenCounter,
        after_write: Callable[[], None],
    ) -> None:
        self._db = db
        self._embedder = embedder
        self.counter = counter
        self._after_write = after_write

    def edit(self, memory_id: str, changes: Edit) -> EditResult:
        """Change a memory in place: new content is normalised, redacted, re-rendered and
        re-embedded (unchanged text is not); kind, scope, tags, pin, importance and outcome as
        given; the status only through its kind's legal transitions (`InvalidTransition`)."""
        memory = read(self._db.conn, memory_id)
        kind = check_kind(changes.kind) if changes.kind is not None else memory.kind
        scope = scopes.check(changes.scope) if changes.scope is not None else memory.scope
        found: list[Redaction] = []
        content = memory.content
        if changes.content is not None:
            content, found = secrets.redact(renderings.normalise(changes.content))
            if not content.strip():
                raise InvalidMemory("content is empty")
        tags = memory.tags
        if changes.tags is not None:
            tags = []
            for tag in changes.tags:
                clean_tag, in_tag = secrets.redact(tag.strip())
                found += in_tag
                if clean_tag:
                    tags.append(clean_tag)
            tags = sorted(set(tags))
        importance = memory.importance
        if changes.importance is not None:
            importance = check_unit("importance", changes.importance)
        outcome = memory.outcome
        if changes.outcome is not None:
            if changes.outcome not in OUTCOMES:
                raise InvalidMemory(
                    f"invalid outcome {changes.outcome!r}: use one of {', '.join(OUTCOMES)}"
                )
            outcome = changes.outcome
        shared = memory.shared if changes.shared is None else changes.shared
        if shared and not scopes.is_project(scope):
            raise InvalidMemory(
                f"shared: only a project's memories go to the team store, not {scope}'s"
            )
        content_hash = renderings.content_hash(content, turns.session_of(memory.source))
        reembed = content_hash != memory.content_hash
        if (scope, content_hash) != (memory.scope, memory.content_hash):
            row = self._db.conn.execute(
                "SELECT id FROM memories WHERE scope = ? AND content_hash = ? AND id != ?",
                (scope, content_hash, memory_id),
            ).fetchone()
            if row is not None:
                raise InvalidMemory(f"memory {row[0]} already holds this text in {scope}")
        vector = self._embedder.embed(content) if reembed else None
        args = (outcome, memory.confidence, self.counter)
        with self._db.write():
            current = read(self._db.conn, memory_id)
            status, reason = edited_status(current, kind, changes, outcome)
            values: dict[str, Any] = {
                "kind": kind, "scope": scope, "tags": json.dumps(tags), "importance": importance,
                "outcome": outcome,
                "pinned": int(changes.pinned if changes.pinned is not None else current.pinned),
                "shared": int(shared),
            }  # fmt: skip
            if reembed or kind != current.kind or outcome != current.outcome:
                values["summary"] = renderings.summary(kind, content, *args)
                values["micro"] = renderings.micro(kind, content, *args)
            if reembed:
                assert vector is not None
                values.update(
                    content=content, content_hash=content_hash, embedding=blob(vector),
                    embedding_model=self._embedder.name,
                )  # fmt: skip
            before = current.model_dump()
            stamp = now()
            if status != current.status:
                values["status_changed_at"] = stamp
                self._db.log_transition(memory_id, current.status, status, stamp, reason)
            values["status"] = status
            if reembed or "summary" in values or tags != current.tags:
                values["redaction"] = None  # new text: scrubbed on read until resealed
            sets = ", ".join(f"{k} = ?" for k in values)
            self._db.conn.execute(
                f"UPDATE memories SET {sets}, updated_at = ?, change_seq = ? WHERE id = ?",
                (*values.values(), stamp, self._db.next_change(), memory_id),
            )
        self._after_write()
        after = read(self._db.conn, memory_id)
        changed = [
            k for k, v in after.model_dump().items()
            if k not in ("updated_at", "status_changed_at", "content_hash") and before.get(k) != v
        ]  # fmt: skip
        return EditResult(after, changed, reembed, found)
