"""Layering rules that keep the request path clean, checked on the source itself."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from nous import protocol

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "nous"
LSP_CLIENT_ALLOWED = {PACKAGE / "bench" / "stdio.py"}  # the benchmark's own LSP client


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_lsp_package_imports_pygls() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in PACKAGE.rglob("*.py")
        if (PACKAGE / "lsp") not in path.parents
        and path not in LSP_CLIENT_ALLOWED
        and imports(path) & {"pygls", "lsprotocol"}
    ]
    assert offenders == []


def test_the_engine_knows_nothing_of_the_daemon() -> None:
    for path in [
        *PACKAGE.glob("*.py"),
        *PACKAGE.glob("context/*.py"),
        *PACKAGE.glob("memory/*.py"),
    ]:
        source = path.read_text()
        assert "nous.lsp" not in source or path.name == "cli.py", path


def test_nothing_prints_to_stdout_in_the_daemon() -> None:
    for path in (PACKAGE / "lsp").glob("*.py"):
        assert not re.search(r"(?<![\w.])print\(", path.read_text()), path


def test_every_custom_method_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    methods = [v for k, v in vars(protocol).items() if k.startswith("NOUS_") and isinstance(v, str)]
    assert len(methods) >= 11
    for method in methods:
        assert f"`{method}`" in readme, f"{method} is not in the README"
        assert f'"method": "{method}"' in readme, f"{method} has no JSON example in the README"
