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
        assert counting.asked == [question], n
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
    session = e.store.usage.load_session("chat-3", e.project_key, e.settings.session_cap)
    assert session.state["frame"] == "question" and len(session.state["vector"]) == 384


def test_the_candidates_come_back_with_their_vectors_and_usage_in_one_read(
    engine: tuple[Engine, Counting],
) -> None:
    e, _ = engine
    ids = [i for i, _ in e.store.vector_search(e.store.embed("money"), 10)]
    e.store.usage.record("chat-4", [(ids[0], True, 0.5)], e.project_key)
    read = e.store.candidates([*ids, "no-such-memory"], 7.0)
    assert set(read.records) == set(ids) and set(read.vectors) == set(ids)
    assert read.records[ids[0]].id == ids[0] and read.vectors[ids[0]].shape == (384,)
    assert set(read.usage) == {ids[0]} and read.usage[ids[0]].referenced == 1
    assert e.store.candidates(ids, vectors=False).vectors == {}


def test_a_turn_reads_each_candidates_vector_once(
    engine: tuple[Engine, Counting], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scoring and the gate share one read of the candidates (records, vectors, usage):
    no vector the candidates came with is asked for again."""
    e, _ = engine
    store = e.store
    inside, read, again, usage = [False], [], [], []
    candidates, vectors, usage_stats = store.candidates, store.vectors, store.usage.stats

    def counted_candidates(*args: object, **kwargs: object) -> object:
        inside[0] = True
        try:
            found = candidates(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            inside[0] = False
        read.append(set(found.vectors))
        return found

    def counted_vectors(ids: Sequence[str]) -> dict[str, Vector]:
        if not inside[0]:
            again.extend(ids)
        return vectors(ids)

    def counted_usage(*args: object, **kwargs: object) -> object:
        if not inside[0]:
            usage.append(args)
        return usage_stats(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "candidates", counted_candidates)
    monkeypatch.setattr(store, "vectors", counted_vectors)
    monkeypatch.setattr(store.usage, "stats", counted_usage)
    result = chat.context(e, ContextParams(input="how do we store money?", session_id="chat-5"))
    assert [i.id for s in result.sections for i in s.items]
    assert len(read) == 1 and len(read[0]) == 3
    assert not read[0] & set(again) and usage == []
