"""The memory browser's store side: `store.browse.page` and `MemoryStore.edit` on a real SQLite file."""

from __future__ import annotations

import numpy as np
import pytest

from nous.errors import InvalidMemory, InvalidTransition
from nous.memory import browse
from nous.memory.edits import Edit
from nous.memory.model import Draft
from nous.memory.store import MemoryStore

SCOPE = "project:shop-0123456789ab"
OTHER = "project:bank-0123456789ab"


def add(
    store: MemoryStore, kind: str, text: str, source: str = "manual", scope: str = SCOPE
) -> str:
    return store.remember(Draft(kind=kind, content=text, source=source, scope=scope)).memory.id


def test_edited_text_is_re_embedded_and_unchanged_text_is_not(real_store: MemoryStore) -> None:
    memory_id = add(real_store, "fact", "The search service times out after 800 ms under load.")
    old = real_store.vectors([memory_id])[memory_id].copy()
    new_text = "Invoices are archived to the cold-storage bucket every night."
    result = real_store.edit(memory_id, Edit(content=new_text))
    assert result.reembedded and "content" in result.changed
    (top, cosine), *_ = real_store.vector_search(real_store.embed(new_text), 1)
    assert top == memory_id and cosine > 0.99
    moved = real_store.vectors([memory_id])[memory_id].copy()
    assert float(np.dot(old, moved)) < 0.9
    again = real_store.edit(memory_id, Edit(content=new_text, importance=0.8))
    assert not again.reembedded and again.changed == ["importance"]
    assert np.array_equal(real_store.vectors([memory_id])[memory_id], moved)


def test_a_new_kind_whose_machine_lacks_the_state_starts_over(store: MemoryStore) -> None:
    memory_id = add(store, "fact", "Orders are immutable once paid.")
    edited = store.edit(memory_id, Edit(kind="decision"))
    assert edited.memory.kind == "decision" and edited.memory.status == "recorded"
    assert edited.memory.summary.startswith("Decision")
    with pytest.raises(InvalidTransition):
        store.edit(memory_id, Edit(outcome="success", status="pending"))


def test_editing_into_the_text_of_another_memory_is_refused(store: MemoryStore) -> None:
    first = add(store, "fact", "Prices are integer cents.")
    second = add(store, "fact", "Ledger entries are append-only.")
    with pytest.raises(InvalidMemory, match=first):
        store.edit(second, Edit(content="prices are integer cents"))
    assert store.get(second).content == "Ledger entries are append-only."


def test_page_keeps_only_this_project_and_the_shared_scopes(store: MemoryStore) -> None:
    mine = add(store, "fact", "Mine: the shop uses Postgres.")
    shared = add(store, "preference", "Short answers please.", scope="universal")
    add(store, "fact", "Theirs: the bank uses Oracle.", scope=OTHER)
    found = store.browse.page(browse.Filters(SCOPE))
    assert {i.memory.id for i in found.items} == {mine, shared} and found.total == 2


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("file:docs/adr/0001.md#adr-1", "file"),
        ("git:0123abc", "commit"),
        ("chat", "chat"),
        ("chat:session-1", "chat"),
        ("manual", "manual"),
        ("chat-tool", "chat"),
        ("chatbot", "manual"),
    ],
)
def test_source_types(source: str, kind: str) -> None:
    assert browse.source_type(source) == kind


def test_source_filters_agree_with_source_type(store: MemoryStore) -> None:
    sources = ["file:a.md#x", "git:abc", "chat", "chat:s1", "chat-tool", "manual", "chatbot", "cli"]
    for n, source in enumerate(sources):
        add(store, "fact", f"memory number {n} from {source}", source=source)
    for kind in browse.SOURCE_TYPES:
        found = store.browse.page(browse.Filters(SCOPE, source_types=[kind]))
        assert {i.memory.source for i in found.items} == {
            s for s in sources if browse.source_type(s) == kind
        }


def test_captures_are_told_apart_from_project_knowledge(store: MemoryStore) -> None:
    turn = add(store, "episode", "We moved the nightly export to 04:30.", source="chat:s1#0")
    note = add(store, "note", "next: add the export tests.", source="chat:s1#0")
    remembered = add(store, "decision", "Exports run nightly.", source="chat")
    harvested = add(store, "convention", "Money is integer cents.", source="file:AGENTS.md#money")
    captured = store.browse.page(browse.Filters(SCOPE, captured=True))
    knowledge = store.browse.page(browse.Filters(SCOPE, captured=False))
    assert {i.memory.id for i in captured.items} == {turn, note}
    assert {i.memory.id for i in knowledge.items} == {remembered, harvested}
    assert [browse.captured(store.get(i)) for i in (turn, note, remembered, harvested)] == [
        True, True, False, False,
    ]  # fmt: skip
