"""Rules on the daemon's edges, checked on the source itself (the layers: test_layers.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from nous import protocol

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "nous"


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


def test_every_file_the_architecture_names_exists() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:server|tests)/[\w/.]+\.py)", text))
    assert len(named) >= 8
    assert [n for n in sorted(named) if not (ROOT / n).is_file()] == []
    assert text.count("\n1. **handler**") == 1 and "\n3. **store**" in text


MOST_PARAMETERS = 6
"""Issue 29: a function of context/ or memory/ takes at most this many (a request's state is one
`Query`; a row's text fields one tuple)."""


def long_signatures(source: str) -> list[str]:
    """The functions of `source` over `MOST_PARAMETERS` parameters (`self`/`cls` not counted)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            count = len(named) - (1 if named and named[0].arg in ("self", "cls") else 0)
            if count > MOST_PARAMETERS:
                out.append(f"{node.name} ({count})")
    return out


def test_no_function_of_context_or_memory_takes_more_than_six_parameters() -> None:
    found = {
        str(path.relative_to(PACKAGE)): long
        for folder in ("context", "memory")
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        if (long := long_signatures(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_a_long_signature_is_seen() -> None:
    seven = "def f(self, a, b, c, d, e, f, g=1): ...\nasync def h(*, a, b, c, d, e, f): ..."
    assert long_signatures(seven) == ["f (7)"]
