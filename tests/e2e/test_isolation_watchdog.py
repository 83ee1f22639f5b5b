"""Project isolation on one shared database (two daemons, and one multi-root daemon), and the
editor-death watchdog."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from tests.e2e.conftest import make_workspace
from tests.e2e.raw import Raw

SECRET_A = "Project alpha deploys with the blue-green script in ops/deploy_alpha.sh"
SECRET_B = "Project beta pins numpy below 2 because of the legacy pickles"


def texts(result: dict[str, object]) -> str:
    return str(result["text"]) + " ".join(
        i["text"]
        for s in result["sections"]  # type: ignore[attr-defined]
        for i in s["items"]
    )


def test_two_daemons_one_database_never_mix_projects(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    alpha, beta = make_workspace(tmp_path, "alpha"), make_workspace(tmp_path, "beta")
    a, b = Raw(db, alpha), Raw(db, beta)
    try:
        a.initialize()
        b.initialize()
        assert a.call("nous/remember", {"kind": "procedure", "content": SECRET_A})["scope"].startswith("project:alpha-")  # fmt: skip
        assert b.call("nous/remember", {"kind": "decision", "content": SECRET_B})["scope"].startswith("project:beta-")  # fmt: skip
        a.call("nous/remember", {"kind": "preference", "content": "Prefer small pure functions", "scope": "universal"})  # fmt: skip
        for query in ("how do we deploy", "numpy pin pickles", "deploy alpha blue-green numpy"):
            seen_b = texts(b.call("nous/recall", {"query": query, "sessionId": "b"}))
            seen_b += texts(b.call("nous/context", {"input": query, "mode": "turn", "sessionId": "b"}))  # fmt: skip
            assert "blue-green" not in seen_b
            seen_a = texts(a.call("nous/recall", {"query": query, "sessionId": "a"}))
            seen_a += texts(a.call("nous/context", {"input": query, "mode": "turn", "sessionId": "a"}))  # fmt: skip
            assert "legacy pickles" not in seen_a
        # Each side does see its own and the universal memories: the test could fail.
        assert "blue-green" in texts(a.call("nous/recall", {"query": "how do we deploy alpha"}))
        assert "legacy pickles" in texts(b.call("nous/recall", {"query": "why is numpy pinned"}))
        assert "small pure functions" in texts(b.call("nous/recall", {"query": "function style preference"}))  # fmt: skip
        # b's own chat turns are kept as its episodes (design §10); nothing of alpha's
        assert b.call("nous/status", {})["counts"].keys() == {"decision", "preference", "episode"}
    finally:
        a.close()
        b.close()


def test_multi_root_daemon_routes_by_active_file(tmp_path: Path) -> None:
    alpha, beta = make_workspace(tmp_path, "alpha"), make_workspace(tmp_path, "beta")
    client = Raw(tmp_path / "m.db", alpha)
    try:
        client.initialize(folders=[alpha, beta])
        client.call("nous/remember", {"kind": "procedure", "content": SECRET_A})
        seen = texts(client.call("nous/context", {
            "input": "how do we deploy?", "mode": "turn", "activeFile": (beta / "main.py").as_uri(),
        }))  # fmt: skip
        assert "Project `beta`" in seen and "blue-green" not in seen
        seen = texts(client.call("nous/context", {
            "input": "how do we deploy?", "mode": "turn", "activeFile": str(alpha / "main.py"),
        }))  # fmt: skip
        assert "blue-green" in seen
    finally:
        client.close()


def test_daemon_exits_when_the_editor_dies(tmp_path: Path) -> None:
    editor = subprocess.Popen(["sleep", "300"])
    client = Raw(tmp_path / "m.db", make_workspace(tmp_path, "ws"))
    try:
        client.initialize(pid=editor.pid)
        assert client.call("nous/status", {})["project"] == "ws"
        time.sleep(1.5)
        assert client.proc.poll() is None  # alive while the editor is
        editor.kill()
        started = time.monotonic()
        code = client.proc.wait(10)
        assert code != 0 and time.monotonic() - started < 5
    finally:
        editor.kill()
        editor.wait()
        client.close()
