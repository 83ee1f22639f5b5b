"""The memory store on real SQLite files: writes, confirmation, lifecycle, FTS sync, vectors,
and several processes on one file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nous.errors import InvalidMemory, InvalidTransition, StoreError, UnknownMemory
from nous.memory import migrations, renderings, turns
from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens
from tests.conftest import ROOT


def fact(text: str, **extra: object) -> Draft:
    return Draft(kind="fact", content=text, **extra)  # type: ignore[arg-type]


def fts_ids(store: MemoryStore, word: str) -> set[str]:
    return {i for i, _ in store.text_search(word, 50)}


def test_migrations_bring_an_empty_file_to_the_latest_version(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    MemoryStore(path, HashEmbedder(), tokens.counter()).close()
    conn = sqlite3.connect(path)
    assert migrations.current_version(conn) == migrations.LATEST
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "memories",
        "memories_fts",
        "usage",
        "sessions",
        "fingerprints",
        "transitions",
    } <= tables
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reopening_does_not_reapply_migrations(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    MemoryStore(path, HashEmbedder(), tokens.counter()).close()
    MemoryStore(path, HashEmbedder(), tokens.counter()).close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(
        migrations.MIGRATIONS
    )


def test_connection_pragmas(store: MemoryStore) -> None:
    assert store._conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert store._conn.execute("PRAGMA journal_size_limit").fetchone()[0] > 0


def test_write_makes_three_renderings_and_all_fields(store: MemoryStore) -> None:
    long = "We chose Postgres for the main database. " + "It unifies vector and row data. " * 40
    result = store.remember(Draft(kind="decision", content=long, outcome="success"))
    m = result.memory
    assert result.status == "created"
    assert m.status == "recorded"
    assert m.content.startswith("We chose Postgres")
    assert m.summary.startswith("Decision: We chose Postgres")
    assert "[outcome: success]" in m.summary and "1.00" not in m.summary
    assert 20 <= store.counter.count(m.summary) <= 100
    assert "\n" not in m.micro and store.counter.count(m.micro) <= 22
    assert m.created_at.endswith("Z") and m.content_hash and len(m.id) == 32


def test_same_text_again_is_a_confirmation_not_a_second_row(store: MemoryStore) -> None:
    first = store.remember(fact("Tim prefers Celsius"))
    again = store.remember(fact("  tim prefers   CELSIUS. "))
    assert again.status == "confirmed"
    assert again.memory.id == first.memory.id
    assert again.memory.confirmations == 1
    assert again.memory.status == "confirmed"
    assert store._conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def test_three_confirmations_make_a_fact_core(store: MemoryStore) -> None:
    for _ in range(4):
        result = store.remember(fact("The API listens on port 8080"))
    assert result.memory.status == "core"
    reasons = [r[0] for r in store._conn.execute("SELECT reason FROM transitions ORDER BY id")]
    assert reasons == ["created", "confirmed", "confirmed"]


def test_same_text_in_two_scopes_is_two_memories(store: MemoryStore) -> None:
    a = store.remember(fact("use tabs", scope="project:a"))
    b = store.remember(fact("use tabs", scope="project:b"))
    assert a.memory.id != b.memory.id


def test_batch_with_a_repeat_writes_one_row(store: MemoryStore) -> None:
    results = store.remember_many([fact("alpha"), fact("beta"), fact("Alpha")])
    assert [r.status for r in results] == ["created", "created", "confirmed"]


def test_unchanged_text_is_not_re_embedded(tmp_path: Path) -> None:
    class Counting(HashEmbedder):
        calls = 0

        def embed_batch(self, texts):  # type: ignore[no-untyped-def]
            Counting.calls += len(texts)
            return super().embed_batch(texts)

    store = MemoryStore(tmp_path / "e.db", Counting(), tokens.counter())
    store.remember(fact("embedded once"))
    store.remember(fact("embedded once"))
    assert Counting.calls == 1


def test_fts_follows_insert_update_and_delete(store: MemoryStore) -> None:
    m = store.remember(fact("Redis adds a separate service")).memory
    assert fts_ids(store, "redis") == {m.id}
    with store._db.write():
        store._conn.execute(
            "UPDATE memories SET content = 'Memcached instead' WHERE id = ?", (m.id,)
        )
    assert fts_ids(store, "redis") == set()
    assert fts_ids(store, "memcached") == {m.id}
    store.forget(m.id, purge=True)
    assert fts_ids(store, "memcached") == set()
    assert (
        store._conn.execute(
            "INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')"
        ).fetchall()
        == []
    )


def test_forget_is_a_lifecycle_step_and_hides_from_search(store: MemoryStore) -> None:
    m = store.remember(fact("the cache lives in redis")).memory
    q = store.embed("the cache lives in redis")
    assert store.vector_search(q, 5)[0][0] == m.id
    forgotten = store.forget(m.id)
    assert forgotten.status == "inactive"
    assert store.get(m.id).content == m.content
    assert store.vector_search(q, 5) == []
    assert fts_ids(store, "redis") == set()
    with pytest.raises(InvalidTransition):
        store.forget(m.id)


def test_decisions_are_never_purged(store: MemoryStore) -> None:
    d = store.remember(Draft(kind="decision", content="use postgres")).memory
    with pytest.raises(InvalidMemory, match="never deleted"):
        store.forget(d.id, purge=True)


def test_supersede_links_and_damps(store: MemoryStore) -> None:
    old = store.remember(fact("deploy with fabric")).memory
    new = store.remember(fact("deploy with ansible")).memory
    updated = store.supersede(old.id, new.id)
    assert updated.status == "superseded" and updated.superseded_by == new.id
    assert store.vector_search(store.embed("deploy with fabric"), 1)[0][0] == old.id


def test_outcome_reviews_a_decision_and_rerenders(store: MemoryStore) -> None:
    d = store.remember(Draft(kind="decision", content="Adopt ruff for linting")).memory
    assert store.set_outcome(d.id, "pending").status == "pending"
    reviewed = store.set_outcome(d.id, "success")
    assert reviewed.status == "reviewed" and reviewed.summary.endswith("[outcome: success]")


def test_generic_transition_checks_the_machine(store: MemoryStore) -> None:
    e = store.remember(Draft(kind="episode", content="debugged the flaky test")).memory
    assert store.transition(e.id, "summarized", "aged").status == "summarized"
    with pytest.raises(InvalidTransition):
        store.transition(e.id, "active", "back")


def test_a_transition_another_process_made_first_is_no_error(store: MemoryStore) -> None:
    """Two windows judge the same reply: both find a procedure ineffective, one moves it first
    (the soak's `a procedure cannot go from 'ineffective' to 'ineffective'`)."""
    p = store.remember(Draft(kind="procedure", content="run make test before pushing")).memory
    other = MemoryStore(store.path, HashEmbedder(), tokens.counter())
    try:
        assert other.transition(p.id, "ineffective", "feedback").status == "ineffective"
        assert store.transition(p.id, "ineffective", "feedback").status == "ineffective"
    finally:
        other.close()


def test_unknown_id_is_a_named_error(store: MemoryStore) -> None:
    with pytest.raises(UnknownMemory):
        store.get("nope")
    with pytest.raises(UnknownMemory):
        store.forget("nope")


@pytest.mark.parametrize(
    ("draft", "message"),
    [
        (Draft(kind="fact", content="   "), "empty"),
        (Draft(kind="Not A Kind!", content="x"), "invalid kind"),
        (Draft(kind="fact", content="x", scope="galaxy"), "invalid scope"),
        (Draft(kind="fact", content="x", confidence=2), "between 0 and 1"),
        (Draft(kind="decision", content="x", outcome="great"), "invalid outcome"),
    ],
)
def test_invalid_drafts_are_refused(store: MemoryStore, draft: Draft, message: str) -> None:
    with pytest.raises(InvalidMemory, match=message):
        store.remember(draft)
    assert store._conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


def test_secrets_are_redacted_before_storage(store: MemoryStore) -> None:
    result = store.remember(fact("the staging key is AKIAIOSFODNN7EXAMPLE, rotate it"))
    assert (
        "AKIA" not in result.memory.content and "[REDACTED:aws-access-key]" in result.memory.content
    )
    assert [r.kind for r in result.redactions] == ["aws-access-key"]
    raw = store._conn.execute("SELECT content, summary, micro FROM memories").fetchone()
    assert not any("AKIAIOSFODNN7EXAMPLE" in col for col in raw)


def test_scope_filter_in_both_searches(store: MemoryStore) -> None:
    store.remember(fact("payments use stripe", scope="project:shop"))
    store.remember(fact("payments use adyen", scope="project:other"))
    q = store.embed("payments")
    vector_ids = {i for i, _ in store.vector_search(q, 10, ["project:shop", "universal"])}
    text_ids = {i for i, _ in store.text_search("payments", 10, ["project:shop", "universal"])}
    contents = {m.content for m in store.get_many([*vector_ids, *text_ids]).values()}
    assert contents == {"payments use stripe"}


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "garbage.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open memory database"):
        MemoryStore(bad, HashEmbedder(), tokens.counter())


def run_writer(db: Path, prefix: str, count: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.writer", str(db), prefix, str(count)], cwd=ROOT
    )


def test_matrix_sees_another_process_writes_before_answering(store: MemoryStore) -> None:
    store.remember(fact("local fact"))
    assert run_writer(store.path, "other-window", 3).wait(timeout=60) == 0
    q = store.embed("other-window wrote fact number 2")
    top = store.vector_search(q, 1)
    assert store.get(top[0][0]).content == "other-window wrote fact number 2"
    assert store.vector_count() == 4


def test_matrix_drops_rows_purged_by_another_process(store: MemoryStore) -> None:
    m = store.remember(fact("to be purged elsewhere")).memory
    other = MemoryStore(store.path, HashEmbedder(), tokens.counter())
    other.forget(m.id, purge=True)
    other.close()
    assert store.vector_search(store.embed("purged elsewhere"), 5) == []


@pytest.mark.slow
def test_four_processes_write_800_distinct_memories(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    MemoryStore(db, HashEmbedder(), tokens.counter()).close()
    procs = [run_writer(db, f"writer-{n}", 200) for n in range(4)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0, 0]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 800
    assert conn.execute("SELECT count(DISTINCT content_hash) FROM memories").fetchone()[0] == 800
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    blobs = conn.execute("SELECT embedding FROM memories").fetchall()
    assert all(len(b[0]) == 384 * 4 for b in blobs)
    assert np.isclose(np.linalg.norm(np.frombuffer(blobs[0][0], dtype="<f4")), 1.0)


def test_chat_rows_kept_before_are_hashed_within_their_session(tmp_path: Path) -> None:
    """Migration 6 on a file written when the same words in two sessions were one row: the
    session that said them still confirms its own row; another session gets its own."""
    path = tmp_path / "old.db"
    store = MemoryStore(path, HashEmbedder(), tokens.counter())
    said = store.remember(
        turns.draft("a", 0, "Ada: the cache is warmed at boot.", scope="universal")
    )
    with store._db.write() as conn:  # as the file was before migration 6
        conn.execute(
            "UPDATE memories SET content_hash = ? WHERE id = ?",
            (renderings.content_hash(said.memory.content), said.memory.id),
        )
        conn.execute("DELETE FROM schema_migrations WHERE version >= 6")
        for index in ("fingerprints_project", "usage_project"):  # nor migration 7's columns
            conn.execute(f"DROP INDEX {index}")
        for column in ("project", "refresh", "conversation_tokens", "elapsed_ms", "cold"):
            conn.execute(f"ALTER TABLE fingerprints DROP COLUMN {column}")
        conn.execute("ALTER TABLE usage DROP COLUMN project")
        conn.execute("ALTER TABLE fingerprints DROP COLUMN items")  # nor migration 8's
        conn.execute("DROP INDEX memories_redaction")  # nor migration 9's
        conn.execute("ALTER TABLE memories DROP COLUMN redaction")
    store.close()
    store = MemoryStore(path, HashEmbedder(), tokens.counter())
    try:
        again = store.remember(
            turns.draft("a", 5, "Ada: the cache is warmed at boot.", scope="universal")
        )
        assert (again.status, again.memory.id) == ("confirmed", said.memory.id)
        other = store.remember(
            turns.draft("b", 0, "Ada: the cache is warmed at boot.", scope="universal")
        )
        assert other.status == "created" and other.memory.source == "chat:b#0"
    finally:
        store.close()
