"""The `nous` command refuses bad input with one clear line and the right exit code (2: bad
usage, 1: a refused operation), and loses nothing; and it is forgiving where git is (a unique id
prefix). Real subprocesses, the real model and a real database file (issue 26)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import nous
from nous import cli
from nous.memory import writes
from nous.memory.model import KINDS

NOUS = [sys.executable, "-m", "nous"]
DEMO = str(Path(nous.__file__).parent / "data" / "project_memories.json")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("cli-bad")
    workspace = base / "shop"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    environment = {**os.environ, "NOUS_DB": str(base / "memory.db"), "NOUS_TEST_WS": str(workspace)}
    for kind, text in [
        ("decision", "Orders are stored in Postgres, partitioned by month."),
        ("convention", "Money is stored as integer cents, never floats."),
    ]:
        done = run(environment, "remember", "--kind", kind, text)
        assert done.returncode == 0, done.stderr
    return environment


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NOUS, *args], env=env, cwd=env["NOUS_TEST_WS"], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def refused(env: dict[str, str], code: int, *args: str) -> str:
    """The one line a refused command prints on stderr (nothing on stdout, no traceback)."""
    done = run(env, *args)
    assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nous"), done.stderr
    return lines[0]


def count(env: dict[str, str]) -> int:
    done = run(env, "--json", "list", "--limit", "500")
    assert done.returncode == 0, done.stderr
    total: int = json.loads(done.stdout)["total"]
    return total


def test_a_db_in_a_missing_folder_is_refused_and_not_created(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "nowhere" / "memory.db"
    line = refused(env, 2, "--db", str(db), "status")
    assert f"--db: no such folder: {db.parent}" in line and "nous init" in line
    assert not db.parent.exists()
    line = refused(env, 2, "--db", str(tmp_path), "status")
    assert "is a folder" in line
    made = run(env, "--db", str(db), "init")  # only init creates it
    assert made.returncode == 0 and db.is_file(), made.stderr
    assert "0 memories" in made.stdout


def test_a_missing_workspace_or_harvest_folder_is_refused(
    env: dict[str, str], tmp_path: Path
) -> None:
    line = refused(env, 2, "--workspace", str(tmp_path / "nope"), "status")
    assert line == f"nous: error: --workspace: not a folder: {tmp_path / 'nope'}"
    line = refused(env, 2, "harvest", str(tmp_path / "nope"))
    assert line == f"nous: error: harvest: not a folder: {tmp_path / 'nope'}"


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_refused(env: dict[str, str], query: str) -> None:
    assert "the query is empty" in refused(env, 2, "recall", query)


def test_an_unknown_kind_is_refused_with_the_list_and_nothing_is_stored(
    env: dict[str, str],
) -> None:
    before = count(env)
    line = refused(env, 2, "recall", "--kinds", "decison", "orders")
    assert "invalid kind 'decison'" in line and ", ".join(KINDS) in line
    line = refused(env, 2, "remember", "--kind", "banana", "Bananas are yellow fruit.")
    assert "invalid kind 'banana'" in line and ", ".join(KINDS) in line
    line = refused(env, 2, "list", "--kinds", "decision,nope")
    assert "invalid kind 'nope'" in line
    assert count(env) == before


def test_kinds_take_a_comma_list_and_leave_the_query_alone(env: dict[str, str]) -> None:
    done = run(env, "--json", "recall", "--kinds", "decision", "where are orders stored")
    assert done.returncode == 0, done.stderr
    found = [i for s in json.loads(done.stdout)["sections"] for i in s["items"]]
    assert [i["kind"] for i in found] == ["decision"]
    both = run(env, "--json", "recall", "--kinds", "decision,convention", "how is money stored")
    kinds = {i["kind"] for s in json.loads(both.stdout)["sections"] for i in s["items"]}
    assert "convention" in kinds and kinds <= {"decision", "convention"}


def test_a_budget_above_the_cap_says_so(env: dict[str, str]) -> None:
    done = run(env, "recall", "--budget", "100000000", "where are orders stored")
    assert done.returncode == 0, done.stderr
    assert "budget 100,000,000 is above the session cap of 3,000 tokens: cut to 3,000" in (
        done.stdout
    )


def test_import_without_a_file_asks_for_one_and_adds_nothing(env: dict[str, str]) -> None:
    before = count(env)
    assert "give the JSON file" in refused(env, 2, "import")
    assert count(env) == before


def test_a_closed_pipe_ends_quietly(env: dict[str, str]) -> None:
    reader = subprocess.Popen(
        [*NOUS, "--json", "list", "--limit", "500"], env=env, cwd=env["NOUS_TEST_WS"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # `| head` that stopped reading before the first byte
    stderr = reader.stderr.read().decode()
    assert reader.wait(timeout=120) == 0
    assert stderr == ""


def test_list_ids_work_everywhere_and_forgetting_twice_says_so_plainly(
    env: dict[str, str],
) -> None:
    first = run(env, "list", "orders").stdout.splitlines()[0]
    short = first.split()[0]
    assert len(short) == 8
    shown = run(env, "expand", short)
    assert shown.returncode == 0 and "Postgres" in shown.stdout
    edited = run(env, "edit", short, "--importance", "0.9")
    assert edited.returncode == 0, edited.stderr
    forgot = run(env, "forget", short)
    assert forgot.returncode == 0 and forgot.stdout.startswith("inactive ")
    line = refused(env, 1, "forget", short)
    assert "is already forgotten" in line and "cannot go from" not in line
    line = refused(env, 1, "expand", "zzzz")
    assert line == "nous: error: no memory with id 'zzzz'"


def test_a_bad_state_is_named_in_words(env: dict[str, str]) -> None:
    made = json.loads(
        run(env, "--json", "remember", "--kind", "episode", "We moved CI to GitHub Actions.").stdout
    )
    line = refused(env, 1, "edit", made["id"][:8], "--status", "core")
    assert "'core' is not a state an episode can be in (its states:" in line


@pytest.fixture
def colliding_ids(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """New memories get ids that share their first five characters (uuid4 made so), as two of
    thousands of real ids do."""
    made = iter([f"abcde{n:027x}" for n in range(1, 100)])
    monkeypatch.setattr(writes.uuid, "uuid4", lambda: uuid.UUID(next(made)))
    yield


def test_an_ambiguous_prefix_lists_the_candidates(
    colliding_ids: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ws").mkdir()
    common = ["--db", str(tmp_path / "m.db"), "--workspace", str(tmp_path / "ws")]
    for text in ("Releases ship on Fridays.", "Hotfixes ship any day."):
        assert cli.main([*common, "remember", "--kind", "convention", text]) == 0
    capsys.readouterr()
    assert cli.main([*common, "expand", "abcde"]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("nous: error: id 'abcde' is ambiguous: it starts ")
    assert "abcde000" in error and "Releases ship" in error and "Hotfixes ship" in error
    assert cli.main([*common, "expand", "abcde" + "0" * 26 + "1"]) == 0  # unique: found
    assert "Releases ship" in capsys.readouterr().out
    assert cli.main([*common, "forget", "abc"]) == 1
    assert "too short" in capsys.readouterr().err
