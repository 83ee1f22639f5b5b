"""The lifecycle effects of feedback: what one judged injection (referenced by the reply or not)
does to the memory's activations and state. The usage rows themselves are `memory.usage`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nous.memory import lifecycle
from nous.memory.usage import NEUTRAL

if TYPE_CHECKING:
    from nous.memory.interface import Store

EFFECTIVE = 0.6
INEFFECTIVE = 0.4
MIN_ACTIVATIONS = 5
ESCALATE_AFTER = 5


def apply_feedback(store: Store, memory_id: str, referenced: bool) -> str:
    """Lifecycle effects of one judged injection; returns the memory's status afterwards.

    Referenced → one more activation; a new fact-like memory becomes confirmed; a created
    constraint becomes active and escalates after 5 activations; a procedure becomes effective
    (> 0.6 referenced) or ineffective (< 0.4) once it has 5+ activations.
    """
    memory = store.get(memory_id)
    if referenced:
        memory = store.usage.activate(memory_id)
    target = memory.status
    machine = lifecycle.machine(memory.kind)
    if referenced and machine is lifecycle.FACTLIKE and memory.status == "new":
        target = "confirmed"
    elif machine is lifecycle.CONSTRAINT and referenced:
        if memory.status == "created":
            target = "active"
        elif memory.status == "active" and memory.activations >= ESCALATE_AFTER:
            target = "escalated"
    elif machine is lifecycle.PROCEDURE and memory.activations >= MIN_ACTIVATIONS:
        got = store.usage.stats([memory_id]).get(memory_id, NEUTRAL)
        rate = got.referenced / got.retrieved if got.retrieved else 0.0
        if rate > EFFECTIVE and memory.status != "effective":
            target = "effective"
        elif rate < INEFFECTIVE and memory.status != "ineffective":
            target = "ineffective"
    if target != memory.status and machine.allows(memory.status, target):
        return store.transition(memory_id, target, "feedback").status
    return memory.status
