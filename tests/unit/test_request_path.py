"""A request in three hops computes the input's embedding once: the refresh check, the search
and the session topic share one vector (the embedder's recent-vector cache must not be what
keeps the count down)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from nous.context import chat
from nous.engine import Engine
from nous.memory.embedder import HashEmbedder, Vector
from nous.memory.model import Draft
from nous.protocol import ContextParams, RecallParams
from nous.settings import Settings


class Counting(HashEmbedder):
    """The deterministic embedder, counting every text asked for (cached or not)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def embed(self, text: str) -> Vector:
        self.asked.append(text)
        return super().embed(text)

    def embed_many(self, texts: Sequence[str], batch_size: int = 32) -> npt.NDArray[np.float32]:
        self.asked += list(texts)
        return super().embed_many(texts, batch_size)


@pytest.fixture
def engine(tmp_path: Path) -> tuple[Engine, Counting]:
    ws = tmp_path / "shop"
    ws.mkdir()
    (ws / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    counting = Counting()
    e = Engine(Settings(db=tmp_path / "m.db"), ws, embedder=counting)
    e.store.remember_many(
        [
            Draft(kind="decision", content="We store money as integer cents, never floats."),
            Draft(kind="convention", content="Database migrations live in db/migrations."),
            Draft(kind="fact", content="The storage layer is SQLite in WAL mode."),
        ]
    )
    counting.asked.clear()
    return e, counting


def test_a_turn_in_a_session_embeds_its_input_once(engine: tuple[Engine, Counting]) -> None:
    e, counting = engine
    for n, question in enumerate(["how do we store money?", "where are the migrations?"]):
        params = ContextParams(input=question, session_id="chat-1", mode="turn")
        result = chat.context(e, params)
        # once for retrieval; the turn kept as an episode of the session is embedded as written
        assert counting.asked == [question, f"User: {question}"], n
        assert result.refresh in ("initial", "frame-switch", "topic-drift", "none")
        counting.asked.clear()


def test_startup_and_recall_embed_once(engine: tuple[Engine, Counting]) -> None:
    e, counting = engine
    chat.context(e, ContextParams(input="money", session_id="chat-2", mode="startup"))
    assert len(counting.asked) == 1
    counting.asked.clear()
    chat.recall(e, RecallParams(query="integer cents", session_id="chat-2"))
    assert counting.asked == ["integer cents"]


def test_the_session_remembers_the_topic_of_the_input(engine: tuple[Engine, Counting]) -> None:
    e, _ = engine
    chat.context(e, ContextParams(input="how do we store money?", session_id="chat-3"))
    session = e.store.load_session("chat-3", e.project_key, e.settings.session_cap)
    assert session.state["frame"] == "question" and len(session.state["vector"]) == 384
