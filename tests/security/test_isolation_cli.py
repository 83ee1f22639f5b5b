"""The `nous` command keeps same-named projects apart too: two folders called `api` (a git
repository with a remote and a plain folder) on one database, through real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def nous(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nous", "--json", *args],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def ok(env: dict[str, str], cwd: Path, *args: str) -> Any:
    done = nous(env, cwd, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_two_apis_through_the_cli(tmp_path: Path) -> None:
    a = tmp_path / "work" / "api"
    a.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(a)], check=True)
    subprocess.run(["git", "-C", str(a), "remote", "add", "origin", "git@h.example:x/api.git"])
    b = tmp_path / "scratch" / "api"
    b.mkdir(parents=True)
    env = {**os.environ, "NOUS_DB": str(tmp_path / "m.db")}
    made = ok(env, a, "remember", "--kind", "decision", "The api deploys blue-green from ops/.")
    a_status, b_status = ok(env, a, "status"), ok(env, b, "status")
    assert a_status["project"] == b_status["project"] == "api"
    assert a_status["projectKey"] != b_status["projectKey"]
    assert "blue-green" not in ok(env, b, "recall", "--budget", "2000", "how does the api deploy")["text"]  # fmt: skip
    assert "blue-green" in ok(env, a, "recall", "--budget", "2000", "how does the api deploy")["text"]  # fmt: skip
    for args in (("expand", made["id"]), ("forget", made["id"]), ("forget", "--purge", made["id"])):
        refused = nous(env, b, *args)
        assert refused.returncode == 1 and "no memory with id" in refused.stderr, refused.stderr
    planted = nous(env, b, "remember", "--kind", "fact", "--scope", f"project:{a_status['projectKey']}", "planted")  # fmt: skip
    assert planted.returncode == 1 and "scope" in planted.stderr
    assert ok(env, a, "expand", made["id"])["status"] == "recorded"
