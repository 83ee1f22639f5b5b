"""The seeds' metrics (seed 001's table, design §14) of a project or one of its chat sessions, from
what the store already records: `nous stats` and `nous/stats`.

- context relevance = referenced / judged: the usage rows `nous/feedback` writes, one per
  injected item judged against a reply (target > 40 %);
- budget utilization = the mean, over the answers with a budget, of injected tokens / budget
  (the fingerprint of each startup, turn and recall answer; target 50–90 %);
- refresh rate = refreshes / turns: of a chat session's turns (the fingerprints carrying a
  refresh verdict), those that rebuilt the context (`frame-switch`, `decision-point`,
  `topic-drift`, `token-pressure`; a session's first turn, `initial`, is a build, not a
  rebuild; target < 0.3 per turn);
- cold start = the mean time to build the context (`nous/context`, from the request to the
  answer, before it is kept) of the answers that were their process's first (the daemon's
  first after it started, or a one-shot command's); unknown when none was recorded (target
  < 500 ms);
- context overhead = Σ injected tokens / Σ conversation tokens, over the turns whose client
  reported the conversation's size (`conversationTokens`); unknown when none did (target
  < 15 %).

With `by` (`profile` or `frame`), the referenced share, utilization and refreshes per turn of
each profile's or frame's answers, with their sessions' decisions' outcomes
(`nous.context.outcomes`)."""

from __future__ import annotations

from nous.context import outcomes
from nous.context.outcomes import REBUILDS, By
from nous.memory.interface import Store
from nous.memory.metrics import Answer
from nous.protocol import Metric, StatsResult


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def compute(
    store: Store,
    project: str,
    session_id: str | None = None,
    by: By | None = None,
) -> StatsResult:
    """The five metrics of `project` (a project key), or of its chat session `session_id`;
    with `by`, also per profile or frame."""
    judged, referenced = store.metrics.usage_counts(project, session_id)
    answers = store.metrics.answers(project, session_id)
    result = StatsResult(
        project=project,
        session_id=session_id,
        sessions=len({a.session_id for a in answers if _chat(a.session_id)}),
        answers=len(answers),
        turns=len(_turns(answers)),
        refreshes=sum(1 for a in _turns(answers) if a.refresh in REBUILDS),
        judged=judged,
        referenced=referenced,
        metrics=[
            _relevance(judged, referenced),
            _utilization(answers),
            _refresh(answers),
            _cold_start(answers),
            _overhead(answers),
        ],
    )
    if by is not None:
        decisions = store.metrics.session_decisions(f"project:{project}")  # the project's scope
        learned, unattributed = outcomes.learn(
            answers, store.metrics.judged(project, session_id), decisions
        )
        result.by, result.groups = by, outcomes.groups(learned, by)
        result.unattributed = unattributed
    return result


def _chat(session_id: str | None) -> bool:
    return outcomes.is_chat(session_id)


def _turns(answers: list[Answer]) -> list[Answer]:
    return [a for a in answers if outcomes.is_turn(a)]


def _relevance(judged: int, referenced: int) -> Metric:
    value = _share(referenced, judged)
    return Metric(
        name="contextRelevance", value=value, unit="share", target="> 40 % referenced",
        met=None if value is None else value > 0.40,
        basis=f"referenced {referenced} of {judged} judged injected items"
        if judged
        else "unknown: no reply was judged (nous/feedback)",
    )  # fmt: skip


def _utilization(answers: list[Answer]) -> Metric:
    budgeted = [a for a in answers if a.budget > 0]
    value = _share(sum(a.tokens / a.budget for a in budgeted), len(budgeted))
    return Metric(
        name="budgetUtilization", value=value, unit="share", target="50–90 % of the budget",
        met=None if value is None else 0.50 <= value <= 0.90,
        basis=f"mean injected tokens / budget over {len(budgeted)} answers"
        if budgeted
        else "unknown: no answer with a budget was recorded",
    )  # fmt: skip


def _refresh(answers: list[Answer]) -> Metric:
    turns = _turns(answers)
    rebuilt = sum(1 for a in turns if a.refresh in REBUILDS)
    value = _share(rebuilt, len(turns))
    return Metric(
        name="refreshRate", value=value, unit="perTurn", target="< 0.3 per turn",
        met=None if value is None else value < 0.3,
        basis=f"{rebuilt} refreshes in {len(turns)} session turns"
        if turns
        else "unknown: no chat-session turn was recorded",
    )  # fmt: skip


def _cold_start(answers: list[Answer]) -> Metric:
    cold = [a.elapsed_ms for a in answers if a.cold and a.elapsed_ms is not None]
    value = _share(sum(cold), len(cold))
    return Metric(
        name="coldStart", value=value, unit="ms", target="< 500 ms",
        met=None if value is None else value < 500,
        basis=f"mean of {len(cold)} first context answers of a process"
        if cold
        else "unknown: no process's first context answer was recorded",
    )  # fmt: skip


def _overhead(answers: list[Answer]) -> Metric:
    reported = [a for a in answers if a.conversation_tokens]
    injected = sum(a.tokens for a in reported)
    conversation = sum(a.conversation_tokens or 0 for a in reported)
    value = _share(injected, conversation)
    return Metric(
        name="overhead", value=value, unit="share", target="< 15 % of the conversation's tokens",
        met=None if value is None else value < 0.15,
        basis=f"{injected} injected of {conversation} conversation tokens over "
        f"{len(reported)} answers"
        if reported
        else "unknown: the client reported no conversation tokens (conversationTokens)",
    )  # fmt: skip
