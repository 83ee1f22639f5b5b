"""A row's redaction seal (migration 9, `memory/rows.py`) on real SQLite files: a row written now
is read back without a scan and as it was written; a row sealed under another rule set, with no
seal (from before migration 9) or whose text changed since its seal is scrubbed on read, so the
secret never comes out; the migration keeps every row; `reseal` seals old rows in batches and
never seals a row whose text changed under it."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nous.memory import migrations, rows, seals
from nous.memory.browse import Filters
from nous.memory.edits import Edit
from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import secrets, tokens
from nous.text.secrets import library

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
CLEAN = Draft(
    kind="fact",
    content="The billing worker retries a failed invoice three times, then pages on-call.",
    tags=["billing", "retries"],
    source="chat:s1#4",
)
OLD_RULES = "0123456789ab"
"""A rule set older than the one in force (its id)."""


class Calls:
    """Counts the calls of one function of `nous.text.secrets` while patched in."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self.count = 0
        real: Callable[..., Any] = getattr(secrets, name)

        def counted(*args: Any) -> Any:
            self.count += 1
            return real(*args)

        monkeypatch.setattr(secrets, name, counted)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def store(path: Path) -> Iterator[MemoryStore]:
    s = MemoryStore(path, HashEmbedder(), tokens.counter())
    yield s
    s.close()


def stored(path: Path, memory_id: str) -> dict[str, Any]:
    """The row's text fields and seal as the file holds them."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute(
            "SELECT content, summary, micro, source, tags, redaction FROM memories WHERE id = ?",
            (memory_id,),
        ).fetchone()
        return dict(row)
    finally:
        conn.close()


def set_row(path: Path, memory_id: str, **values: Any) -> None:
    """Write columns of a row behind the store's back (another process, an older version)."""
    conn = sqlite3.connect(path)
    with conn:
        sets = ", ".join(f"{k} = ?" for k in values)
        conn.execute(f"UPDATE memories SET {sets} WHERE id = ?", (*values.values(), memory_id))
    conn.close()


def with_secret(path: Path, memory_id: str) -> dict[str, Any]:
    """The row's fields with a token in the content, its renderings, a tag and the source: what
    a rule set that did not know the token would have stored."""
    text = f"Deploy with {TOKEN} from the billing runner."
    return {
        "content": text, "summary": text, "micro": text[:40], "source": f"chat:{TOKEN}#1",
        "tags": json.dumps(["billing", TOKEN]),
    }  # fmt: skip


def assert_no_token(memory: Any) -> None:
    shown = json.dumps(memory.public())
    assert TOKEN not in shown and "[REDACTED:" in memory.content


def test_a_row_written_now_is_read_back_as_written_without_a_scan(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = store.remember(CLEAN).memory.id
    row = stored(path, memory_id)
    assert row["redaction"] == rows.seal(*(row[n] for n in rows.TEXT))
    assert row["redaction"].startswith(secrets.rules_id() + ".")
    scrubs, finds = Calls(monkeypatch, "scrub"), Calls(monkeypatch, "find")
    fresh = MemoryStore(path, HashEmbedder(), tokens.counter())  # as another process would
    try:
        got = fresh.get(memory_id)
        many = fresh.get_many([memory_id])[memory_id]
        page = fresh.browse.page(Filters(project_scope="project:x", ids=[memory_id]))
        assert (scrubs.count, finds.count) == (0, 0)
        assert got == many == page.items[0].memory
        assert (got.content, got.summary, got.micro, got.source) == (
            row["content"], row["summary"], row["micro"], row["source"],
        )  # fmt: skip
        assert got.tags == json.loads(row["tags"]) == sorted(CLEAN.tags)
        # the gate's check of the renderings (`secrets.contains`) needs no scan either
        assert not secrets.contains(got.summary) and not secrets.contains(got.micro)
        assert finds.count == 0
    finally:
        fresh.close()


def test_a_row_sealed_under_an_older_rule_set_is_scrubbed_on_read(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = store.remember(CLEAN).memory.id
    old = with_secret(path, memory_id)
    with monkeypatch.context() as older:  # the rule set that did not know the token sealed it
        older.setattr(secrets, "rules_id", lambda: OLD_RULES)
        seal = rows.seal(*(old[n] for n in rows.TEXT))
        set_row(path, memory_id, **old, redaction=seal)
        assert store.get(memory_id).content == old["content"]  # what that rule set trusted
    assert seal.startswith(OLD_RULES + ".")
    scrubs = Calls(monkeypatch, "scrub")
    got = store.get(memory_id)
    assert scrubs.count > 0
    assert_no_token(got)
    assert TOKEN not in got.source and TOKEN not in json.dumps(got.tags)


def test_a_row_without_a_seal_is_scrubbed_on_read(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = store.remember(CLEAN).memory.id
    set_row(path, memory_id, **with_secret(path, memory_id), redaction=None)
    scrubs = Calls(monkeypatch, "scrub")
    assert_no_token(store.get(memory_id))
    assert_no_token(store.get_many([memory_id])[memory_id])
    assert scrubs.count > 0


def test_a_sealed_row_whose_text_changed_since_is_scrubbed_on_read(
    store: MemoryStore, path: Path
) -> None:
    """An older Nous (which knows no seal) rewriting a sealed row's text leaves the seal as it
    was: the digest no longer matches."""
    memory_id = store.remember(CLEAN).memory.id
    seal = stored(path, memory_id)["redaction"]
    set_row(path, memory_id, **with_secret(path, memory_id))
    assert stored(path, memory_id)["redaction"] == seal
    assert_no_token(store.get(memory_id))


def test_a_secret_redacted_on_write_leaves_a_sealed_row_that_reads_as_stored(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = store.remember(Draft(kind="fact", content=f"Deploy token {TOKEN} for billing."))
    row = stored(path, made.memory.id)
    assert TOKEN not in row["content"] and "[REDACTED:" in row["content"] and made.redactions
    assert row["redaction"] == rows.seal(*(row[n] for n in rows.TEXT))  # the stored text is clean
    scrubs = Calls(monkeypatch, "scrub")
    assert store.get(made.memory.id).content == row["content"] and scrubs.count == 0


def test_a_library_timeout_while_writing_leaves_the_row_unsealed(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = iter(range(1000))
    monkeypatch.setattr(library, "gaps", lambda: next(ticks))  # it gives up on every scan
    memory_id = store.remember(CLEAN).memory.id
    assert stored(path, memory_id)["redaction"] == f"{secrets.rules_id()}.{rows.HOLDS_SECRET}"


def test_an_edit_unseals_the_row_until_resealed(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = store.remember(CLEAN).memory.id
    store.edit(memory_id, Edit(content="The billing worker retries twice now."))
    assert stored(path, memory_id)["redaction"] is None
    assert (store.reseal(), store.reseal()) == (1, 0)
    row = stored(path, memory_id)
    assert row["redaction"] == rows.seal(*(row[n] for n in rows.TEXT))
    store.edit(memory_id, Edit(pinned=True))  # no text changed: still sealed
    assert stored(path, memory_id)["redaction"] == row["redaction"]


def test_migration_9_keeps_every_row_and_reseal_seals_them_in_batches(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore(path, HashEmbedder(), tokens.counter())
    drafts = [
        Draft(kind="fact", content=f"Note {i}: the queue drains in {i} seconds.", tags=[f"t{i}"])
        for i in range(7)
    ]
    ids = [r.memory.id for r in store.remember_many(drafts)]
    with store._db.write() as conn:  # the file as version 8 left it
        conn.execute("DROP INDEX memories_redaction")
        conn.execute("ALTER TABLE memories DROP COLUMN redaction")
        conn.execute("DELETE FROM schema_migrations WHERE version >= 9")
    store.close()
    secret_id = ids[3]  # written raw by a version that did not know the token
    set_row(path, secret_id, **with_secret(path, secret_id))
    conn = sqlite3.connect(path)
    before = conn.execute("SELECT * FROM memories ORDER BY seq").fetchall()
    assert migrations.current_version(conn) == 8
    conn.close()

    store = MemoryStore(path, HashEmbedder(), tokens.counter())
    try:
        conn = store._conn
        assert migrations.current_version(conn) == migrations.LATEST
        after = conn.execute("SELECT * FROM memories ORDER BY seq").fetchall()
        assert [r[:-1] for r in after] == before and all(r[-1] is None for r in after)
        assert_no_token(store.get(secret_id))
        scrubs = Calls(monkeypatch, "scrub")
        assert [store.get(i).content for i in ids if i != secret_id]
        assert scrubs.count > 0  # unsealed rows are scanned

        assert [store.reseal(limit=3) for _ in range(4)] == [3, 3, 1, 0]
        seals_of = dict(conn.execute("SELECT id, redaction FROM memories").fetchall())
        assert seals_of[secret_id] == f"{secrets.rules_id()}.{rows.HOLDS_SECRET}"
        assert all(
            seals_of[i] == rows.seal(*(stored(path, i)[n] for n in rows.TEXT))
            for i in ids if i != secret_id
        )  # fmt: skip
        scrubs.count = 0
        assert [store.get(i).content for i in ids if i != secret_id]
        assert scrubs.count == 0
        assert_no_token(store.get(secret_id))
        assert [r[:-1] for r in conn.execute("SELECT * FROM memories ORDER BY seq")] == before
    finally:
        store.close()


def test_reseal_never_seals_a_row_whose_text_changed_after_its_scan(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = store.remember(CLEAN).memory.id
    set_row(path, memory_id, redaction=None)
    real = seals.sealed

    def then_rewritten(*fields: str) -> str:  # another process writes the raw token meanwhile
        stamp = real(*fields)
        set_row(path, memory_id, **with_secret(path, memory_id))
        return stamp

    monkeypatch.setattr(seals, "sealed", then_rewritten)
    assert store.reseal() == 0
    assert stored(path, memory_id)["redaction"] is None
    assert_no_token(store.get(memory_id))


def unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library as a process finds it before its rules have compiled (restored after)."""
    for name in ("_scanner", "_failed", "_generation"):
        monkeypatch.setattr(library, name, getattr(library, name))
    monkeypatch.setattr(library, "_scanner", None)
    monkeypatch.setattr(secrets, "_rules", None)


def test_a_sealed_row_is_read_without_waiting_for_the_library(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = store.remember(CLEAN).memory.id
    sealed_under = stored(path, memory_id)["redaction"]
    unloaded(monkeypatch)

    def compiling() -> None:
        raise AssertionError("a sealed row's read waited for the library's rules")

    monkeypatch.setattr(library, "_load", compiling)
    assert store.get(memory_id).content == stored(path, memory_id)["content"]
    assert secrets.rules_id() + "." == sealed_under[: len(secrets.rules_id()) + 1]


def test_a_library_that_fails_to_load_changes_the_rules_id(
    store: MemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = store.remember(CLEAN).memory.id
    unloaded(monkeypatch)
    monkeypatch.setitem(sys.modules, "kingfisher_sdk", None)  # its import fails
    named = secrets.rules_id()  # before the load: the installed library's
    assert not library.available()
    assert secrets.rules_id() != named
    scrubs = Calls(monkeypatch, "scrub")
    store.get(memory_id)  # sealed under the library's rules: scanned by the own rules now
    assert scrubs.count > 0


def test_a_library_of_another_version_than_installed_changes_the_rules_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unloaded(monkeypatch)
    monkeypatch.setattr(library, "_installed", lambda: "0.0.1")  # the distribution says so
    named = secrets.rules_id()
    assert library.available()  # the copy that loads is another
    assert secrets.rules_id() != named
