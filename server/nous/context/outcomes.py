"""Fingerprints that learn (seed 002: "log profiles + fingerprints to correlate with
success/failure"): each logged answer gets its session's outcome signals, and `nous stats --by
profile|frame` breaks the seeds' figures down by them, so a profile or frame whose answers load
what is never used shows up.

- items referenced: a judged usage row is credited to the answer that injected its memory (the
  latest answer of the same session, logged no later than the judgement, whose fingerprint names
  the memory); a row no answer names (logged before fingerprints named their items, or a memory
  only expanded) is `unattributed`;
- decisions' outcomes: the reviewed decisions a chat session left (remembered with the
  session's source, `@nous /remember`, or captured from its turns) count for every answer of
  that session, once per group.

Reads what the store already holds (`store.metrics`); needs no server."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from nous.memory.metrics import Answer, Judged
from nous.protocol import StatsGroup

OUTCOME_VALUES = {"success": 1.0, "partial": 0.5, "failure": 0.0}
"""A reviewed decision's worth, as the calibration note counts it (partial half)."""

REBUILDS = frozenset({"frame-switch", "decision-point", "topic-drift", "token-pressure"})
"""Refresh verdicts that rebuilt the context (`session.refresh_reason`)."""

By = Literal["profile", "frame"]


@dataclass(frozen=True)
class Learned:
    """One answer with the outcome signals credited to it."""

    answer: Answer
    judged: int
    referenced: int
    decisions: tuple[tuple[str, str], ...]
    """(id, outcome) of the reviewed decisions the answer's chat session left."""


def is_chat(session_id: str | None) -> bool:
    """A chat session's id, not a one-shot answer's (`adhoc-…`: no session was named)."""
    return bool(session_id) and not (session_id or "").startswith("adhoc-")


def is_turn(answer: Answer) -> bool:
    """A chat session's turn: a refresh verdict was made for it."""
    return answer.mode == "turn" and answer.refresh is not None


def learn(
    answers: list[Answer], judged: list[Judged], decisions: dict[str, list[tuple[str, str]]]
) -> tuple[list[Learned], int]:
    """Each answer with its credited judged items and its session's reviewed decisions, and how
    many judged items no answer could be credited with."""
    by_session: dict[str | None, list[Answer]] = defaultdict(list)
    for answer in answers:
        by_session[answer.session_id].append(answer)
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    unattributed = 0
    for row in judged:
        source = _injected_by(by_session.get(row.session_id, []), row)
        if source is None:
            unattributed += 1
            continue
        counts[source.id][0] += 1
        counts[source.id][1] += int(row.referenced)
    learned = [
        Learned(
            answer=a,
            judged=counts[a.id][0] if a.id in counts else 0,
            referenced=counts[a.id][1] if a.id in counts else 0,
            decisions=tuple(decisions.get(a.session_id or "", ())) if is_chat(a.session_id) else (),
        )
        for a in answers
    ]
    return learned, unattributed


def _injected_by(session_answers: list[Answer], row: Judged) -> Answer | None:
    """The latest answer of the row's session, given no later than the judgement, that injected
    the row's memory."""
    for answer in reversed(session_answers):
        if answer.items and row.memory_id in answer.items and answer.at <= row.at:
            return answer
    return None


def groups(learned: Iterable[Learned], by: By) -> list[StatsGroup]:
    """The figures per profile or frame, the group with the most answers first."""
    members: dict[str, list[Learned]] = defaultdict(list)
    for one in learned:
        key = (one.answer.profile if by == "profile" else one.answer.frame) or "-"
        members[key].append(one)
    out = [_group(key, rows) for key, rows in members.items()]
    return sorted(out, key=lambda g: (-g.answers, g.key))


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _group(key: str, rows: list[Learned]) -> StatsGroup:
    answers = [r.answer for r in rows]
    turns = [a for a in answers if is_turn(a)]
    refreshes = sum(1 for a in turns if a.refresh in REBUILDS)
    budgeted = [a for a in answers if a.budget > 0]
    judged = sum(r.judged for r in rows)
    referenced = sum(r.referenced for r in rows)
    decisions = dict(d for r in rows for d in r.decisions)  # once per group
    worth = [OUTCOME_VALUES[o] for o in decisions.values()]
    return StatsGroup(
        key=key, answers=len(answers), turns=len(turns), refreshes=refreshes,
        judged=judged, referenced=referenced, referenced_share=_share(referenced, judged),
        utilization=_share(sum(a.tokens / a.budget for a in budgeted), len(budgeted)),
        refresh_rate=_share(refreshes, len(turns)),
        sessions=len({a.session_id for a in answers if is_chat(a.session_id)}),
        decisions=len(decisions), decision_accuracy=_share(sum(worth), len(worth)),
    )  # fmt: skip
