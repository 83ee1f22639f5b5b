"""One reader of the environment: `nous/settings.py` (docs/configuration.md). Every other module
gets its settings passed down, so no setting changes under a process that is running, and the
table in the docs is the whole list."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "nous"

ALLOWED = {
    "server/nous/settings.py": "the one loader: `environment()`",
    "server/nous/__init__.py": "sets the BLAS thread counts before numpy loads (a default)",
    "server/nous/bench/cold.py": "hands its own environment to the child processes it times",
}


def environment_reads(path: Path, source: str | None = None) -> Iterator[str]:
    """Each read of the process environment: `os.environ` (but not an assignment into it, which
    tells a library where to look), `os.getenv`, `environ` imported from `os`."""
    tree = ast.parse(path.read_text() if source is None else source, str(path))
    written = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
    }
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Attribute) and ast.unparse(node) in ("os.environ", "os.getenv"):
            if id(node) not in written:
                yield f"{where} {ast.unparse(node)}"
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            names = {a.name for a in node.names} & {"environ", "getenv", "getenvb", "environb"}
            if names:
                yield f"{where} from os import {', '.join(sorted(names))}"


def test_only_the_settings_read_the_environment() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {read}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if str(path.relative_to(ROOT)) not in ALLOWED
        for read in environment_reads(path)
    ]
    assert not found, "\n".join(found)


def test_the_rule_sees_what_it_looks_for() -> None:
    leaky = (
        "import os\n"
        "from os import getenv\n"
        "a = os.environ.get('NOUS_DB')\n"
        "b = os.getenv('X')\n"
        "os.environ['TIKTOKEN_CACHE_DIR'] = '/tmp'\n"
        "c = {**os.environ}\n"
    )
    found = [r.split(" ", 1)[1] for r in environment_reads(PACKAGE / "leaky.py", leaky)]
    assert sorted(found) == ["from os import getenv", "os.environ", "os.environ", "os.getenv"]
