"""The `nous` command through a real subprocess, real model and real database file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import nous
from nous.text import tokens

NOUS = [sys.executable, "-m", "nous"]
DEMO = str(Path(nous.__file__).parent / "data" / "project_memories.json")
"""The demo set (`scripts/run` imports it; `nous import` asks for a file)."""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("cli")
    workspace = base / "workspace"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text('[project]\nname = "demo-app"\n')
    (workspace / "main.py").write_text("print('hi')\n")
    return {**os.environ, "NOUS_DB": str(base / "memory.db"), "NOUS_TEST_WS": str(workspace)}


def nous(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NOUS, *args], env=env, cwd=env["NOUS_TEST_WS"], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def nous_json(env: dict[str, str], *args: str) -> Any:
    result = nous(env, "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def items(data: dict[str, Any]) -> list[dict[str, Any]]:
    ranked = [i for section in data["sections"] for i in section["items"]]
    return sorted(ranked, key=lambda i: -i["score"])


def test_remember_twice_gives_one_row_confirmed(env: dict[str, str]) -> None:
    first = nous_json(env, "remember", "--kind", "preference", "Use pytest, not unittest")
    second = nous_json(env, "remember", "--kind", "preference", "use pytest,  not unittest.")
    assert first["status"] == "created" and second["status"] == "confirmed"
    assert first["id"] == second["id"]
    assert second["memory"]["status"] == "confirmed"
    assert second["memory"]["scope"] == f"project:{nous_json(env, 'status')['projectKey']}"
    status = nous_json(env, "status")
    assert status["counts"]["preference"] == {"confirmed": 1}


def test_recall_never_exceeds_the_budget(env: dict[str, str]) -> None:
    nous_json(env, "import", DEMO)
    for budget in (50, 80, 200, 500):  # 30 holds no heading, fence and one-line memory
        data = nous_json(env, "recall", "--budget", str(budget), "How do we store vectors?")
        assert data["tokens"] == tokens.count(data["text"])
        assert data["tokens"] <= budget
        assert items(data), budget
    data = nous_json(env, "recall", "--budget", "500", "How do we store vectors?")
    assert any("numpy" in item["text"] for item in items(data)[:3])
    listed = {i["id"] for i in items(data)} | {d["id"] for d in data["dropped"]}
    assert len(listed) == len(items(data)) + len(data["dropped"])


def test_recall_filters_by_kind(env: dict[str, str]) -> None:
    nous_json(env, "import", DEMO)
    data = nous_json(env, "recall", "--kinds", "constraint", "--", "logging and stdout")
    assert items(data) and {i["kind"] for i in items(data)} == {"constraint"}


def test_expand_and_forget(env: dict[str, str]) -> None:
    created = nous_json(env, "remember", "--kind", "fact", "The staging host is stage-3")
    full = nous_json(env, "expand", created["id"])
    assert full["content"] == "The staging host is stage-3"
    assert nous_json(env, "forget", created["id"])["status"] == "inactive"
    recalled = nous_json(env, "recall", "staging host")
    assert created["id"] not in {i["id"] for i in items(recalled)}


def test_status_shows_dimension_and_encoding(env: dict[str, str]) -> None:
    data = nous_json(env, "status", "--encoding", "cl100k_base")
    assert (data["dimension"], data["encoding"], data["project"]) == (
        384,
        "cl100k_base",
        "demo-app",
    )
    assert data["languages"] == ["python"]
    assert data["database"] == env["NOUS_DB"]


def test_db_flag_overrides_env(env: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    nous_json(env, "--db", str(other), "remember", "--kind", "fact", "only in the other file")
    assert nous_json(env, "status", "--db", str(other))["memories"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["remember", "--kind", "Bogus Kind", "text"], "invalid kind"),
        (["remember", "--kind", "fact", "   "], "content is empty"),
        (["expand", "0123456789abcdef"], "no memory with id"),
        (["forget", "0123456789abcdef"], "no memory with id"),
        (["remember", "--kind", "fact", "--confidence", "7", "x"], "between 0 and 1"),
        (["recall", "--budget", "-3", "x"], "positive integer"),
        (["status", "--encoding", "gpt2"], "o200k_base"),
    ],
)
def test_bad_input_is_one_clear_line(env: dict[str, str], args: list[str], message: str) -> None:
    result = nous(env, *args)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_unreadable_database_is_one_clear_line(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"\x00garbage" * 512)
    result = nous(env, "--db", str(bad), "status")
    assert result.returncode == 1
    assert result.stderr.startswith("nous: error: cannot open memory database")
    assert len(result.stderr.strip().splitlines()) == 1


def test_list_and_edit_share_the_daemons_use_cases(env: dict[str, str]) -> None:
    made = nous_json(
        env, "remember", "--kind", "fact", "--source", "chat", "The nightly export runs at 03:00."
    )
    listed = nous_json(env, "list", "nightly export", "--sources", "chat", "--review")
    assert [m["id"] for m in listed["items"]] == [made["id"]]
    assert listed["items"][0]["sourceType"] == "chat" and listed["reviewPending"] >= 1
    edited = nous_json(
        env, "edit", made["id"], "--content", "The nightly export runs at 04:30 UTC.", "--pin"
    )
    assert edited["reembedded"] and edited["memory"]["pinned"]
    assert set(edited["changed"]) >= {"content", "pinned"}
    kept = nous_json(env, "edit", made["id"], "--reviewed")
    assert kept["memory"]["reviewed"]
    assert made["id"] not in [m["id"] for m in nous_json(env, "list", "--review")["items"]]
    text = nous(env, "list", "nightly")
    assert text.returncode == 0 and "04:30" in text.stdout and "of 1" in text.stdout
    refused = nous(env, "edit", made["id"], "--status", "new")
    assert refused.returncode == 1 and "that is 'core' cannot become 'new'" in refused.stderr
    bad = nous(env, "list", "--since", "yesterday")
    assert bad.returncode == 1 and "since" in bad.stderr
