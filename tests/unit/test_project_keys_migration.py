"""Migration 4 and claiming: a store written when scopes were `project:<name>` is upgraded, and
the first folder that resolves to an old name takes its memories, harvest records and sessions."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from nous.context import chat
from nous.engine import Engine
from nous.memory import migrations
from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.protocol import FeedbackParams, RecallParams
from nous.settings import Settings
from nous.text import tokens

HARVESTED_PY = "file:.github/instructions/py.instructions.md#style-1"


def old_store(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file at schema version 3 with rows the way the old code wrote them."""
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:3])
        store = MemoryStore(db, HashEmbedder(), tokens.counter())
        # today's code writes the `shared` and `redaction` columns (migrations 5 and 9): there
        # while it writes only
        store._conn.execute("ALTER TABLE memories ADD COLUMN shared INTEGER NOT NULL DEFAULT 0")
        store._conn.execute("ALTER TABLE memories ADD COLUMN redaction TEXT")
        rows = [
            Draft(kind="decision", content="Money is integer cents.", scope="project:api"),
            Draft(kind="fact", content="Shared by both old api folders.", scope="project:api"),
            Draft(kind="fact", content="Billing runs nightly.", scope="project:billing"),
            Draft(kind="convention", content="Type-hint every function.",
                  scope="language:python", source=HARVESTED_PY),
            Draft(kind="preference", content="Prefer pathlib.", scope="language:python"),
        ]  # fmt: skip
        ids = [r.memory.id for r in store.remember_many(rows)]
        store._conn.executescript(
            "INSERT INTO harvest_sources VALUES ('api', 'AGENTS.md', 'x', 'now');"
            "INSERT INTO harvest_sources VALUES "
            "('api', '.github/instructions/py.instructions.md', 'y', 'now');"
            "INSERT INTO sessions (id, project, created_at, updated_at, used, cap, injected) "
            f"VALUES ('chat-1', 'api', 'now', 'now', 40, 3000, '{json.dumps([{'id': ids[0], 'text': 'Money is integer cents.', 'judged': False}])}');"
        )
        store._conn.execute("ALTER TABLE memories DROP COLUMN shared")
        store._conn.execute("ALTER TABLE memories DROP COLUMN redaction")
        assert migrations.current_version(store._conn) == 3
        store.close()


def git_repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def engine(db: Path, folder: Path) -> Engine:
    return Engine(Settings(db=db), folder, embedder=HashEmbedder())


def scopes(db: Path) -> dict[str, str]:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT content, scope FROM memories").fetchall())
    finally:
        conn.close()


def test_migration_lists_old_names_keys_sessions_by_project_and_retires_language_harvest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    old_store(db, monkeypatch)
    store = MemoryStore(db, HashEmbedder(), tokens.counter())
    conn = store._conn
    assert migrations.current_version(conn) == migrations.LATEST >= 4
    names = {r[0] for r in conn.execute("SELECT name FROM legacy_projects")}
    assert names == {"api", "billing"}
    status = dict(conn.execute("SELECT content, status FROM memories").fetchall())
    assert status["Type-hint every function."] == "inactive"  # a project's rule, was shared
    assert status["Prefer pathlib."] == "new"  # a language memory someone wrote stays
    assert [r[0] for r in conn.execute("SELECT path FROM harvest_sources")] == ["AGENTS.md"]
    pk = [r[1] for r in conn.execute("PRAGMA table_info(sessions)") if r[5]]
    assert sorted(pk) == ["id", "project"]
    assert conn.execute("SELECT project, used FROM sessions").fetchall() == [("api", 40)]
    assert store.integrity() == "ok"
    store.close()


def test_the_first_folder_resolving_to_an_old_name_claims_it_and_a_second_starts_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    old_store(db, monkeypatch)
    first = engine(db, git_repo(tmp_path / "work" / "api", "git@github.com:acme/api.git"))
    key = first.project.key
    conn = first.store._conn  # the store opens (and claims) on first use
    moved = scopes(db)
    assert moved["Money is integer cents."] == f"project:{key}"
    assert moved["Shared by both old api folders."] == f"project:{key}"
    assert moved["Billing runs nightly."] == "project:billing"  # nobody resolves to it yet
    assert {r[0] for r in conn.execute("SELECT name FROM legacy_projects")} == {"billing"}
    assert conn.execute("SELECT project FROM harvest_sources").fetchall() == [(key,)]
    # the old session is this project's now: feedback on it still works
    fb = chat.feedback(
        first, FeedbackParams(session_id="chat-1", response="Money is integer cents.")
    )
    assert len(fb.referenced) == 1
    # and the vector index of this process sees the moved rows in their new scope
    assert (
        chat.recall(first, RecallParams(query="integer cents money")).text.count("integer cents")
        == 1
    )

    second = engine(db, git_repo(tmp_path / "scratch" / "api"))
    assert second.project.name == "api" and second.project.key != key
    assert (
        "integer cents" not in chat.recall(second, RecallParams(query="integer cents money")).text
    )
    assert second.store._conn.execute(
        "SELECT count(*) FROM memories WHERE scope = ?", (second.project.scope,)
    ).fetchone() == (0,)
    first.store.close()
    second.store.close()


def test_a_claim_folds_text_the_new_scope_already_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    old_store(db, monkeypatch)
    folder = git_repo(tmp_path / "api")
    project_scope = engine(tmp_path / "other.db", folder).project.scope
    store = MemoryStore(db, HashEmbedder(), tokens.counter())
    store.remember(Draft(kind="decision", content="Money is integer cents.", scope=project_scope))
    store.close()
    claimed = engine(db, folder)
    rows = claimed.store._conn.execute(
        "SELECT scope, confirmations FROM memories WHERE content = 'Money is integer cents.'"
    ).fetchall()
    assert rows == [(project_scope, 1)]
    assert claimed.store.integrity() == "ok"
    claimed.store.close()


def test_a_project_that_gains_a_remote_keeps_its_memories(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    folder = git_repo(tmp_path / "api")
    before = engine(db, folder)
    written = before.remember(Draft(kind="fact", content="The api caches in Postgres."))
    before.store.close()
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", "https://h.example/a/api"])
    after = engine(db, folder)
    assert after.project.key != before.project.key
    assert after.expand(written.memory.id).scope == after.project.scope
    after.store.close()


def test_claiming_twice_or_from_two_stores_moves_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    old_store(db, monkeypatch)
    folder = git_repo(tmp_path / "api")
    one, two = engine(db, folder), engine(db, folder)
    assert one.store is not two.store
    counts = [
        e.store._conn.execute(
            "SELECT count(*) FROM memories WHERE scope = ?", (e.project.scope,)
        ).fetchone()[0]
        for e in (one, two)
    ]
    assert counts == [2, 2]
    one.store.close()
    two.store.close()
