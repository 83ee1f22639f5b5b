"""What the store does differently for speed at scale answers like the plain path: common words
left out of a large store's full-text query, stems from per-token caches, always-on ids kept
until a memory changes, the vector index sized once on load."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nous.context import relevance
from nous.memory import fts, reads
from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens, words


def test_prune_keeps_the_rare_words_and_the_rarest_when_all_are_common() -> None:
    frequencies = {"cache": 300, "redis": 40, "session": 200}
    assert fts.prune(["cache", "redis", "session"], frequencies, 1000, 0.1) == ["redis"]
    assert fts.prune(["cache", "session"], frequencies, 1000, 0.1) == ["session"]
    assert fts.prune([], frequencies, 1000, 0.1) == []


def test_a_large_store_finds_by_the_rare_word_without_the_common_one(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(20):
        store.remember(Draft(kind="fact", content=f"the deploy pipeline step {n} runs nightly"))
    target = store.remember(Draft(kind="fact", content="the deploy uses a canary in Frankfurt"))
    monkeypatch.setattr(reads, "PRUNE_FROM", 0)
    found = store.text_search("deploy canary", 50)
    assert [i for i, _ in found] == [target.memory.id]  # "deploy" is in every memory
    monkeypatch.setattr(reads, "PRUNE_FROM", 10**9)
    assert len(store.text_search("deploy canary", 50)) == 21


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz _.:-ÄÉ09", max_size=80))
def test_cached_stems_equal_stemming_every_word(text: str) -> None:
    assert relevance.stems(text) == frozenset(words.stem(w) for w in words.content_words(text))


def test_always_on_sees_a_pin_made_after_it_was_asked(store: MemoryStore) -> None:
    memory = store.remember(Draft(kind="fact", content="always answer in French")).memory
    scope = memory.scope
    assert store.always_on([scope]) == []
    store.set_pinned(memory.id)
    assert store.always_on([scope]) == [memory.id]
    store.set_pinned(memory.id, pinned=False)
    assert store.always_on([scope]) == []


def test_the_index_grows_past_its_first_load(store: MemoryStore) -> None:
    ids = [
        store.remember(Draft(kind="fact", content=f"fact number {n}")).memory.id for n in range(40)
    ]
    reopened = MemoryStore(store.path, HashEmbedder(), tokens.counter())
    try:
        for n in range(3000):  # past the bulk load's size and its 1/16 headroom
            reopened.remember(Draft(kind="fact", content=f"later fact {n}"))
        assert reopened.vector_count() == 3040
        vectors = reopened.vectors(ids[:3])
        assert set(vectors) == set(ids[:3])
    finally:
        reopened.close()
