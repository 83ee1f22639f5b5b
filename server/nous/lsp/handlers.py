"""The custom methods: params model and use case per method (SPEC §6). Runs on the store thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from nous import browsing
from nous import protocol as p
from nous.engine import Engine
from nous.memory.model import Draft


class ExpandParams(p.IdParams):
    session_id: str | None = Field(default=None, max_length=200)


class StatusParams(p.Params):
    pass


def context(engine: Engine, params: p.ContextParams) -> dict[str, Any]:
    return engine.context(params).model_dump(mode="json", by_alias=True)


def recall(engine: Engine, params: p.RecallParams) -> dict[str, Any]:
    return engine.recall_request(params).model_dump(mode="json", by_alias=True)


def remember(engine: Engine, params: p.RememberParams) -> dict[str, Any]:
    result = engine.remember(
        Draft(
            kind=params.kind, content=params.content, scope=params.scope, tags=params.tags,
            confidence=params.confidence, importance=params.importance, outcome=params.outcome,
            source=params.source,
        )
    )  # fmt: skip
    return p.RememberResult(
        id=result.memory.id,
        status=result.status,
        memory_status=result.memory.status,
        scope=result.memory.scope,
        redactions=[r.kind for r in result.redactions],
    ).model_dump(mode="json", by_alias=True)


def feedback(engine: Engine, params: p.FeedbackParams) -> dict[str, Any]:
    return engine.feedback(params).model_dump(mode="json", by_alias=True)


def _record(memory: Any) -> dict[str, Any]:
    data: dict[str, Any] = memory.public()
    return {_camel(k): v for k, v in data.items()}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def expand(engine: Engine, params: ExpandParams) -> dict[str, Any]:
    memory, session = engine.expand_into_session(params.id, params.session_id)
    return {"memory": _record(memory), "session": session.model_dump(mode="json", by_alias=True)}


def forget(engine: Engine, params: p.ForgetParams) -> dict[str, Any]:
    return _record(engine.forget(params.id, params.purge))


def supersede(engine: Engine, params: p.SupersedeParams) -> dict[str, Any]:
    return _record(engine.supersede(params.id, params.new_id))


def outcome(engine: Engine, params: p.OutcomeParams) -> dict[str, Any]:
    return _record(engine.outcome(params.id, params.outcome))


def status(engine: Engine, params: StatusParams) -> dict[str, Any]:
    return engine.status()


def list_memories(engine: Engine, params: p.ListParams) -> dict[str, Any]:
    return browsing.list_memories(engine, params).model_dump(mode="json", by_alias=True)


def update(engine: Engine, params: p.UpdateParams) -> dict[str, Any]:
    return browsing.update(engine, params).model_dump(mode="json", by_alias=True)


Handler = Callable[[Engine, Any], dict[str, Any]]
METHODS: dict[str, tuple[type[BaseModel], Handler]] = {
    p.NOUS_CONTEXT: (p.ContextParams, context),
    p.NOUS_RECALL: (p.RecallParams, recall),
    p.NOUS_REMEMBER: (p.RememberParams, remember),
    p.NOUS_FEEDBACK: (p.FeedbackParams, feedback),
    p.NOUS_EXPAND: (ExpandParams, expand),
    p.NOUS_FORGET: (p.ForgetParams, forget),
    p.NOUS_SUPERSEDE: (p.SupersedeParams, supersede),
    p.NOUS_OUTCOME: (p.OutcomeParams, outcome),
    p.NOUS_STATUS: (StatusParams, status),
    p.NOUS_LIST: (p.ListParams, list_memories),
    p.NOUS_UPDATE: (p.UpdateParams, update),
}
PARAMS_OPTIONAL = frozenset({p.NOUS_STATUS, p.NOUS_LIST})
INJECTING = frozenset({p.NOUS_CONTEXT, p.NOUS_RECALL, p.NOUS_EXPAND})
