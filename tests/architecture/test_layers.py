"""The nevers of the architecture (docs/architecture.md), checked on the source with `ast`.

    lsp → (engine, context, workspace) → memory → protocol
    bench, evaluation, measurement: beside the daemon, never imported by it

Each rule names the files that break it, so a failure says where to look.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "nous"


def modules(part: str) -> list[Path]:
    """The files of `nous.<part>` (a package or a module)."""
    if (PACKAGE / part).is_dir():
        return sorted((PACKAGE / part).rglob("*.py"))
    return [PACKAGE / f"{part}.py"]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module `path` imports, absolute (relative imports resolved), at any depth: a
    function-level import is an import too."""
    found: set[str] = set()
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = (package or module_name(path)).split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def offenders(parts: list[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{path.relative_to(ROOT)} imports {name}"
        for part in parts
        for path in modules(part)
        for name in imported(path)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    )


def test_memory_imports_no_context_lsp_workspace_or_engine() -> None:
    forbidden = ("nous.context", "nous.lsp", "nous.workspace", "nous.engine", "nous.cli")
    assert not (found := offenders(["memory"], forbidden)), "\n".join(found)


def test_context_imports_no_lsp_workspace_or_engine() -> None:
    forbidden = ("nous.lsp", "nous.workspace", "nous.engine", "nous.cli")
    assert not (found := offenders(["context"], forbidden)), "\n".join(found)


def test_workspace_imports_no_lsp_context_or_engine() -> None:
    forbidden = ("nous.lsp", "nous.context", "nous.engine", "nous.cli")
    assert not (found := offenders(["workspace"], forbidden)), "\n".join(found)


def test_protocol_and_settings_import_nothing_above_memory() -> None:
    forbidden = ("nous.context", "nous.lsp", "nous.workspace", "nous.engine", "nous.cli")
    assert not (found := offenders(["protocol", "settings", "errors"], forbidden)), "\n".join(found)
    assert not (found := offenders(["protocol"], ("nous.memory",))), "\n".join(found)


def test_the_runtime_never_imports_bench_evaluation_or_measurement() -> None:
    runtime = ["memory", "context", "workspace", "lsp", "engine", "protocol", "settings", "cli"]
    forbidden = ("nous.bench", "nous.evaluation", "nous.measurement")
    assert not (found := offenders(runtime, forbidden)), "\n".join(found)


def test_only_lsp_imports_pygls() -> None:
    others = [p.name for p in PACKAGE.iterdir() if p.name not in ("lsp", "__pycache__")]
    parts = [p.removesuffix(".py") for p in others if p.endswith(".py") or (PACKAGE / p).is_dir()]
    assert not (found := offenders(parts, ("pygls", "lsprotocol"))), "\n".join(found)


def test_only_the_team_store_imports_the_postgresql_driver() -> None:
    """psycopg and pgvector belong to `memory/team.py` (SPEC §13): everything else reaches the
    team store through `TeamStore` / `TeamLink`, and a Nous without a team store never imports
    the driver (it is an optional extra). The bench and the tests' server helper are beside."""
    parts = [
        p.removesuffix(".py") for p in (x.name for x in PACKAGE.iterdir())
        if p.endswith(".py") or (PACKAGE / p).is_dir()
    ]  # fmt: skip
    found = [
        line for line in offenders(parts, ("psycopg", "pgvector", "pgserver"))
        if not line.startswith(("server/nous/memory/team.py ", "server/nous/bench/team.py "))
    ]  # fmt: skip
    assert not found, "\n".join(found)


# -- SQL and the connection live in memory/ only ---------------------------------------------

SQL = re.compile(
    r"\b(SELECT\b[\s\S]+\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+(OR\s+\w+\s+)?\w+\s+SET|"
    r"DELETE\s+FROM|CREATE\s+(TABLE|INDEX|VIRTUAL)|PRAGMA\s+\w+|BEGIN\s+IMMEDIATE)\b"
)
CONNECTION = {"conn", "_conn", "connection", "cursor", "execute", "executemany", "executescript"}
PRIVATE_STORE = {"_conn", "_index", "_embedder"}


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def sql_breaches(path: Path, source: str | None = None) -> Iterator[str]:
    tree = ast.parse(path.read_text() if source is None else source, str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        where = f"{_shown(path)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and SQL.search(node.value):
                yield f"{where} SQL {node.value[:40]!r}"
        elif isinstance(node, ast.Attribute) and node.attr in CONNECTION:
            yield f"{where} .{node.attr}"
        elif isinstance(node, ast.Attribute) and ast.unparse(node) == "sqlite3.connect":
            yield f"{where} sqlite3.connect"


def test_no_sql_or_connection_outside_memory() -> None:
    found = [
        breach
        for path in PACKAGE.rglob("*.py")
        if (PACKAGE / "memory") not in path.parents
        for breach in sql_breaches(path)
    ]
    assert not found, "\n".join(found)


def test_nothing_reaches_into_the_store_or_the_engine() -> None:
    """No `x._conn` / `x._index` / `x._embedder` outside memory/, no `x.__dict__` poking
    (a cached property is reset by its owner's method), except on `self`."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        inside = (PACKAGE / "memory") in path.parents
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Attribute):
                continue
            owner = ast.unparse(node.value)
            if node.attr == "__dict__" and owner != "self":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {owner}.__dict__")
            elif node.attr in PRIVATE_STORE and not inside and owner != "self":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {owner}.{node.attr}")
    assert not found, "\n".join(found)


def test_the_rules_see_what_they_look_for() -> None:
    """The checks themselves: a leaked statement and connection are found, prose is not."""
    leaky = (
        '"""SELECT in a docstring is prose."""\n'
        "import sqlite3\n"
        "def f(store):\n"
        "    db = sqlite3.connect('x')\n"
        "    return store.conn.execute('SELECT id FROM memories WHERE scope = ?').fetchall()\n"
        "note = 'select the best frame from the input'\n"
    )
    found = list(sql_breaches(PACKAGE / "leaky.py", leaky))
    assert [f.split(" ", 1)[1] for f in found if "SQL" in f] == [
        "SQL 'SELECT id FROM memories WHERE scope = ?'"
    ]
    assert {".conn", ".execute", "sqlite3.connect"} <= {f.split(" ", 1)[1] for f in found}
