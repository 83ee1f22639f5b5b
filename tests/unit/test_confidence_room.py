"""An item the gate barely admits is shown briefly (`placement.room`, `gate.confident`): on a
question the store cannot answer, what clears the floor is near-misses, and a whole record of
each was most of the no-answer tokens. An item the gate is confident of keeps its full room, and
so does everything at a chat start."""

from __future__ import annotations

import pytest

from nous.context import config as configs
from nous.context import pipeline
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from tests.unit.test_merged_answers import RELEASING

DEFAULTS = configs.defaults()
VIEW = pipeline.View("shop", "project:shop", ["python"])
NEAR_MISS = "How do we sign the macOS installer before it is notarized?"
"""Shares 'sign' with the guide and nothing it answers."""
ANSWERED = "How many days is a release candidate kept in the staging registry?"


def config(confident: float) -> configs.Config:
    gate = DEFAULTS.gate.model_copy(
        update={"startup": 0.0, "recall": 0.0, "turn": 0.0, "recall_relative": 0.0, "turn_relative": 0.0,
                "confident": confident}
    )  # fmt: skip
    return DEFAULTS.model_copy(update={"gate": gate})


@pytest.fixture
def guide(real_store: MemoryStore) -> MemoryStore:
    body = "\n\n".join(f"## {heading}\n\n{text}" for _, heading, text in RELEASING)
    real_store.remember(
        Draft(kind="fact", scope="project:shop", source="file:docs/release.md",
              content=f"# docs/release.md: Releasing\n\n{body}")
    )  # fmt: skip
    return real_store


def item(store: MemoryStore, question: str, confident: float, mode: str) -> tuple[int, float]:
    """The guide's extract (tokens) and its relevance, at a budget where an item's room binds."""
    request = pipeline.Request(input=question, mode=mode, budget=3000)
    result = pipeline.assemble(store, config(confident), VIEW, request)
    [found] = [i for s in result.sections for i in s.items if i.source == "file:docs/release.md"]
    return found.tokens, found.terms.get("relevance", 0.0)


@pytest.mark.parametrize("mode", ["recall", "turn"])
def test_a_barely_admitted_item_gets_a_short_extract(guide: MemoryStore, mode: str) -> None:
    full, relevance = item(guide, NEAR_MISS, 0.0, mode)
    brief, _ = item(guide, NEAR_MISS, 0.5, mode)
    assert relevance < 0.25  # a near-miss: its room is cut to at most half
    assert full > 300  # off: the whole record (349 tokens) fits its room
    room = max(DEFAULTS.gate.item_min, round(DEFAULTS.gate.item_max * relevance / 0.5))
    assert brief <= room + 10, (brief, room)  # the item's label besides the extract


@pytest.mark.parametrize("mode", ["recall", "turn", "startup"])
def test_a_confident_item_keeps_its_full_room(guide: MemoryStore, mode: str) -> None:
    full, relevance = item(guide, ANSWERED, 0.0, mode)
    assert relevance >= 0.5 and full > 250
    assert item(guide, ANSWERED, 0.5, mode)[0] == full


def test_a_chat_start_keeps_the_full_room_of_a_near_miss(guide: MemoryStore) -> None:
    full, relevance = item(guide, NEAR_MISS, 0.0, "startup")
    assert relevance < 0.25 and full > 250
    assert item(guide, NEAR_MISS, 0.5, "startup")[0] == full
