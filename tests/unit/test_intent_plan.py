"""Seed 000's intent and plan tables, frames, and config overrides — pure logic."""

from __future__ import annotations

from pathlib import Path

import pytest

from nous.context import config, frame, intent, plan

CONFIG = config.defaults()


def test_greeting_detection() -> None:
    assert intent.signals("hey").greeting
    assert not intent.signals("hey, why does the build fail?").greeting


def test_question_detection() -> None:
    assert intent.signals("should we use Redis?").question
    assert not intent.signals("Redis is fast.").question


@pytest.mark.parametrize(
    ("text", "weight"),
    [("what changed today", 1.0), ("yesterday we broke it", 0.8), ("last week", 0.5),
     ("last month", 0.3), ("no time words", 0.0)],
)  # fmt: skip
def test_temporal_recency(text: str, weight: float) -> None:
    assert intent.signals(text).temporal_recency == weight


def test_memory_type_hints() -> None:
    assert intent.signals("what did I decide about caching").dominant_hint == "decision"
    assert intent.signals("how do I deploy").dominant_hint == "procedure"
    assert intent.signals("what is the staging host").dominant_hint == "fact"
    assert intent.signals("last time this broke").dominant_hint == "episode"


def test_entities_paths_identifiers_names_dates() -> None:
    found = intent.signals(
        "Fix parse_args in src/cli.py before Friday, ask Alice, 2026-11-20"
    ).entities
    assert {"src/cli.py", "parse_args", "Alice", "2026-11-20"} <= set(found)


def test_plan_greeting_skips_all() -> None:
    p = plan.build(intent.signals("hey"), "conversation", CONFIG)
    assert p.limits == {} and not p.retrieves and "decision" in p.skip


def test_plan_hint_biased_limits() -> None:
    p = plan.build(intent.signals("what did we decide about auth?"), "decision", CONFIG)
    assert p.limits["decision"] == 8
    assert {v for k, v in p.limits.items() if k != "decision"} == {3}
    assert set(plan.build(intent.signals("tell"), "task", CONFIG).limits.values()) == {5}


def test_plan_decision_frame_budget() -> None:
    assert plan.build(intent.signals("should we use X?"), "decision", CONFIG).budget == 12000
    assert plan.build(intent.signals("hello there friend"), "conversation", CONFIG).budget == 3000


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Should we use Redis for caching?", "decision"), ("the test fails with a traceback", "debug"),
     ("Implement the CSV exporter", "task"), ("What is our deploy target?", "question"),
     ("brainstorm names for the CLI", "creative"), ("hey", "conversation")],
)  # fmt: skip
def test_frame_selection(text: str, expected: str) -> None:
    assert frame.select(text) == expected


def test_caller_may_force_the_frame() -> None:
    assert frame.select("hey", forced="debug") == "debug"
    assert frame.select("hey", forced="nonsense") == "conversation"


def test_workspace_override_applies(tmp_path: Path) -> None:
    (tmp_path / ".nous").mkdir()
    (tmp_path / ".nous" / "config.toml").write_text("[frames.budgets]\nquestion = 4000\n")
    loaded, problems = config.load(tmp_path)
    assert loaded.frames.budgets["question"] == 4000 and problems == []
    assert loaded.frames.budgets["decision"] == 12000


def test_invalid_override_is_reported_and_defaults_stand(tmp_path: Path) -> None:
    (tmp_path / ".nous").mkdir()
    (tmp_path / ".nous" / "config.toml").write_text("[weights]\nsemantic = 'lots'\n")
    loaded, problems = config.load(tmp_path)
    assert loaded == config.defaults()
    assert len(problems) == 1 and "weights.semantic" in problems[0]
    (tmp_path / ".nous" / "config.toml").write_text("this is = = not toml")
    assert "cannot read" in config.load(tmp_path)[1][0]
