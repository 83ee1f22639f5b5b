"""Wire models of the custom JSON-RPC methods (design §6): camelCase on the wire, snake_case here.

The daemon validates params with these models and sends `model_dump(mode="json", by_alias=True)`;
the use cases take and return them, so the CLI and the daemon share one shape.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator
from pydantic.alias_generators import to_camel

NOUS_CONTEXT = "nous/context"
NOUS_RECALL = "nous/recall"
NOUS_REMEMBER = "nous/remember"
NOUS_FEEDBACK = "nous/feedback"
NOUS_TURN = "nous/turn"
NOUS_FORGET_SESSION = "nous/forgetSession"
NOUS_EXPAND = "nous/expand"
NOUS_FORGET = "nous/forget"
NOUS_SUPERSEDE = "nous/supersede"
NOUS_OUTCOME = "nous/outcome"
NOUS_STATUS = "nous/status"
NOUS_STATS = "nous/stats"
NOUS_LIST = "nous/list"
NOUS_UPDATE = "nous/update"
NOUS_BUDGET = "nous/budget"
NOUS_INDEXED = "nous/indexed"

MAX_TEXT = 200_000
"""Longest accepted free text (input, query, content, response), in characters."""


class Wire(BaseModel):
    """camelCase aliases, populate by either name, unknown keys ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class Params(Wire):
    """What a client sends: strict types, nothing coerced. `"800"` or `true` for a number,
    `"0.5"` for a float, `1` for a boolean, `5` for a string are -32602 naming the field (a
    JSON integer is still a valid float)."""

    model_config = ConfigDict(strict=True)


class Message(Params):
    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(max_length=MAX_TEXT)


class ContextParams(Params):
    input: str = Field(default="", max_length=MAX_TEXT)
    mode: Literal["startup", "turn"] = "turn"
    session_id: str | None = Field(default=None, max_length=200)
    conversation: list[Message] = Field(default_factory=list, max_length=500)
    frame: str | None = None
    profile: str | None = None
    budget: int | None = Field(default=None, ge=1, le=1_000_000)
    model_max_tokens: int | None = Field(default=None, ge=1, le=100_000_000)
    active_file: str | None = Field(default=None, max_length=4096)
    injected_instructions: list[str] = Field(default_factory=list, max_length=50)
    """Instruction-file text the client already injects (AGENTS.md, copilot-instructions)."""
    preview: bool = False
    """Only show what would be injected (Show Context for…, `@nous /context`): no chat turn is
    kept and the session records no injection (its feedback never judges what was only shown)."""
    agent: bool = False
    """The session is an agent's (agent-mode tools, a long-running connection): the agent's
    recall limit and session cap apply (`agentMaxRecalls`, `agentSessionCap`), fixed when the
    session is first opened."""
    conversation_tokens: int | None = Field(default=None, ge=0, le=100_000_000)
    """The tokens of the whole conversation so far, as the client counts them (the chat
    history it sends the model, this turn's input included): `nous stats`' context overhead
    is the injected tokens over these."""


class RecallParams(Params):
    query: str = Field(min_length=1, max_length=MAX_TEXT)
    session_id: str | None = Field(default=None, max_length=200)
    kinds: list[str] | None = Field(default=None, max_length=50)
    scope: str | None = Field(default=None, max_length=300)
    budget: int | None = Field(default=None, ge=1, le=1_000_000)
    agent: bool = False
    """The session is an agent's (agent-mode tools, a long-running connection): the agent's
    recall limit and session cap apply (`agentMaxRecalls`, `agentSessionCap`), fixed when the
    session is first opened."""


class RememberParams(Params):
    kind: str = Field(min_length=1, max_length=40)
    content: str = Field(min_length=1, max_length=MAX_TEXT)
    scope: str | None = Field(default=None, max_length=300)
    tags: list[str] = Field(default_factory=list, max_length=50)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    outcome: Literal["success", "partial", "pending", "failure"] | None = None
    source: str = Field(default="chat", max_length=1000)


class FeedbackParams(Params):
    session_id: str = Field(min_length=1, max_length=200)
    response: str = Field(max_length=MAX_TEXT)


class TurnParams(Params):
    """One chat turn to keep (design §10): who said it, what, and where in the session."""

    session_id: str = Field(min_length=1, max_length=200, pattern=r"^[^#]+$")
    role: Literal["user", "assistant"]
    text: str = Field(max_length=MAX_TEXT)
    index: int | None = Field(default=None, ge=0, le=1_000_000)
    """The turn's place in the session; by default the one after the last kept."""
    tool: Literal["nous_context", "nous_recall"] | None = None
    """Set when the text is a tool call's input: a query (`nous_recall`) is no memory and is
    never kept; of a task (`nous_context`) only the session notes it states (a decision, a next
    step) are kept."""


class TurnResult(Wire):
    session_id: str
    stored: bool
    """False when capture is off or the turn is small talk or empty."""
    session_only: bool = False
    """Kept for its own session's window only (a turn that only asks): never recalled in
    another session."""
    id: str | None = None
    index: int | None = None
    notes: list[dict[str, str]] = Field(default_factory=list)
    """The session notes drawn from the turn: {id, tag, text}."""


class SessionParams(Params):
    session_id: str = Field(min_length=1, max_length=200, pattern=r"^[^#]+$")


class ForgetSessionResult(Wire):
    session_id: str
    forgotten: int
    """Turns and notes of the session removed for good."""


class IdParams(Params):
    id: str = Field(min_length=1, max_length=100)


class ForgetParams(IdParams):
    purge: bool = False


class SupersedeParams(IdParams):
    new_id: str = Field(min_length=1, max_length=100)


class OutcomeParams(IdParams):
    outcome: Literal["success", "partial", "pending", "failure"]


class ExpandParams(IdParams):
    session_id: str | None = Field(default=None, max_length=200)


class StatusParams(Params):
    pass


class StatsParams(Params):
    """`nous/stats`: the seeds' metrics of this project, or of one of its chat sessions."""

    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    active_file: str | None = Field(default=None, max_length=4096)
    """Picks the workspace folder (the project) as in `nous/context`; else the first."""


class Metric(Wire):
    """One of the seeds' five metrics (seed 001's table, design §14)."""

    name: Literal["contextRelevance", "budgetUtilization", "refreshRate", "coldStart", "overhead"]
    value: float | None
    """None: unknown (nothing recorded to measure it on; `basis` says why)."""
    unit: Literal["share", "perTurn", "ms"]
    target: str
    met: bool | None
    basis: str
    """What the figure was computed from, in words."""


class StatsResult(Wire):
    project: str
    session_id: str | None
    sessions: int
    """Named chat sessions with a recorded answer (one-shot answers have none)."""
    answers: int
    """Answers given (startup, turn, recall), each with a fingerprint."""
    turns: int
    """Turns of chat sessions a refresh verdict was made for."""
    refreshes: int
    judged: int
    """Injected items `nous/feedback` judged against a reply."""
    referenced: int
    metrics: list[Metric]


class Item(Wire):
    """One included memory in a manifest."""

    id: str
    kind: str
    scope: str
    layer: str
    detail: Literal["summary", "micro", "content", "extract"]
    tokens: int
    score: float
    terms: dict[str, float] = Field(default_factory=dict)
    text: str = ""
    source: str = ""
    merged: list[str] = Field(default_factory=list)
    """Ids of other sections of the same document this item's text was drawn from too."""
    sources: list[str] = Field(default_factory=list)
    """Every source the text was drawn from (the item's own first), when it merged several."""
    origin: Literal["local", "team"] = "local"
    """Where the memory was read from: this machine's file, or the team store (design §13)."""


class Dropped(Wire):
    id: str
    kind: str
    reason: Literal[
        "budget", "duplicate-of-conversation", "duplicate", "low-score", "scope",
        "profile-excluded", "secret", "session-cap", "excluded-kind",
    ]  # fmt: skip
    score: float = 0.0
    detail: str = ""


class Section(Wire):
    layer: str
    title: str
    used: int
    cap: int
    items: list[Item] = Field(default_factory=list)


class SessionUse(Wire):
    id: str | None
    used: int
    cap: int
    remaining: int
    recalls: int = 0
    cut: bool = False
    """True when this answer was cut to fit the session cap."""


class Limit(Wire):
    """The limit an answer reached (design §3): `recalls` (recalls per session) or `session-cap`
    (tokens per session). `used` and `max` count the same thing the name says, after this
    answer; `message` is the sentence to show the user."""

    name: Literal["recalls", "session-cap"]
    used: int
    max: int
    message: str


class ContextResult(Wire):
    text: str
    tokens: int
    budget: int
    frame: str
    mode: str
    intent: dict[str, Any] = Field(default_factory=dict)
    sections: list[Section] = Field(default_factory=list)
    dropped: list[Dropped] = Field(default_factory=list)
    session: SessionUse
    fingerprint: dict[str, Any] = Field(default_factory=dict)
    refresh: str | None = None
    notes: list[str] = Field(default_factory=list)
    limit: Limit | None = None
    """Set when a limit refused this answer (nothing injected) or cut it to fit; `None`
    otherwise. A client shows `limit.message`."""

    @field_serializer("intent", "fingerprint")
    def _camel_keys(self, value: dict[str, Any]) -> dict[str, Any]:
        """Free-form maps go on the wire in camelCase too (data keys such as kinds have none)."""
        camel: dict[str, Any] = camelize(value)
        return camel


def camelize(value: Any) -> Any:
    """Every dict key of `value`, recursively, in camelCase."""
    if isinstance(value, dict):
        return {to_camel(k) if isinstance(k, str) else k: camelize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camelize(v) for v in value]
    return value


class RememberResult(Wire):
    id: str
    status: Literal["created", "confirmed"]
    memory_status: str
    scope: str
    redactions: list[str] = Field(default_factory=list)


class FeedbackResult(Wire):
    session_id: str
    referenced: list[str]
    not_referenced: list[str]
    overlaps: dict[str, float] = Field(default_factory=dict)


class BudgetNotification(Wire):
    session_id: str | None
    used: int
    cap: int
    layers: list[dict[str, Any]] = Field(default_factory=list)
    project: str = ""
    team: Literal["off", "up", "connecting", "slow", "down"] = "off"
    """The answering project's team store (design §13): `slow` or `down` means this answer was
    local only (the status bar says so)."""


SourceType = Literal["file", "commit", "chat", "manual"]
Outcome = Literal["success", "partial", "pending", "failure"]


class ListParams(Params):
    """`nous/list`: one page of this project's memories (design §11), filtered and sorted."""

    query: str | None = Field(default=None, max_length=1000)
    """Words that must all occur (as prefixes) in the text or tags; or an id prefix, or a
    piece of the source (`AGENTS.md`, a commit sha)."""
    kinds: list[str] | None = Field(default=None, max_length=50)
    scope: str | None = Field(default=None, max_length=300)
    """`project`, `language`, `language:<id>`, `universal` or this project's full scope."""
    statuses: list[str] | None = Field(default=None, max_length=50)
    """Without it, forgotten (`inactive`) memories are left out; ask for `inactive` to see them."""
    source_types: list[SourceType] | None = Field(default=None, max_length=4)
    since: str | None = Field(default=None, max_length=40)
    """Captured (created) at or after this ISO-8601 time, e.g. `2026-01-31` or
    `2026-01-31T12:00:00Z`."""
    pinned: bool | None = None
    review: bool = False
    """Only what chat captured and nobody reviewed yet (the review queue)."""
    captured: bool | None = None
    """`true`: only what chat captured on its own (turns, session notes); `false`: only
    project knowledge (harvested, committed, remembered on purpose)."""
    ids: list[str] | None = Field(default=None, max_length=500)
    origin: Literal["local", "team"] = "local"
    """`team`: the team store's memories of this project (design §13), last updated first; the
    query, statuses, offset and limit apply, the other filters are local ones."""
    history: bool = False
    """Add each memory's usage history and lifecycle transitions (for a record view)."""
    sort: Literal["recent", "use", "score"] = "recent"
    offset: int = Field(default=0, ge=0, le=10_000_000)
    limit: int = Field(default=50, ge=1, le=500)
    active_file: str | None = Field(default=None, max_length=4096)
    """Picks the workspace folder (project) in a multi-root window, as for `nous/context`."""

    @field_validator("since")
    @classmethod
    def _instant(cls, value: str | None) -> str | None:
        """An ISO-8601 date or time (naive means UTC), as the store writes times."""
        if value is None:
            return None
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise ValueError("not an ISO-8601 date or time, e.g. 2026-01-31") from exc
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class UpdateParams(IdParams):
    """`nous/update`: change a memory in place; only the fields given change."""

    content: str | None = Field(default=None, min_length=1, max_length=MAX_TEXT)
    kind: str | None = Field(default=None, min_length=1, max_length=40)
    scope: str | None = Field(default=None, min_length=1, max_length=300)
    tags: list[str] | None = Field(default=None, max_length=50)
    pinned: bool | None = None
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    outcome: Outcome | None = None
    status: str | None = Field(default=None, min_length=1, max_length=40)
    reviewed: bool | None = None
    """Mark a chat-captured memory kept (`true`) after review; it leaves the review queue."""
    shared: bool | None = None
    """Share a project memory with the team store (`true`) or take it back (`false`)."""
    active_file: str | None = Field(default=None, max_length=4096)


class UsageEntry(Wire):
    session_id: str
    at: str
    referenced: bool
    overlap: float


class TransitionEntry(Wire):
    from_status: str | None
    to_status: str
    at: str
    reason: str


class ListedMemory(Wire):
    """One memory as the browser shows it: the record, where it came from, how it was used."""

    id: str
    kind: str
    scope: str
    status: str
    content: str
    summary: str
    micro: str
    source: str
    source_type: SourceType
    created_at: str
    updated_at: str
    status_changed_at: str
    confidence: float
    importance: float
    outcome: str | None
    confirmations: int
    activations: int
    superseded_by: str | None
    tags: list[str]
    pinned: bool
    reviewed: bool
    captured: bool = False
    """Captured from a chat on its own (a turn or a session note), not project knowledge."""
    shared: bool = False
    """Kept in the team store too (design §13)."""
    origin: Literal["local", "team"] = "local"
    """`team`: read from the team store (someone else's shared memory)."""
    excluded: bool
    """Its state keeps it out of context by default (forgotten, retired)."""
    next_statuses: list[str] = Field(default_factory=list)
    """The states its kind's lifecycle allows from here (what `nous/update` `status` accepts)."""
    injected: int = 0
    referenced: int = 0
    last_injected_at: str | None = None
    last_referenced_at: str | None = None
    usage: list[UsageEntry] | None = None
    transitions: list[TransitionEntry] | None = None


class ListResult(Wire):
    items: list[ListedMemory]
    total: int
    offset: int
    next_offset: int | None
    review_pending: int
    """Chat-captured memories waiting in the review queue (the badge)."""
    project: str
    project_scope: str


class UpdateResult(Wire):
    memory: ListedMemory
    changed: list[str]
    """Wire names of the fields that changed."""
    reembedded: bool
    redactions: list[str] = Field(default_factory=list)
