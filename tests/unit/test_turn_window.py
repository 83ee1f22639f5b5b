"""Chat turns keep their session and index; retrieval scores a turn with its session neighbours
(design §10) and every candidate on both signals (real store, real model)."""

from __future__ import annotations

import pytest

from nous.context import search
from nous.memory import turns
from nous.memory.store import MemoryStore

SCOPES = ["universal"]


def test_a_turns_source_carries_its_session_and_index() -> None:
    assert turns.position(turns.source("conv-26-D3", 12)) == ("conv-26-D3", 12)
    assert turns.position("chat:a#b#7") == ("a#b", 7)
    for other in ("file:docs/a.md#intro", "git:abc", "manual", "chat:#3", "chat:s#x", "chat:s"):
        assert turns.position(other) is None, other
    with pytest.raises(ValueError):
        turns.source("a#b", 1)
    draft = turns.draft("s1", 4, "Ada: we ship on Friday", scope="universal", tags=["x"])
    assert draft.kind == "episode" and draft.source == "chat:s1#4" and draft.tags == ["chat", "x"]


def _session(store: MemoryStore, session: str, texts: list[str]) -> list[str]:
    results = store.remember_many(
        [turns.draft(session, i, t, scope="universal") for i, t in enumerate(texts)]
    )
    return [r.memory.id for r in results]


def test_neighbours_are_the_same_sessions_live_turns_within_reach(real_store: MemoryStore) -> None:
    a = _session(real_store, "a", [f"turn {i} of session a about topic {i}" for i in range(6)])
    b = _session(real_store, "b", [f"turn {i} of session b on matter {i}" for i in range(3)])
    near = real_store.turn_neighbours([a[2], b[0]], 2, SCOPES)
    assert sorted(near[a[2]], key=lambda p: p[0]) == sorted(
        [(a[0], -2), (a[1], -1), (a[3], 1), (a[4], 2)], key=lambda p: p[0]
    )
    assert sorted(near[b[0]]) == sorted([(b[1], 1), (b[2], 2)])
    real_store.forget(a[3])  # a forgotten turn is no neighbour
    assert (a[3], 1) not in real_store.turn_neighbours([a[2]], 2, SCOPES)[a[2]]
    assert real_store.turn_neighbours([a[2]], 2, ["project:other"]) == {}


def test_a_turn_next_to_the_evidence_outranks_an_isolated_look_alike(
    real_store: MemoryStore,
) -> None:
    """The question names the trip; the answer ("Lisbon") is in the next turn, which shares no
    word with it. Its neighbour lifts it above a turn elsewhere that shares one word."""
    _session(real_store, "s1", [
        "Ada: I finally booked the summer trip with my sister!",
        "Bo: Where are you going?",
        "Ada: Lisbon, for ten days in July.",
        "Bo: Sounds lovely.",
    ])  # fmt: skip
    _session(real_store, "s2", [
        "Ada: my sister started a new job at the bakery.",
        "Bo: Nice, what does she bake?",
        "Ada: Mostly sourdough and pastries.",
        "Bo: I should visit.",
        "Ada: You should, it's near the station.",
    ])  # fmt: skip
    query = "Where did Ada go on the summer trip with her sister?"
    vector = real_store.embed(query)
    plain = dict(search.ranked(real_store, query, SCOPES, k=20, vector=vector, window=None))
    windowed = dict(search.ranked(real_store, query, SCOPES, k=20, vector=vector))
    lisbon = next(m for m in real_store.get_many(list(plain)).values() if "Lisbon" in m.content)
    bakery = next(m for m in real_store.get_many(list(plain)).values() if "bakery" in m.content)
    order = sorted(windowed, key=lambda i: -windowed[i])
    assert order.index(lisbon.id) < order.index(bakery.id)
    plain_order = sorted(plain, key=lambda i: -plain[i])
    assert plain_order.index(lisbon.id) > plain_order.index(bakery.id)  # without the window


def test_every_candidate_is_scored_on_both_signals(real_store: MemoryStore) -> None:
    """A memory the vector search finds holds the query's word too: its BM25 counts even when
    it is outside the full-text top-k (the blend used to score it 0 there)."""
    real_store.remember_many([
        turns.draft("s", i, f"note {i}: the deploy window is on tuesday evenings", scope="universal")
        for i in range(30)
    ])  # fmt: skip
    query = "deploy window"
    found = search.hybrid(real_store, query, real_store.embed(query), SCOPES, depth=5)
    assert len(found.cosine) > 5  # the vector top-5 and the FTS top-5 differ …
    assert all(found.lexical[i] > 0 for i in found.cosine)  # … yet every candidate has a BM25


def test_a_turn_ends_by_asking_when_its_last_sentence_mark_is_a_question_mark() -> None:
    assert turns.asks('Bo said, "Nice! Where are you going?" (8 May 2023)')
    assert turns.asks("Why does main.py fail on import?")
    assert not turns.asks("Where to? Lisbon, for ten days.")
    assert not turns.asks('Ada said, "Lisbon!" (8 May 2023)')
    assert not turns.asks("no marks at all")


def test_the_answer_outranks_the_question_that_asked_for_it(real_store: MemoryStore) -> None:
    """The question turn holds every word of the query; the reply ("Lisbon") holds none. The
    asking turn lends its score to its answer (`Window.answer`) and is itself taken at
    `Window.asking`: the answer comes first (the plain ±1 window ranked the question first)."""
    _session(real_store, "s1", [
        "Ada: Morning! I'm back home.",
        "Bo: Where did you go on the summer trip with your sister?",
        "Ada: Lisbon, for ten days in July.",
        "Bo: Sounds lovely.",
    ])  # fmt: skip
    _session(real_store, "s2", [f"Ada: the bakery sells sourdough, loaf {i}" for i in range(5)])
    query = "Where did Ada go on the summer trip with her sister?"
    vector = real_store.embed(query)
    rows = {m.content: m.id for m in real_store.get_many(
        [i for i, _ in search.ranked(real_store, query, SCOPES, k=20, vector=vector)]
    ).values()}  # fmt: skip
    asked = rows["Bo: Where did you go on the summer trip with your sister?"]
    answer = next(i for text, i in rows.items() if "Lisbon" in text)

    def order(window: search.Window) -> list[str]:
        found = search.ranked(real_store, query, SCOPES, k=20, vector=vector, window=window)
        return [i for i, _ in found]

    now = order(search.Window())
    assert now.index(answer) < now.index(asked)
    before = order(search.Window(answer=0.7, asking=1.0))  # every neighbour lends at `near`
    assert before.index(asked) < before.index(answer)
