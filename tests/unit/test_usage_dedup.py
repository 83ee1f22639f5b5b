"""Seed 000's usage-tracker and dedup tables, against the persisted usage records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from nous.context import dedup
from nous.memory import usage
from nous.memory.model import Draft
from nous.memory.store import MemoryStore


def add_usage(store: MemoryStore, memory_id: str, referenced: bool, days_ago: float) -> None:
    at = (datetime.now(UTC) - timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    with store._db.write():
        store._conn.execute(
            "INSERT INTO usage (memory_id, session_id, at, referenced, overlap) VALUES (?,?,?,?,0)",
            (memory_id, "s", at, int(referenced)),
        )


@pytest.fixture
def memory_id(store: MemoryStore) -> str:
    return store.remember(Draft(kind="fact", content="tracked")).memory.id


def test_record_and_score(store: MemoryStore, memory_id: str) -> None:
    store.usage.record("s1", [(memory_id, True, 0.3)])
    got = store.usage.stats([memory_id])[memory_id]
    assert got.retrieved == 1 and got.referenced == 1 and got.score == pytest.approx(1.0, abs=1e-3)


def test_decay_over_time(store: MemoryStore, memory_id: str) -> None:
    add_usage(store, memory_id, True, days_ago=7)
    assert store.usage.stats([memory_id])[memory_id].score == pytest.approx(0.5, abs=0.01)


def test_boost_factor_referenced(store: MemoryStore, memory_id: str) -> None:
    for referenced in (True, True, False):
        add_usage(store, memory_id, referenced, 0)
    assert store.usage.stats([memory_id])[memory_id].boost == pytest.approx(0.5 + 2 / 3, abs=1e-3)


def test_boost_factor_ignored(store: MemoryStore, memory_id: str) -> None:
    add_usage(store, memory_id, False, 0)
    add_usage(store, memory_id, False, 1)
    assert store.usage.stats([memory_id])[memory_id].boost == 0.5


def test_one_retrieval_is_not_enough_for_a_boost(store: MemoryStore, memory_id: str) -> None:
    add_usage(store, memory_id, True, 0)
    assert store.usage.stats([memory_id])[memory_id].boost == 1.0


def test_unknown_memory_neutral(store: MemoryStore) -> None:
    assert store.usage.stats(["nope"]) == {}
    assert usage.NEUTRAL.boost == 1.0


def test_overlap_computation() -> None:
    assert dedup.jaccard("the cat sat on mat", "the cat ran") == pytest.approx(2 / 5)
    assert dedup.jaccard("", "anything") == 0.0


def test_no_dedup_without_messages() -> None:
    assert dedup.redundant_with("anything", None, [], None, 0.85, 0.5) is None


def test_redundant_memory_filtered() -> None:
    v = np.array([1.0, 0.0], dtype=np.float32)
    others = np.array([[0.0, 1.0], [0.95, 0.312]], dtype=np.float32)
    assert dedup.redundant_with("x", v, ["a", "b"], others, 0.85, 0.5) == 1


def test_novel_memory_kept() -> None:
    v = np.array([1.0, 0.0], dtype=np.float32)
    others = np.array([[0.0, 1.0]], dtype=np.float32)
    assert dedup.redundant_with("x", v, ["a"], others, 0.85, 0.5) is None


def test_fallback_keyword_overlap() -> None:
    text = "deploy with ansible playbooks nightly"
    assert (
        dedup.redundant_with(text, None, ["we deploy with ansible playbooks"], None, 0.85, 0.5) == 0
    )
    assert dedup.redundant_with(text, None, ["lunch plans"], None, 0.85, 0.5) is None
