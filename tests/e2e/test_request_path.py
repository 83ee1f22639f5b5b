"""A request through the real daemon: routed to the folder it comes from, its active file
normalised once, the budget notification naming the project that answered, and the daemon's
import graph free of the benchmark and the evaluation."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import ROOT, make_workspace
from tests.e2e.raw import Raw

RULE = "# Rules\n\n- Money amounts are integer cents, never floats.\n"


def test_budget_notification_names_the_folder_that_answered(tmp_path: Path) -> None:
    first = make_workspace(tmp_path, "alpha", RULE)
    second = make_workspace(tmp_path, "beta", RULE)
    (second / "src").mkdir()
    (second / "src" / "pay.py").write_text("CENTS = 100\n")
    raw = Raw(tmp_path / "m.db", first)
    try:
        raw.initialize(folders=[first, second])
        params = {
            "input": "how do we store money amounts?",
            "sessionId": "multi-1",
            "activeFile": (second / "src" / "pay.py").as_uri(),
        }
        result = raw.call("nous/context", params)
        note = raw.notification("nous/budget", 30)
        assert note is not None
        assert note["params"]["project"] == "beta"
        assert "editing `src/pay.py`" in result["text"]
        assert "file://" not in result["text"]
        status = raw.call("nous/status", {})
        assert status["project"] == "alpha"  # no active file: the first folder
    finally:
        raw.close()


HOOK = """
import sys

class _Record:
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("nous.", "nous")):
            with open(__import__("os").environ["NOUS_TEST_IMPORTS"], "a") as out:
                out.write(name + "\\n")
        return None

sys.meta_path.insert(0, _Record())
"""


def test_the_daemon_never_imports_the_benchmark_or_the_evaluation(tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    log = tmp_path / "imports.txt"
    ws = make_workspace(tmp_path, "shop", RULE)
    env = {"PYTHONPATH": f"{hook}:{ROOT / 'server'}", "NOUS_TEST_IMPORTS": str(log)}
    raw = Raw(tmp_path / "m.db", ws, env=env)
    try:
        raw.initialize(options={"harvest": True})
        assert raw.notification("nous/indexed", 120) is not None
        raw.call("nous/context", {"input": "how do we store money?", "sessionId": "s"})
        raw.call("nous/recall", {"query": "money amounts", "sessionId": "s"})
        raw.call("nous/remember", {"kind": "fact", "content": "Prices are shown in euros."})
        raw.call("nous/status", {})
    finally:
        raw.close()
    imported = log.read_text().split()
    assert "nous.lsp.server" in imported and "nous.context.chat" in imported
    leaked = [m for m in imported if m.startswith(("nous.bench", "nous.evaluation"))]
    assert leaked == []
