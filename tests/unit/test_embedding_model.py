"""A store opened with another embedding model than the one that made its vectors (the
`embeddingModel` setting changed): the other model's vectors never meet a query of this one; a
deferring store re-embeds those rows in the background (`memory.backlog`), found by text
meanwhile; nothing is lost. Real SQLite files; the real model on one side of each pair."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from nous.memory.embedder import Embedder, HashEmbedder, OnnxEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens

SCOPE = "project:p"
TEXTS = [
    "the invoice exporter retries three times on timeouts",
    "release builds are signed on the CI runner, never on laptops",
    "the staging cluster rotates its database keys every week",
]


class OtherModel(HashEmbedder):
    """A deterministic stand-in for a second model (its own name, its own dimension)."""

    def __init__(self, dimension: int = 384) -> None:
        super().__init__(dimension)
        self.name = f"other-model-{dimension}"


def _write(path: Path, embedder: Embedder) -> list[str]:
    store = MemoryStore(path, embedder, tokens.counter())
    try:
        results = store.remember_many([Draft(kind="fact", content=t, scope=SCOPE) for t in TEXTS])
        return [r.memory.id for r in results]
    finally:
        store.close()


def _models(store: MemoryStore) -> set[str]:
    return {r[0] for r in store._conn.execute("SELECT embedding_model FROM memories")}


def test_vectors_of_another_model_are_re_embedded_in_the_background(
    tmp_path: Path, real_embedder: OnnxEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "m.db"
    ids = _write(path, real_embedder)
    other = OtherModel()
    with caplog.at_level(logging.WARNING, logger="nous.memory.embeddings"):
        store = MemoryStore(path, other, tokens.counter(), defer_vectors=True)
    try:
        assert "3 memories have vectors of another model (3 by all-MiniLM-L6-v2)" in caplog.text
        # found by text at once, whatever the backlog has done so far
        assert ids[0] in dict(store.text_search("invoice exporter retries", 5, [SCOPE]))
        # whatever the index holds at any moment is this model's vector, never the old one
        for memory_id, vector in store.vectors(ids).items():
            assert np.allclose(vector, other.embed(store.get(memory_id).content))
        assert store.wait_embedded(timeout=30)
        assert store.vector_count() == 3 and store.pending_vectors() == 0
        assert _models(store) == {other.name}
        for memory_id in ids:
            expected = other.embed(store.get(memory_id).content)
            assert _same(store.vectors([memory_id])[memory_id], expected)
        hits = store.vector_search(other.embed("invoice exporter retries"), 1, [SCOPE])
        assert hits[0][0] == ids[0] and hits[0][1] > 0.5
    finally:
        store.close()


def test_a_stand_ins_vectors_are_replaced_by_the_real_models(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    path = tmp_path / "m.db"
    ids = _write(path, OtherModel())
    store = MemoryStore(path, real_embedder, tokens.counter(), defer_vectors=True)
    try:
        assert store.wait_embedded(timeout=60)
        assert _models(store) == {real_embedder.name}
        for memory_id in ids:
            expected = real_embedder.embed(store.get(memory_id).content)
            assert _same(store.vectors([memory_id])[memory_id], expected)
        query = real_embedder.embed("who signs the release builds?")
        assert store.vector_search(query, 1, [SCOPE])[0][0] == ids[1]
    finally:
        store.close()


def test_a_model_of_another_dimension_opens_the_store_and_re_embeds_it(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    ids = _write(path, HashEmbedder())
    small = OtherModel(64)
    store = MemoryStore(path, small, tokens.counter(), defer_vectors=True)
    try:
        assert store.wait_embedded(timeout=30)
        assert store.vector_count() == 3
        assert store.all_vectors().shape == (3, 64)
        assert store.vector_search(small.embed("staging cluster keys"), 1)[0][0] == ids[2]
    finally:
        store.close()


def test_a_store_that_defers_nothing_leaves_the_old_vectors_out_and_keeps_them(
    tmp_path: Path,
) -> None:
    """A store that does not defer (the command line) does not re-embed: the other model's rows
    are found by text, their vectors computed on demand for a search, and the file keeps the old
    vectors, which serve again when the old model comes back."""
    path = tmp_path / "m.db"
    first = HashEmbedder()
    ids = _write(path, first)
    other = OtherModel()
    plain = MemoryStore(path, other, tokens.counter())
    try:
        assert plain.vector_count() == 0
        assert plain.vector_search(other.embed("invoice exporter retries"), 3) == []
        assert ids[0] in dict(plain.text_search("invoice exporter retries", 5, [SCOPE]))
        early = plain.vectors([ids[0]])[ids[0]]
        assert np.allclose(early, other.embed(plain.get(ids[0]).content))
        assert plain.all_vectors().shape == (0, 384)
        assert _models(plain) == {first.name}
    finally:
        plain.close()
    back = MemoryStore(path, HashEmbedder(), tokens.counter())
    try:
        assert back.vector_count() == 3
    finally:
        back.close()


def _same(stored: np.ndarray, expected: np.ndarray) -> bool:
    """The index keeps int8 rows with a scale (`vectors.quantise`): the same direction."""
    return (
        float(stored @ expected) / float(np.linalg.norm(stored) * np.linalg.norm(expected)) > 0.999
    )
