"""The chat use cases: `nous/context`, `nous/recall`, `nous/expand` and `nous/feedback` over a
session. The middle hop of a request (handler → here → store): each computes the frame and the
query vector once and hands them along; the session policy is `session.py`, the assembly
`pipeline.py`, the rows the store's. Needs no server: the CLI, the daemon, the evaluation and
the benchmark call the same functions."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from nous.context import config as configs
from nous.context import frame as frames
from nous.context import pipeline
from nous.context import session as sessions
from nous.context.config import Config
from nous.errors import InvalidMemory
from nous.memory import scope
from nous.memory.embedder import Vector
from nous.memory.interface import Store
from nous.memory.model import KINDS, Memory
from nous.memory.usage import Session
from nous.protocol import (
    ContextParams,
    ContextResult,
    FeedbackParams,
    FeedbackResult,
    Item,
    Limit,
    RecallParams,
    SessionUse,
    TurnParams,
    keeps_turns,
)
from nous.settings import Settings, for_agent


class Folder(Protocol):
    """What a request needs of the workspace folder it comes from (`nous.engine.Engine`)."""

    settings: Settings
    config: Config
    last_session: str | None
    later: Callable[[Callable[[], object]], object]

    @property
    def store(self) -> Store: ...
    @property
    def project_key(self) -> str: ...
    def view(self, active_file: str | None = None) -> pipeline.View: ...
    def resolve_scope(self, scope: str | None) -> str: ...
    def own(self, memory_id: str) -> Memory: ...


def _session(folder: Folder, session_id: str | None, settings: Settings | None = None) -> Session:
    """The session row (its cap is set when it is first opened: `settings`' session cap)."""
    cap = (settings or folder.settings).session_cap
    return sessions.open_session(folder.store, session_id, folder.project_key, cap)


def _limits(folder: Folder, agent: bool) -> Settings:
    """The folder's settings, with an agent's recall limit and session cap for an agent's
    session (design §3: an agent's connection runs many tasks)."""
    return for_agent(folder.settings) if agent else folder.settings


def context(folder: Folder, params: ContextParams) -> ContextResult:
    """`nous/context`: startup (counted against the session cap) or turn mode."""
    started = time.perf_counter()
    store, settings = folder.store, _limits(folder, params.agent)
    session = _session(folder, params.session_id, settings)
    folder.last_session = params.session_id or folder.last_session
    frame = frames.select(params.input, params.frame)
    text = params.input.strip()
    vector: Vector | None = store.embed(text) if text else None
    if params.mode == "startup":
        requested = params.budget or settings.startup_budget
    else:
        requested = params.budget or folder.config.frames.budgets.get(frame, 3000)
        if params.model_max_tokens:
            requested = min(requested, int(params.model_max_tokens * settings.model_window_share))
    granted, limit = sessions.grant(session, params.mode, requested)
    if limit is not None and granted == 0:  # the session cap is spent: a clear no
        return sessions.refused(session, params.mode, frame, limit)
    note = limit.message if limit else None
    refresh = (
        sessions.refresh_reason(folder.config, session, vector, frame)
        if params.session_id and params.mode == "turn"
        else None
    )
    result = pipeline.assemble(
        store,
        folder.config,
        folder.view(params.active_file),
        pipeline.Request(
            input=params.input, mode=params.mode, budget=granted, frame=frame,
            profile=params.profile, conversation=params.conversation,
            instructions=params.injected_instructions, cut_note=note, vector=vector,
            session_id=params.session_id,
            injected=frozenset(str(e["id"]) for e in session.injected)
            if params.session_id
            else frozenset(),
        ),
    )  # fmt: skip
    result.refresh = refresh
    if params.preview:  # shown, not injected: the session and the chat's memory stay as they were
        result.session = sessions.use_of(session, cut=limit is not None)
        result.limit = limit
        return result
    topic = vector if params.session_id else None
    elapsed = round((time.perf_counter() - started) * 1000, 2)  # the answer built, not yet kept
    cost = sessions.Cost(params.conversation_tokens, elapsed)
    sessions.record(store, session, result, params.mode == "startup", topic, cost)
    answer = _finish(session, result, limit)
    if params.mode == "turn":  # the user's message is a turn of the session (design §10)
        _keep(folder, params.session_id, "user", text, vector)
    return answer


def _keep(
    folder: Folder, session_id: str | None, role: Literal["user", "assistant"], text: str,
    vector: Vector | None = None, injected: Sequence[str] = (),
) -> None:  # fmt: skip
    if keeps_turns(session_id) and text.strip():
        params = TurnParams(session_id=session_id, role=role, text=text)
        from nous.context import capture  # a chat turn's writer: not needed by one-shot commands

        folder.later(lambda: capture.turn(folder, params, vector, injected))


def recall(folder: Folder, params: RecallParams) -> ContextResult:
    """`nous/recall`: the recall budget, at most `max_recalls_per_session` per session."""
    settings = _limits(folder, params.agent)
    unknown = [k for k in params.kinds or () if k.strip().lower() not in KINDS]
    if unknown:  # the same rule as a memory's kind (`check_kind`): named, with the list
        raise InvalidMemory(f"kinds: invalid kind {unknown[0]!r}: use one of {', '.join(KINDS)}")
    session = _session(folder, params.session_id, settings)
    folder.last_session = params.session_id or folder.last_session
    requested = params.budget or settings.recall_budget
    granted, limit = sessions.recall_grant(
        session, bool(params.session_id), requested, settings.max_recalls_per_session
    )
    if limit is not None and granted == 0:  # refused: not assembled, not counted
        return sessions.refused(session, "recall", frames.select(params.query, None), limit)
    note = limit.message if limit else None
    view = folder.view()
    if params.scope:
        wanted = folder.resolve_scope(params.scope)
        view_scopes = [s for s in view.scopes if s == wanted] or [view.project_scope]
        view.languages = scope.languages_of(view_scopes)
    # the session asking is named only to leave its own turns out
    asked = _recall(params.query, granted, params.kinds, note, params.session_id)
    result = pipeline.assemble(folder.store, folder.config, view, asked)
    sessions.record(folder.store, session, result, True, None)
    return _finish(session, result, limit)


def _recall(
    query: str, budget: int, kinds: Sequence[str] | None = None, note: str | None = None,
    session_id: str | None = None,
) -> pipeline.Request:  # fmt: skip
    """The one recall: the pipeline's `recall` mode (over the view's scopes)."""
    return pipeline.Request(
        input=query, mode="recall", budget=budget, kinds=list(kinds or []) or None,
        cut_note=note, session_id=session_id,
    )  # fmt: skip


def recall_in(
    store: Store,
    query: str,
    scopes: Sequence[str],
    budget: int = 500,
    kinds: Sequence[str] | None = None,
    config: Config | None = None,
) -> ContextResult:
    """Recall for a caller holding a store and scopes (the evaluation): the same recall, with
    the view drawn from the scopes."""
    project = next((s for s in scopes if scope.is_project(s)), scope.project("-"))
    view = pipeline.View(
        project=scope.name(project), project_scope=project, languages=scope.languages_of(scopes)
    )
    return pipeline.assemble(
        store, config or configs.defaults(), view, _recall(query, budget, kinds)
    )


def ranked(result: ContextResult) -> list[Item]:
    """A result's items, best first (what a recall's caller ranks by)."""
    return sorted((i for s in result.sections for i in s.items), key=lambda i: -i.score)


def _finish(session: Session, result: ContextResult, limit: Limit | None) -> ContextResult:
    """The answer with its session's use (recorded by `sessions.record`) and its limit."""
    result.session = sessions.use_of(session, cut=limit is not None)
    if limit is not None:  # cut to fit: the count after this answer
        result.limit = limit.model_copy(update={"used": session.used})
    return result


def feedback(folder: Folder, params: FeedbackParams) -> FeedbackResult:
    """`nous/feedback`: judge what this session injected against the assistant's reply."""
    session = _session(folder, params.session_id)
    given = [str(entry.get("text", "")) for entry in session.injected]
    judged = sessions.feedback(folder.store, folder.config, session, params.response)
    # the reply is a turn too, unless it only says again what the session was given
    _keep(folder, params.session_id, "assistant", params.response, injected=given)
    return judged


def expand(folder: Folder, memory_id: str, session_id: str | None) -> tuple[Memory, SessionUse]:
    """`nous/expand`: the full record; with a session, its content counts against the cap (cut
    to fit)."""
    memory = folder.own(memory_id)
    if not session_id:
        return memory, SessionUse(id=None, used=0, cap=0, remaining=0)
    store = folder.store
    session = _session(folder, session_id)
    cost = store.counter.count(memory.content)
    granted, limit = sessions.grant(session, "expand", cost)
    if limit is not None:
        memory = memory.model_copy(
            update={"content": store.counter.truncate(memory.content, granted)}
        )
    session.injected.append({"id": memory.id, "text": memory.summary, "judged": False})
    store.usage.save_session(session, min(cost, granted))
    return memory, sessions.use_of(session, cut=limit is not None)


def session_use(folder: Folder) -> SessionUse | None:
    """The last session this folder answered for (`nous/status`)."""
    if not folder.last_session:
        return None
    return sessions.use_of(_session(folder, folder.last_session))
