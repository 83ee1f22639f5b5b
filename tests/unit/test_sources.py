"""Rows by source: the harvest's sync and the short-document completion ask for every live
section of one file (`file:<relpath>#…`)."""

from __future__ import annotations

from nous.memory.model import Draft
from nous.memory.store import MemoryStore


def test_sections_of_a_file_are_found_by_exact_prefix(real_store: MemoryStore) -> None:
    """`_` and `%` in a file name are characters, not LIKE wildcards; a longer name that starts
    with the same characters is another file."""
    for source in ("file:a_b.md#x", "file:aXb.md#y", "file:a_b.md#z", "file:a_b.mdx#q",
                   "file:50%.md#w", "file:50-percent.md#v"):  # fmt: skip
        real_store.remember(Draft(kind="fact", scope="project:p", source=source,
                                  content=f"Section {source} says something."))  # fmt: skip
    real_store.remember(
        Draft(kind="fact", scope="project:q", source="file:a_b.md#x", content="Other project.")
    )

    def sources(prefix: str) -> set[str]:
        ids = [i for i, _kind, _status in real_store.sources.live_from_source(prefix, "project:p")]
        return {m.source for m in real_store.get_many(ids).values()}

    assert sources("file:a_b.md#") == {"file:a_b.md#x", "file:a_b.md#z"}
    assert sources("file:50%.md#") == {"file:50%.md#w"}
    forgotten = real_store.sources.id_of_source("file:a_b.md#z", "project:p")
    assert forgotten is not None
    real_store.transition(forgotten, "inactive", "test")
    assert sources("file:a_b.md#") == {"file:a_b.md#x"}
