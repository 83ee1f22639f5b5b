"""Secrets in content, tags and source never reach the database file nor any output: through the
store on a real SQLite file, and through the real `nous` CLI (subprocess). A row written before a
rule existed (raw secret in the file) is redacted when read back."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens
from tests.security import fields

PLANTED = fields.planted()
ALL_VALUES = [v for p in PLANTED for v in p.values]
NOUS = [sys.executable, "-m", "nous"]


def test_the_store_keeps_no_secret_of_any_field_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = MemoryStore(path, HashEmbedder(), tokens.counter())
    results = [
        store.remember(Draft(kind=p.kind, content=p.content, tags=p.tags, source=p.source))
        for p in PLANTED
    ]
    rows = [store.get(r.memory.id).public() for r in results]
    store.close()
    for r, p, row in zip(results, PLANTED, rows, strict=True):  # the content, a tag, the source
        assert len(r.redactions) >= 1 + (len(p.tags) > 2) + (":" in p.source)
        assert "billing" in row["tags"] and ("[REDACTED:" in row["source"]) == (":" in p.source)
    assert fields.leaks(ALL_VALUES, json.dumps(rows)) == []
    assert fields.leaks(ALL_VALUES, fields.database_bytes(path)) == []


def test_a_row_stored_raw_by_an_older_version_is_redacted_when_read(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = MemoryStore(path, HashEmbedder(), tokens.counter())
    p = PLANTED[0]
    memory_id = store.remember(Draft(kind="fact", content="Billing deploy notes")).memory.id
    _write_raw(path, memory_id, p)
    fresh = MemoryStore(path, HashEmbedder(), tokens.counter())
    record = fresh.get(memory_id).public()
    fresh.close()
    store.close()
    assert fields.leaks(p.values, json.dumps(record)) == []
    assert "[REDACTED:" in record["content"] and "[REDACTED:" in record["source"]


def _write_raw(path: Path, memory_id: str, p: fields.Planted) -> None:
    """What a version without these rules would have written: every field as given."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "UPDATE memories SET content = ?, summary = ?, micro = ?, source = ?, tags = ? "
            "WHERE id = ?",
            (p.content, p.content, p.content[:80], p.source, json.dumps(p.tags), memory_id),
        )
    conn.close()
    assert any(v.encode() in fields.database_bytes(path) for v in p.values)


# -- the real CLI -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("cli-secrets")
    workspace = base / "billing"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text('[project]\nname = "billing"\n')
    return {**os.environ, "NOUS_DB": str(base / "memory.db"), "NOUS_TEST_WS": str(workspace)}


def nous(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [*NOUS, *args], env=env, cwd=env["NOUS_TEST_WS"], capture_output=True, text=True,
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cli_remember_recall_and_expand_never_show_a_secret(env: dict[str, str]) -> None:
    first, rest = PLANTED[0], PLANTED[1:]
    args = ["--tags", *first.tags, "--source", first.source, first.content]
    made = json.loads(nous(env, "--json", "remember", "--kind", first.kind, *args))
    batch = Path(env["NOUS_TEST_WS"]).parent / "batch.json"
    batch.write_text(
        json.dumps([{"kind": p.kind, "content": p.content, "tags": p.tags, "source": p.source}
                    for p in rest])
    )  # fmt: skip
    imported = json.loads(nous(env, "--json", "import", str(batch)))
    ids = [made["id"], *imported["ids"]]
    shown = [json.dumps(made)]
    recall_json = nous(env, "--json", "recall", "--budget", "4000", "billing deploy step keys")
    shown += [recall_json, nous(env, "recall", "--budget", "4000", "billing deploy rotate")]
    shown += [nous(env, "--json", "expand", memory_id) for memory_id in ids[::4]]  # ~1 s each
    shown += [json.dumps(row) for row in _rows(Path(env["NOUS_DB"]), ids)]
    recalled = {item["id"] for s in json.loads(recall_json)["sections"] for item in s["items"]}
    assert recalled & set(ids), "the recall must show some of the planted memories"
    assert fields.leaks(ALL_VALUES, *shown) == []
    assert fields.leaks(ALL_VALUES, fields.database_bytes(Path(env["NOUS_DB"]))) == []
    assert made["redactions"] and "[REDACTED:" in json.dumps(made["memory"]["tags"])


def test_cli_keeps_every_look_alike_class_whole(env: dict[str, str]) -> None:
    memories = fields.lookalikes()
    batch = Path(env["NOUS_TEST_WS"]).parent / "lookalikes.json"
    batch.write_text(
        json.dumps([{"kind": p.kind, "content": p.content, "tags": p.tags, "source": p.source}
                    for p in memories])
    )  # fmt: skip
    ids = json.loads(nous(env, "--json", "import", str(batch)))["ids"]
    stored = dict(zip(ids, _rows(Path(env["NOUS_DB"]), ids), strict=True))
    for i, (p, memory_id) in enumerate(zip(memories, ids, strict=True)):
        record = stored[memory_id]
        if i % 8 == 0:  # through the CLI too (~1 s a call)
            record = json.loads(nous(env, "--json", "expand", memory_id))
        shown = json.dumps([record["content"], record["tags"], record["source"]])
        assert "[REDACTED" not in shown, (p.content, shown)
        text, tag, source = p.values
        assert text in record["content"] and tag in record["tags"] and source == record["source"]


def _rows(path: Path, ids: list[str]) -> list[dict[str, Any]]:
    """The stored rows as the file holds them (read after the CLI process has exited)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    rows = {
        r["id"]: {k: r[k] for k in ("content", "summary", "micro", "source")}
        | {"tags": json.loads(r["tags"])}
        for r in conn.execute(
            f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids
        )
    }
    conn.close()
    return [rows[i] for i in ids]


def test_cli_output_of_a_raw_legacy_row_is_redacted(env: dict[str, str]) -> None:
    p = PLANTED[-1]
    made: dict[str, Any] = json.loads(
        nous(env, "--json", "remember", "--kind", "fact", "Billing deploy legacy row")
    )
    _write_raw(Path(env["NOUS_DB"]), made["id"], p)
    shown = [
        nous(env, "--json", "expand", made["id"]),
        nous(env, "--json", "recall", "--budget", "4000", "billing deploy step rotate keys"),
    ]
    assert fields.leaks(p.values, *shown) == []
