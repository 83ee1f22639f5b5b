"""The vector index saved beside its database (`memory.snapshot`): a store opened from it answers
exactly as one that read every row, picks up what changed after it, never keeps a deleted
memory's vector, and ignores a snapshot of another database, model or a damaged file."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from nous.memory import snapshot
from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens

SCOPE = "project:p"
QUERIES = ["release train tuesday", "postgres ledger", "ruff mypy strict", "feature flag rollout"]


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(snapshot, "MIN_ROWS", 10)
    monkeypatch.setattr(snapshot, "STALE_ROWS", 5)
    yield


def _texts(start: int, n: int) -> list[str]:
    words = "release train tuesday postgres ledger ruff mypy strict feature flag rollout".split()
    return [
        f"{words[i % 11]} {words[(i * 7) % 11]} {words[(i * 3) % 11]} note {i}"
        for i in range(start, start + n)
    ]


def _write(store: MemoryStore, texts: list[str]) -> list[str]:
    drafts = [Draft(kind="fact", content=t, scope=SCOPE) for t in texts]
    return [r.memory.id for r in store.remember_many(drafts)]


def _answers(store: MemoryStore) -> list[list[tuple[str, float]]]:
    embedder = HashEmbedder()
    return [store.vector_search(embedder.embed(q), 8, [SCOPE]) for q in QUERIES]


def _open(path: Path, **kw: bool) -> MemoryStore:
    return MemoryStore(path, HashEmbedder(), tokens.counter(), **kw)


def test_a_store_opened_from_its_snapshot_answers_as_one_that_read_every_row(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    store = _open(db)
    _write(store, _texts(0, 40))
    store.close()
    saved = snapshot.path_for(db)
    assert saved.is_file()
    from_snapshot = _open(db)
    answers = _answers(from_snapshot)
    count = from_snapshot.vector_count()
    from_snapshot.close()
    saved.unlink()
    from_rows = _open(db)
    assert _answers(from_rows) == answers and from_rows.vector_count() == count == 40
    from_rows.close()


def test_what_changed_after_the_snapshot_is_pulled_and_a_purge_drops_the_file(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    store = _open(db)
    ids = _write(store, _texts(0, 30))
    store.close()
    saved = snapshot.path_for(db)
    before = saved.read_bytes()
    # another writer adds rows without rewriting the snapshot (too few to be stale)
    other = _open(db)
    added = _write(other, _texts(100, 3))
    other._vectors.index._unsaved = 0  # this writer leaves the file as it is
    other.close()
    assert saved.read_bytes() == before
    reopened = _open(db)
    found = {i for answer in _answers(reopened) for i, _ in answer}
    assert set(added) <= set(reopened.vectors(added)) and reopened.vector_count() == 33
    assert found  # searches run on the restored rows
    reopened.forget(ids[0], purge=True)
    assert not saved.exists()  # it held the purged row's vector
    assert ids[0] not in {i for a in _answers(reopened) for i, _ in a}
    reopened.close()


def test_a_snapshot_never_keeps_the_vector_of_a_row_deleted_by_another_process(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    first = _open(db)
    ids = _write(first, _texts(0, 30))
    first._vectors.index._unsaved = 0  # as if its snapshot were current
    second = _open(db)
    second.forget(ids[5], purge=True)
    second.close()
    first._vectors.index._unsaved = snapshot.STALE_ROWS  # it will write one on close
    first.close()  # syncs first: the purge reaches its index before it writes
    saved = snapshot.load(snapshot.path_for(db), _key(db), "hash-bow", 384, 10**9)
    assert saved is not None
    row = saved.ids.index(ids[5])
    assert not saved.matrix[row].any() and saved.scale[row] == 0 and not saved.live[row]
    again = _open(db)
    assert ids[5] not in again.vectors([ids[5]])
    assert ids[5] not in {i for a in _answers(again) for i, _ in a}
    again.close()


def test_a_snapshot_of_another_database_or_model_or_a_damaged_one_is_ignored(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    store = _open(a)
    _write(store, _texts(0, 20))
    store.close()
    store = _open(b)
    _write(store, _texts(50, 20))
    answers = _answers(store)
    store.close()
    shutil.copy(snapshot.path_for(a), snapshot.path_for(b))  # a's rows beside b's database
    other = _open(b)
    assert _answers(other) == answers
    other.close()
    snapshot.path_for(b).write_bytes(b"NOUSVEC1" + b"\x00" * 20)
    damaged = _open(b)
    assert _answers(damaged) == answers
    damaged.close()
    key = _key(b)
    assert snapshot.load(snapshot.path_for(b), key, "another-model", 384, 10**9) is None


def test_a_restored_store_hands_rows_still_without_a_vector_to_its_backlog(
    tmp_path: Path,
) -> None:
    """A writer that deferred its vectors and stopped before they landed: the snapshot taken
    then names those rows, and a store restored from it embeds them."""
    db = tmp_path / "m.db"
    store = _open(db)
    ids = _write(store, _texts(0, 24))
    store.close()
    conn = sqlite3.connect(db)
    with conn:  # four rows written as a deferring writer writes them: no vector yet
        seq = conn.execute(
            "UPDATE counters SET value = value + 1 WHERE name = 'change_seq' RETURNING value"
        ).fetchone()[0]
        conn.executemany(
            "UPDATE memories SET embedding = x'', change_seq = ? WHERE id = ?",
            [(seq, i) for i in ids[:4]],
        )
    conn.close()
    snapshot.path_for(db).unlink()
    seen = _open(db)  # reads every row: four without a vector
    assert seen.vector_count() == 20
    seen._vectors.index._unsaved = snapshot.STALE_ROWS
    seen.close()  # its snapshot names the four
    restored = _open(db, defer_vectors=True)
    assert restored.wait_embedded(timeout=30)
    assert restored.vector_count() == 24 and set(restored.vectors(ids[:4])) == set(ids[:4])
    restored.close()


def _key(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(
            conn.execute("SELECT value FROM counters WHERE name = 'store_key'").fetchone()[0]
        )
    finally:
        conn.close()


def test_quantised_rows_round_trip_exactly(tmp_path: Path) -> None:
    snap = snapshot.Snapshot(
        7, ["a", "b"], ["s"], np.array([0, 0], dtype=np.int32), np.array([True, False]),
        np.array([0.01, 0.02], dtype=np.float32), np.array([[1, -2], [127, -127]], dtype=np.int8),
        ["c"],
    )  # fmt: skip
    path = tmp_path / "x-vectors"
    snapshot.save(path, 42, "m", snap)
    got = snapshot.load(path, 42, "m", 2, 7)
    assert got is not None and got.ids == ["a", "b"] and got.missing == ["c"]
    assert np.array_equal(got.matrix, snap.matrix) and np.array_equal(got.scale, snap.scale)
    assert snapshot.load(path, 42, "m", 2, 6) is None  # the database is behind the snapshot
    assert snapshot.load(path, 43, "m", 2, 7) is None
