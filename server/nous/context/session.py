"""Session policy (design §3), as functions over values handed in: the session cap across startup,
recalls and expands (cut to fit, and said so), the recall limit, refresh, the topic, feedback.
The session rows live in the store (`nous.memory.usage`); the requests that use this policy are
`nous.context.chat`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np

from nous.context import echo, judge
from nous.context.config import Config
from nous.memory.embedder import Vector
from nous.memory.feedback import apply_feedback
from nous.memory.interface import Store
from nous.memory.usage import Session
from nous.protocol import ContextResult, FeedbackResult, Limit, SessionUse

COUNTED_MODES = frozenset({"startup", "recall", "expand"})


def use_of(session: Session, cut: bool = False) -> SessionUse:
    return SessionUse(
        id=session.id, used=session.used, cap=session.cap,
        remaining=max(0, session.cap - session.used), recalls=session.recalls, cut=cut,
    )  # fmt: skip


def open_session(store: Store, session_id: str | None, project: str, cap: int) -> Session:
    """The session row of `session_id` in `project`, or a fresh ad-hoc one (no id given)."""
    return store.usage.load_session(session_id or f"adhoc-{uuid.uuid4().hex}", project, cap)


def recall_grant(
    session: Session, counted: bool, requested: int, max_recalls: int
) -> tuple[int, Limit | None]:
    """`grant` for a recall, with the per-session recall limit (`counted`: a chat session's,
    not an ad-hoc one). A refused recall grants 0 and is not counted as one."""
    if counted and session.recalls >= max_recalls:
        return 0, Limit(
            name="recalls", used=session.recalls, max=max_recalls,
            message=f"recall limit reached: {session.recalls} of {max_recalls} recalls used in "
            "this session; start a new session to recall more",
        )  # fmt: skip
    return grant(session, "recall", requested)


def grant(session: Session, mode: str, requested: int) -> tuple[int, Limit | None]:
    """The budget this request may use, and the limit that cut it (0: refused), if any."""
    if mode not in COUNTED_MODES:
        return requested, None
    remaining = max(0, session.cap - session.used)
    if requested <= remaining:
        return requested, None
    if remaining == 0:
        message = (
            f"session cap reached: {session.used:,} of {session.cap:,} tokens used in this "
            "session; start a new session for more"
        )
    elif requested > session.cap:
        message = (
            f"budget {requested:,} is above the session cap of {session.cap:,} tokens: "
            f"cut to {remaining:,}"
        )
    else:
        message = (
            f"cut to {remaining:,} tokens: the session has used {session.used:,} of its "
            f"{session.cap:,}"
        )
    return remaining, Limit(name="session-cap", used=session.used, max=session.cap,
                            message=message)  # fmt: skip


def refused(session: Session, mode: str, frame: str, limit: Limit) -> ContextResult:
    """The answer to a request a limit refused: nothing injected, nothing counted, the limit
    named (a caller shows `limit.message`; an agent's tool call is an error)."""
    return ContextResult(
        text="", tokens=0, budget=0, frame=frame, mode=mode, session=use_of(session),
        notes=[limit.message], limit=limit,
    )  # fmt: skip


def refresh_reason(config: Config, session: Session, vector: Vector | None, frame: str) -> str:
    """design §2 refresh: frame switch, drift below the similarity floor, a decision point, or
    token pressure; otherwise `none`. `vector` is the new input's (None when it is empty)."""
    state = session.state
    if not state:
        return "initial"
    if state.get("frame") != frame:
        return "frame-switch"
    if frame == "decision":
        return "decision-point"
    if session.cap and session.used >= config.refresh.pressure * session.cap:
        return "token-pressure"
    previous = state.get("vector")
    if previous and vector is not None:
        similarity = float(np.asarray(previous, dtype=np.float32) @ vector)
        if similarity < config.refresh.similarity:
            return "topic-drift"
    return "none"


@dataclass(frozen=True)
class Cost:
    """What a context cost, as logged with its fingerprint: the conversation's tokens the client
    reported and how long the context took to build."""

    conversation_tokens: int | None = None
    elapsed_ms: float | None = None


def record(
    store: Store,
    session: Session,
    result: ContextResult,
    counted: bool,
    topic: Vector | None = None,
    cost: Cost | None = None,
) -> None:
    """Persist what was injected (for feedback and refresh) and the tokens it cost; `topic` is
    the embedding of the input the context was built for (what refresh compares against). The
    fingerprint is logged with the turn's refresh verdict, the conversation's tokens the client
    reported, how long the context took to build and the ids it injected (`nous stats`, whose
    `--by` credits a judged item to the answer that injected it)."""
    items = [item for section in result.sections for item in section.items]
    session.injected += [{"id": i.id, "text": i.text, "judged": False} for i in items]
    state: dict[str, object] = {"frame": result.frame}
    if topic is not None:
        state["vector"] = [round(float(x), 5) for x in topic]
    elif session.state.get("vector"):
        state["vector"] = session.state["vector"]
    session.state = state
    if result.mode == "recall":
        session.recalls += 1
    store.usage.save_session(session, result.tokens if counted else 0)
    logged = {**result.fingerprint, "refresh": result.refresh,
              "conversationTokens": cost.conversation_tokens if cost else None,
              "elapsedMs": cost.elapsed_ms if cost else None,
              "items": [i.id for i in items]}  # fmt: skip
    store.usage.log_fingerprint(session.id, logged, session.project)


def feedback(store: Store, config: Config, session: Session, response: str) -> FeedbackResult:
    """Judge each not-yet-judged injected memory referenced or not (`judge`: by meaning and
    rare shared terms; the reply's sentences and the items embedded in one pass, but for the
    items injected whole, whose stored vector is of the same text); write usage
    records; apply lifecycle effects. `overlaps` carries each item's judge score (0..1).

    An injected turn that is the assistant's own earlier reply, kept by capture
    (`echo.own_reply`), is judged but never credited: a reply that says again what an earlier
    reply said is the model's echo of itself, not a use of memory; it gets no usage row either
    way and is listed in `echoes`."""
    pending: dict[str, str] = {}
    for entry in session.injected:
        if not entry.get("judged"):
            pending.setdefault(str(entry["id"]), str(entry.get("text", "")))
            entry["judged"] = True
    ids = list(pending)
    live = store.get_many(ids)
    texts = list(pending.values())
    same = [m for m, text in pending.items() if m in live and live[m].content == text]
    stored = store.vectors(same) if same else {}
    known = {i: stored[m] for i, m in enumerate(ids) if m in stored}  # not embedded again
    found = judge.judge(store.embed_many, response, texts, config.judge.model,
                        config.judge.threshold, known)  # fmt: skip
    verdicts = dict(zip(ids, found, strict=True))
    echoes = [m for m in ids if m in live and echo.own_reply(live[m])]
    counted = [m for m in ids if m in live and m not in echoes]
    store.usage.record(
        session.id, [(m, verdicts[m].referenced, verdicts[m].score) for m in counted],
        session.project,
    )  # fmt: skip
    for memory_id in counted:
        apply_feedback(store, memory_id, verdicts[memory_id].referenced)
    store.usage.save_session(session, 0)
    return FeedbackResult(
        session_id=session.id,
        referenced=[m for m in ids if verdicts[m].referenced and m not in echoes],
        not_referenced=[m for m in ids if not verdicts[m].referenced and m not in echoes],
        echoes=echoes,
        overlaps={m: v.score for m, v in verdicts.items()},
    )
