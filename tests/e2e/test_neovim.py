"""Headless Neovim (Debian's `neovim`, 0.7) as a second real LSP client of `nous serve`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, make_workspace

LUA = Path(__file__).with_name("nvim") / "client.lua"


@pytest.mark.skipif(
    shutil.which("nvim") is None and not os.environ.get("NOUS_E2E_REQUIRED"),
    reason="nvim missing (scripts/test installs it and requires this test)",
)
def test_neovim_gets_context_and_recall(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, "nvimproject")
    out = tmp_path / "result.json"
    env = {
        **os.environ, "NOUS_DB": str(tmp_path / "m.db"), "NOUS_WS": str(ws),
        "NOUS_NVIM_OUT": str(out), "NOUS_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT / "server"), "HOME": str(tmp_path),
    }  # fmt: skip
    subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-c", f"luafile {LUA}"],
        env=env, cwd=ws, timeout=120, check=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    results = json.loads(out.read_text())
    assert "error" not in results, results
    assert results["remember"]["result"]["status"] == "created"
    assert results["remember"]["result"]["scope"].startswith("project:nvimproject-")
    context = results["context"]["result"]
    assert "SQLite WAL" in context["text"] and context["tokens"] <= context["budget"]
    assert context["session"]["id"] == "nvim"
    recall = results["recall"]["result"]
    assert "SQLite WAL" in recall["text"] and recall["mode"] == "recall"
    assert results["bad"]["err"]["code"] == -32602 and "query" in results["bad"]["err"]["message"]
    methods = {n["method"] for n in results["notes"]}
    assert {"nous/budget", "nous/indexed"} <= methods
