"""The custom methods: params model and use case per method (design §6), the first hop of a
request. Each validates nothing itself (the daemon validated the params with the model named
here), calls one use case and dumps its answer camelCase. Runs on the store thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from nous import browsing
from nous import protocol as p
from nous.context import capture, chat, stats
from nous.engine import Draft, Engine, Memory


def _dump(model: BaseModel) -> dict[str, Any]:
    out: dict[str, Any] = model.model_dump(mode="json", by_alias=True)
    return out


def _record(memory: Memory) -> dict[str, Any]:
    record: dict[str, Any] = p.camelize(memory.public())
    return record


def context(engine: Engine, params: p.ContextParams) -> dict[str, Any]:
    return _dump(chat.context(engine, params))


def recall(engine: Engine, params: p.RecallParams) -> dict[str, Any]:
    return _dump(chat.recall(engine, params))


def remember(engine: Engine, params: p.RememberParams) -> dict[str, Any]:
    result = engine.remember(Draft.of(params))
    return _dump(
        p.RememberResult(
            id=result.memory.id,
            status=result.status,
            memory_status=result.memory.status,
            scope=result.memory.scope,
            redactions=[r.kind for r in result.redactions],
        )
    )


def feedback(engine: Engine, params: p.FeedbackParams) -> dict[str, Any]:
    return _dump(chat.feedback(engine, params))


def turn(engine: Engine, params: p.TurnParams) -> dict[str, Any]:
    return _dump(capture.turn(engine, params))


def forget_session(engine: Engine, params: p.SessionParams) -> dict[str, Any]:
    return _dump(capture.forget_session(engine, params.session_id))


def expand(engine: Engine, params: p.ExpandParams) -> dict[str, Any]:
    memory, session = chat.expand(engine, params.id, params.session_id)
    return {"memory": _record(memory), "session": _dump(session)}


def forget(engine: Engine, params: p.ForgetParams) -> dict[str, Any]:
    return _record(engine.forget(params.id, params.purge))


def supersede(engine: Engine, params: p.SupersedeParams) -> dict[str, Any]:
    return _record(engine.supersede(params.id, params.new_id))


def outcome(engine: Engine, params: p.OutcomeParams) -> dict[str, Any]:
    return _record(engine.outcome(params.id, params.outcome))


def status(engine: Engine, params: p.StatusParams) -> dict[str, Any]:
    return engine.status()


def stats_of(engine: Engine, params: p.StatsParams) -> dict[str, Any]:
    return _dump(stats.compute(engine.store, engine.project_key, params.session_id))


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
    p.NOUS_TURN: (p.TurnParams, turn),
    p.NOUS_FORGET_SESSION: (p.SessionParams, forget_session),
    p.NOUS_EXPAND: (p.ExpandParams, expand),
    p.NOUS_FORGET: (p.ForgetParams, forget),
    p.NOUS_SUPERSEDE: (p.SupersedeParams, supersede),
    p.NOUS_OUTCOME: (p.OutcomeParams, outcome),
    p.NOUS_STATUS: (p.StatusParams, status),
    p.NOUS_STATS: (p.StatsParams, stats_of),
    p.NOUS_LIST: (p.ListParams, list_memories),
    p.NOUS_UPDATE: (p.UpdateParams, update),
}
PARAMS_OPTIONAL = frozenset({p.NOUS_STATUS, p.NOUS_STATS, p.NOUS_LIST})
INJECTING = frozenset({p.NOUS_CONTEXT, p.NOUS_RECALL, p.NOUS_EXPAND})
