"""The per-kind state machines, as pure logic."""

from __future__ import annotations

import pytest

from nous.errors import InvalidTransition
from nous.memory import lifecycle


def test_facts_move_new_confirmed_core_superseded_inactive() -> None:
    assert lifecycle.initial("fact") == "new"
    for current, target in [
        ("new", "confirmed"),
        ("confirmed", "core"),
        ("core", "superseded"),
        ("superseded", "inactive"),
    ]:
        lifecycle.check("fact", current, target)


def test_confirmation_promotes_fact_to_core_after_three() -> None:
    assert lifecycle.on_confirm("preference", "new", 1) == "confirmed"
    assert lifecycle.on_confirm("preference", "confirmed", 2) == "confirmed"
    assert lifecycle.on_confirm("preference", "confirmed", 3) == "core"


@pytest.mark.parametrize(
    ("kind", "current", "target"),
    [
        ("fact", "core", "new"),
        ("fact", "inactive", "new"),
        ("episode", "archived", "active"),
        ("episode", "active", "superseded"),
        ("procedure", "retired", "active"),
        ("constraint", "created", "escalated"),
        ("decision", "reviewed", "recorded"),
        ("decision", "recorded", "recorded"),
    ],
)
def test_invalid_transitions_are_refused_by_name(kind: str, current: str, target: str) -> None:
    article = "an" if kind[0] in "aeiou" else "a"
    with pytest.raises(
        InvalidTransition, match=f"{article} {kind} that is '{current}' cannot become"
    ):
        lifecycle.check(kind, current, target)


def test_episode_ages_active_summarized_archived() -> None:
    assert lifecycle.initial("episode") == "active"
    lifecycle.check("episode", "active", "summarized")
    lifecycle.check("episode", "summarized", "archived")


def test_procedure_effectiveness_states() -> None:
    assert lifecycle.initial("procedure") == "active"
    lifecycle.check("procedure", "active", "effective")
    lifecycle.check("procedure", "effective", "ineffective")
    lifecycle.check("procedure", "ineffective", "retired")
    assert lifecycle.is_excluded("procedure", "retired")


def test_constraint_created_active_escalated_retired() -> None:
    assert lifecycle.initial("constraint") == "created"
    assert lifecycle.on_confirm("constraint", "created", 1) == "active"
    lifecycle.check("constraint", "active", "escalated")
    lifecycle.check("constraint", "escalated", "retired")


def test_decision_recorded_pending_reviewed() -> None:
    assert lifecycle.initial("decision") == "recorded"
    assert lifecycle.on_outcome("decision", "recorded", "pending") == "pending"
    assert lifecycle.on_outcome("decision", "pending", "success") == "reviewed"


def test_unknown_kinds_use_the_fact_machine() -> None:
    assert lifecycle.initial("observation") == "new"
    assert lifecycle.on_forget("observation", "new") == "inactive"


def test_forgetting_twice_is_refused() -> None:
    with pytest.raises(InvalidTransition):
        lifecycle.on_forget("fact", "inactive")
