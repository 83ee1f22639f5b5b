"""The memory record (design §1): kinds, scopes, fields, and the draft a writer hands the store."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from nous.errors import InvalidMemory
from nous.protocol import RememberParams

KINDS = (
    "decision",
    "fact",
    "procedure",
    "episode",
    "constraint",
    "preference",
    "correction",
    "convention",
    "note",
)
OUTCOMES = ("success", "partial", "pending", "failure")
_SCOPE_RE = re.compile(r"^(universal|language:[a-z0-9_+#.-]{1,40}|project:[^\s]{1,200})$")


def now() -> str:
    """UTC now as ISO-8601 with a `Z`, millisecond precision (sorts as text)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def check_kind(kind: str) -> str:
    """One of `KINDS`, the kinds recall has a place for (any case). One rule for every writer
    (`nous remember --kind`, `nous/remember`, `nous_remember`, `nous/update`, import) and the
    same list `--kinds` and `kinds` filter by: a memory of another kind would be stored and
    then dropped by every recall (`excluded-kind`), so it is refused with the list instead."""
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise InvalidMemory(f"invalid kind {kind!r}: use one of {', '.join(KINDS)}")
    return kind


def check_scope(scope: str) -> str:
    scope = scope.strip()
    if not _SCOPE_RE.match(scope):
        raise InvalidMemory(
            f"invalid scope {scope!r}: use 'universal', 'language:<id>' or 'project:<id>'"
        )
    return scope


def check_unit(name: str, value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise InvalidMemory(f"{name} must be between 0 and 1, got {value}")
    return float(value)


class Draft(BaseModel):
    """What a writer asks the store to remember; the store derives everything else."""

    kind: str
    content: str
    scope: str | None = None
    """`universal`, `language:<id>` or `project:<id>`; the engine fills in `None` as this
    project, the store as `universal`."""
    tags: list[str] = Field(default_factory=list)
    confidence: float = 1.0
    importance: float = 0.5
    outcome: str | None = None
    source: str = "manual"
    status: str | None = None
    """Initial lifecycle state; `None` means the kind's starting state."""
    superseded_by: str | None = None
    shared: bool = False
    """Also kept in the team store (design §13): set by the engine for scope `team` or when the
    user marks a project memory shared; only a project's memories can be."""

    @classmethod
    def of(cls, params: RememberParams) -> Draft:
        """The draft of a remember request: the one builder the daemon and the CLI share."""
        return cls(
            kind=params.kind, content=params.content, scope=params.scope, tags=params.tags,
            confidence=params.confidence, importance=params.importance, outcome=params.outcome,
            source=params.source,
        )  # fmt: skip

    def validated(self) -> Draft:
        """A copy with every field checked and normalised, or `InvalidMemory`."""
        if not self.content or not self.content.strip():
            raise InvalidMemory("content is empty")
        if self.outcome is not None and self.outcome not in OUTCOMES:
            raise InvalidMemory(
                f"invalid outcome {self.outcome!r}: use one of {', '.join(OUTCOMES)}"
            )
        scope = check_scope(self.scope or "universal")
        if self.shared and not scope.startswith("project:"):
            raise InvalidMemory(
                f"only a project's memories go to the team store: {scope!r} cannot be shared"
            )
        return self.model_copy(
            update={
                "kind": check_kind(self.kind),
                "scope": check_scope(self.scope or "universal"),
                "confidence": check_unit("confidence", self.confidence),
                "importance": check_unit("importance", self.importance),
                "tags": sorted({t.strip() for t in self.tags if t.strip()}),
            }
        )


class Memory(BaseModel):
    """One stored memory with its three renderings and typed metadata."""

    id: str
    kind: str
    scope: str
    content: str
    summary: str
    micro: str
    created_at: str
    updated_at: str
    last_seen_at: str
    status: str
    status_changed_at: str
    confidence: float
    importance: float
    outcome: str | None
    confirmations: int
    activations: int
    frequency: int
    source: str
    content_hash: str
    superseded_by: str | None
    tags: list[str]
    pinned: bool = False
    shared: bool = False
    """Kept in the team store too (design §13)."""
    origin: str = "local"
    """Where this record was read from: `local` (this machine's file) or `team` (the team
    store, written by someone else)."""

    def public(self) -> dict[str, Any]:
        """The record as JSON-ready data (no embedding)."""
        return self.model_dump(mode="json")
