"""Lifecycle state machines per kind (design §1); the store refuses any other transition.

Every machine also allows `inactive` ("forgotten": kept, excluded from context) from any live
state, because forgetting is a lifecycle step, never a delete.
"""

from __future__ import annotations

from dataclasses import dataclass

from nous.errors import InvalidTransition

INACTIVE = "inactive"
CORE_CONFIRMATIONS = 3


@dataclass(frozen=True)
class Machine:
    """Allowed transitions of one family of kinds."""

    initial: str
    edges: dict[str, frozenset[str]]
    superseded: str | None
    """The state a newer memory pushes this one into (`None`: not supersedable)."""
    excluded: frozenset[str]
    """States excluded from context by default."""

    def allows(self, current: str, target: str) -> bool:
        return target in self.edges.get(current, frozenset())


def _machine(
    initial: str, edges: dict[str, set[str]], superseded: str | None, excluded: set[str]
) -> Machine:
    full = {state: frozenset(targets | {INACTIVE}) for state, targets in edges.items()}
    full[INACTIVE] = frozenset()
    return Machine(initial, full, superseded, frozenset(excluded | {INACTIVE}))


FACTLIKE = _machine(
    "new",
    {
        "new": {"confirmed", "core", "superseded"},
        "confirmed": {"core", "superseded"},
        "core": {"superseded"},
        "superseded": set(),
    },
    superseded="superseded",
    excluded=set(),
)
EPISODE = _machine(
    "active",
    {"active": {"summarized", "archived"}, "summarized": {"archived"}, "archived": set()},
    superseded=None,
    excluded=set(),
)
PROCEDURE = _machine(
    "active",
    {
        "active": {"effective", "ineffective", "retired"},
        "effective": {"ineffective", "retired"},
        "ineffective": {"effective", "retired"},
        "retired": set(),
    },
    superseded="retired",
    excluded={"retired"},
)
CONSTRAINT = _machine(
    "created",
    {
        "created": {"active", "retired"},
        "active": {"escalated", "retired"},
        "escalated": {"retired"},
        "retired": set(),
    },
    superseded="retired",
    excluded={"retired"},
)
DECISION = _machine(
    "recorded",
    {
        "recorded": {"pending", "reviewed", "superseded"},
        "pending": {"reviewed", "superseded"},
        "reviewed": {"superseded"},
        "superseded": set(),
    },
    superseded="superseded",
    excluded=set(),
)
_BY_KIND = {
    "episode": EPISODE,
    "procedure": PROCEDURE,
    "constraint": CONSTRAINT,
    "decision": DECISION,
}


def machine(kind: str) -> Machine:
    """The machine for a kind; fact, preference, convention, correction, note and any new kind
    share the fact-like one."""
    return _BY_KIND.get(kind, FACTLIKE)


def initial(kind: str) -> str:
    return machine(kind).initial


def article(word: str) -> str:
    """`a` or `an` before `word` (the kinds' names: an episode, a decision)."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def check(kind: str, current: str, target: str) -> None:
    """Raise `InvalidTransition` unless `kind` may go from `current` to `target`."""
    if current == target or not machine(kind).allows(current, target):
        allowed = tuple(sorted(machine(kind).edges.get(current, ())))
        raise InvalidTransition(kind, current, target, allowed)


def on_confirm(kind: str, current: str, confirmations: int) -> str:
    """The state after the same memory was met again (`confirmations` already counted)."""
    m = machine(kind)
    if m is FACTLIKE:
        if current == "new":
            return "core" if confirmations >= CORE_CONFIRMATIONS else "confirmed"
        if current == "confirmed" and confirmations >= CORE_CONFIRMATIONS:
            return "core"
    if m is CONSTRAINT and current == "created":
        return "active"
    return current


def on_forget(kind: str, current: str) -> str:
    """The state forgetting moves to (always `inactive`); refused when already there."""
    check(kind, current, INACTIVE)
    return INACTIVE


def on_supersede(kind: str, current: str) -> str:
    """The state a newer memory pushes this one into."""
    target = machine(kind).superseded or INACTIVE
    check(kind, current, target)
    return target


def on_outcome(kind: str, current: str, outcome: str) -> str:
    """Decisions become `reviewed` once a final outcome is logged, `pending` while pending."""
    if kind != "decision" or current in {"superseded", INACTIVE}:
        return current
    target = "pending" if outcome == "pending" else "reviewed"
    if target == current:
        return current
    check(kind, current, target)
    return target


def is_excluded(kind: str, status: str) -> bool:
    """True when the state keeps a memory out of context by default."""
    return status in machine(kind).excluded
