"""Shared pieces of the end-to-end tests: a real `nous serve` subprocess and workspaces."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

ROOT = Path(__file__).resolve().parents[2]
SERVE = [sys.executable, "-m", "nous", "serve", "--stdio"]


def make_workspace(base: Path, name: str, memories: str = "") -> Path:
    ws = base / name
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n')
    (ws / "main.py").write_text("print('hi')\n")
    if memories:
        (ws / "AGENTS.md").write_text(memories)
    return ws


def server_env(db: Path) -> dict[str, str]:
    return {**os.environ, "NOUS_DB": str(db), "PYTHONPATH": str(ROOT / "server")}


def init_params(*folders: Path, options: dict[str, object] | None = None) -> lsp.InitializeParams:
    return lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(),
        process_id=os.getpid(),
        workspace_folders=[lsp.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
        initialization_options={"watch": False, **(options or {})},
    )


def plain(obj: Any) -> Any:
    """pygls `Object` namedtuples (a result over the wire) as plain JSON data."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj
