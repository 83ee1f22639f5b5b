"""Deferred vectors (`MemoryStore(defer_vectors=True)`, `memory.backlog`): a write is acknowledged
once its row and full-text entry are committed; its vector follows in the background."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from nous.context import config as configs
from nous.context import pipeline
from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens

SCOPE = "project:p"


class GatedEmbedder(HashEmbedder):
    """The hash embedder, holding the backlog's batches until `gate` opens (a model busy
    elsewhere); a call on the caller's thread (a search's on-demand vector) is answered."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.calls = 0
        self.caller_calls = 0

    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if threading.current_thread().name == "nous-embed":
            self.calls += 1
            self.gate.wait(30)
        else:
            self.caller_calls += 1
        return super().embed_batch(texts)


def _draft(content: str) -> Draft:
    return Draft(kind="fact", content=content, scope=SCOPE)


def test_a_write_is_found_by_text_before_its_vector_exists(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    store = MemoryStore(tmp_path / "m.db", embedder, tokens.counter(), defer_vectors=True)
    try:
        written = store.remember(_draft("the invoice exporter retries three times on timeouts"))
        memory_id = written.memory.id
        assert written.status == "created"
        assert store.get(memory_id).content.startswith("the invoice exporter")
        # no vector yet: the model is held, and the write did not wait for it
        query = HashEmbedder().embed("invoice exporter retries")
        assert memory_id not in dict(store.vector_search(query, 5, [SCOPE]))
        assert store.pending_vectors() == 1
        assert memory_id in dict(store.text_search("invoice exporter retries", 5, [SCOPE]))
        # a search that found it by text gets its vector computed on demand (not stored)
        early = store.vectors([memory_id])[memory_id]
        assert np.allclose(early, HashEmbedder().embed(store.get(memory_id).content))
        assert store.pending_vectors() == 1 and store.vector_count() == 0
        # and the context pipeline admits it before its vector is stored
        view = pipeline.View("p", SCOPE, [])
        answer = pipeline.assemble(
            store, configs.defaults(), view,
            pipeline.Request(input="how many times does the invoice exporter retry?",
                             mode="recall", budget=2000),
        )  # fmt: skip
        assert "invoice exporter retries three times" in answer.text
        assert store.wait_embedded(timeout=0.05) is False
        embedder.gate.set()
        assert store.wait_embedded(timeout=30) is True
        assert store.pending_vectors() == 0
        assert memory_id in dict(store.vector_search(query, 5, [SCOPE]))
        expected = HashEmbedder().embed(store.get(memory_id).content)
        assert np.allclose(store.vectors([memory_id])[memory_id], expected)
    finally:
        embedder.gate.set()
        store.close()


def test_a_store_opened_later_embeds_what_was_left_pending(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    stuck = GatedEmbedder()  # the first writer never gets its vectors (as if killed)
    first = MemoryStore(path, stuck, tokens.counter(), defer_vectors=True)
    contents = [f"note {n}: the staging cluster rotates its keys weekly" for n in range(40)]
    ids = [r.memory.id for r in first.remember_many([_draft(c) for c in contents])]
    first.close()  # does not wait for the vectors
    assert len(set(ids)) == 40

    plain = MemoryStore(path, HashEmbedder(), tokens.counter())  # defers nothing, embeds nothing
    assert plain.vector_count() == 0
    assert plain.wait_embedded() is True
    plain.close()

    second = MemoryStore(path, HashEmbedder(), tokens.counter(), defer_vectors=True)
    try:
        assert second.wait_embedded(timeout=30)
        assert second.vector_count() == 40
        assert set(second.vectors(ids)) == set(ids)
        assert second.memory_count() == 40
        assert second.all_vectors().shape == (40, second.dimension)
    finally:
        stuck.gate.set()  # the first backlog's late batch finds the rows done: no change
        second.close()
    again = MemoryStore(path, HashEmbedder(), tokens.counter())
    try:
        assert again.vector_count() == 40
        assert again.memory_count() == 40
    finally:
        again.close()


def test_deferred_and_immediate_writes_store_the_same_vectors(tmp_path: Path) -> None:
    contents = [f"rule {n}: never log the {n}th request body" for n in range(20)]
    deferred = MemoryStore(tmp_path / "d.db", HashEmbedder(), tokens.counter(), True)
    direct = MemoryStore(tmp_path / "i.db", HashEmbedder(), tokens.counter())
    try:
        d_ids = [r.memory.id for r in deferred.remember_many([_draft(c) for c in contents])]
        i_ids = [r.memory.id for r in direct.remember_many([_draft(c) for c in contents])]
        # a repeat is a confirmation, never a second row, vector or not
        again = deferred.remember(_draft(contents[0]))
        assert again.status == "confirmed" and again.memory.id == d_ids[0]
        assert deferred.wait_embedded(timeout=30)
        d_vectors = deferred.vectors(d_ids)
        i_vectors = direct.vectors(i_ids)
        for d_id, i_id in zip(d_ids, i_ids, strict=True):
            assert np.array_equal(d_vectors[d_id], i_vectors[i_id])
        query = HashEmbedder().embed("request body logging")
        d_all = {deferred.get(i).content: s for i, s in deferred.vector_search(query, 20)}
        i_all = {direct.get(i).content: s for i, s in direct.vector_search(query, 20)}
        assert d_all == i_all
    finally:
        deferred.close()
        direct.close()


def test_a_precomputed_vector_is_stored_at_once(tmp_path: Path) -> None:
    embedder = GatedEmbedder()  # would block: the caller's vector must be used instead
    store = MemoryStore(tmp_path / "m.db", embedder, tokens.counter(), defer_vectors=True)
    try:
        text = "keep the turn's vector"
        vector = HashEmbedder().embed(text)
        result = store.remember(_draft(text), embedded=(text, vector))
        assert store.pending_vectors() == 0
        assert np.array_equal(store.vectors([result.memory.id])[result.memory.id], vector)
        assert embedder.calls == 0
    finally:
        embedder.gate.set()
        store.close()


def test_a_writer_embeds_its_own_rows_not_another_writers(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    held = GatedEmbedder()
    first = MemoryStore(path, held, tokens.counter(), defer_vectors=True)
    second = MemoryStore(path, HashEmbedder(), tokens.counter(), defer_vectors=True)
    try:
        theirs = first.remember(_draft("the first window's note about retries")).memory.id
        mine = second.remember(_draft("the second window's note about caching")).memory.id
        assert second.wait_embedded(timeout=30)
        assert second.pending_vectors() == 0
        assert second.vector_count() == 1  # its own; the first window's is still to come
        assert first.pending_vectors() == 1
        held.gate.set()
        assert first.wait_embedded(timeout=30)
        assert second.wait_embedded(timeout=30)
        assert second.vector_count() == 2
        assert set(second.vectors([theirs, mine])) == {theirs, mine}
    finally:
        held.gate.set()
        first.close()
        second.close()


def test_a_harvest_holds_the_backlog_until_it_is_written(tmp_path: Path) -> None:
    """`vectors_held` (Engine.harvest): no batch starts inside, the model is not called, and
    the rows get their vectors once it ends."""
    embedder = GatedEmbedder()
    embedder.gate.set()  # the model answers at once: only the hold can keep it waiting
    store = MemoryStore(tmp_path / "m.db", embedder, tokens.counter(), defer_vectors=True)
    try:
        with store.vectors_held():
            ids = [store.remember(_draft(f"rule {n}: release on a {n}th day")).memory.id
                   for n in range(5)]  # fmt: skip
            assert store.wait_embedded(timeout=0.3) is False
            assert embedder.calls == 0 and store.pending_vectors() == 5
        assert store.wait_embedded(timeout=30) is True
        assert embedder.calls > 0 and store.vector_count() == 5
        assert set(store.vectors(ids)) == set(ids)
    finally:
        store.close()
