"""The architecture's import rules (docs/architecture.md), generated from one table
(`rules.py`) and checked on the source with `ast` (`imports.py`).

    adapters (lsp, cli, mcp) → engine, use cases (browsing, context, workspace) → memory → protocol
    bench, evaluation, measurement: beside the daemon, never imported by it

Every rule has two tests: the source keeps it, and a synthetic file that breaks it is reported
(so no rule can pass because the checker does not see what it looks for). Each failure names the
file and line that breaks the rule.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.architecture.imports import Package, cycles, part_of
from tests.architecture.rules import FLOOR, KNOWN, KNOWN_CYCLES, MAY_IMPORT, ONLY, Rule, rules

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "nous"
SOURCE = Package(ROOT / "server")
RULES = rules()


@pytest.mark.parametrize("rule", RULES, ids=[rule.name for rule in RULES])
def test_the_source_keeps_the_rule(rule: Rule) -> None:
    assert not (found := rule.breaches(SOURCE.imports)), "\n".join(map(str, found))


def _module_of(part: str) -> str:
    """A new module of `part`: a file in its package, or the part itself when it is a module."""
    if part == "nous":
        return "nous"
    return f"nous.{part}.synthetic" if (PACKAGE / part).is_dir() else f"nous.{part}"


def _breaking(rule: Rule, n: int) -> str:
    """A source that breaks the rule, in one of the ways an import can be written (absolute,
    from-import of a submodule, relative, inside a function, under TYPE_CHECKING): `n` picks the
    way, so the rules share them all out."""
    if rule.forbidden not in MAY_IMPORT:  # a third-party package
        ways = [
            f"import {rule.forbidden}\n",
            f"from {rule.forbidden}.sub import thing\n",
            f"def later() -> None:\n    import {rule.forbidden}.sub\n",
        ]
        return ways[n % len(ways)]
    target = f"nous.{rule.forbidden}"
    sub = next((m for m in sorted(SOURCE.files) if m.startswith(target + ".")), target)
    dots = "." * max(1, _module_of(rule.importer).count("."))  # the package `nous` itself
    ways = [
        f"import {sub}\n",
        f"from {target} import {sub.rpartition('.')[2]}\n",
        f"from nous import {rule.forbidden}\n",
        f"def later() -> None:\n    from {sub} import anything\n",
        f"from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import {target}\n",
        f"from {dots}{rule.forbidden} import thing\n",
    ]
    return ways[n % len(ways)]


def _write(root: Path, module: str, source: str) -> Path:
    names = module.split(".")
    path = root.joinpath(*names[:-1], names[-1] + ".py")
    if module == "nous":
        path = root / "nous" / "__init__.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return path


@pytest.mark.parametrize(("n", "rule"), list(enumerate(RULES)), ids=[rule.name for rule in RULES])
def test_the_rule_fails_when_broken(n: int, rule: Rule, tmp_path: Path) -> None:
    module, source = _module_of(rule.importer), _breaking(rule, n)
    _write(tmp_path, module, source)
    found = rule.breaches(Package(tmp_path, also_known=frozenset(SOURCE.files)).imports)
    assert [f.importer for f in found] == [module], source


def test_the_reviews_two_imports_are_caught(tmp_path: Path) -> None:
    """The two imports a review added without any test failing (issue 29)."""
    _write(tmp_path, "nous.lsp.handlers", "from nous.memory.store import MemoryStore\n")
    _write(tmp_path, "nous.browsing", "from nous.bench import corpus\n")
    found = Package(tmp_path, also_known=frozenset(SOURCE.files)).imports
    broken = {rule.name for rule in RULES if rule.breaches(found)}
    assert broken == {"lsp-never-memory", "browsing-never-bench"}


def test_every_part_of_the_package_has_its_row() -> None:
    """A new module or package at the top of `nous` has no rules until it is placed in the
    table, so it fails here first."""
    parts = {part_of(module) for module in SOURCE.files}
    assert parts == set(MAY_IMPORT)
    assert set(MAY_IMPORT) >= FLOOR
    assert all(allowed <= set(MAY_IMPORT) for allowed in MAY_IMPORT.values())
    assert all(home in SOURCE.files for homes in ONLY.values() for home in homes)


def test_every_known_exception_is_still_needed() -> None:
    """A known exception excuses an import that breaks a rule today; once fixed, it goes."""
    for known in KNOWN:
        excused = [f for f in SOURCE.imports if known.excuses(f)]
        assert any(rule.broken_by(f) for rule in RULES for f in excused), known
        assert known.why


def test_the_package_has_no_import_loop_but_the_known_ones() -> None:
    loops = cycles((found.importer, found.target) for found in SOURCE.internal)
    assert [set(loop) for loop in loops] == [set(known) for known, _ in KNOWN_CYCLES]


def test_an_import_loop_is_seen(tmp_path: Path) -> None:
    """Three modules in a ring, one link a function-level import and one under TYPE_CHECKING:
    a loop all the same. A module importing its own package is no loop with the package."""
    _write(tmp_path, "nous.memory.ring_a", "from nous.memory import ring_b\n")
    _write(tmp_path, "nous.memory.ring_b", "def later() -> None:\n    from . import ring_c\n")
    _write(tmp_path, "nous.memory.ring_c",
           "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import nous.memory.ring_a\n")  # fmt: skip
    _write(tmp_path, "nous.memory.alone", "from nous.memory import ring_a\n")
    found = Package(tmp_path)
    loops = cycles((f.importer, f.target) for f in found.internal)
    assert loops == [["nous.memory.ring_a", "nous.memory.ring_b", "nous.memory.ring_c"]]


def test_relative_imports_resolve_to_the_module_they_name(tmp_path: Path) -> None:
    _write(
        tmp_path, "nous.lsp.synthetic", "from ..memory.store import Edit\nfrom . import server\n"
    )
    _write(tmp_path, "nous.cli", "from .memory import model\nfrom . import __version__\n")
    found = Package(tmp_path, also_known=frozenset(SOURCE.files)).imports
    assert {(f.importer, f.target) for f in found} == {
        ("nous.lsp.synthetic", "nous.memory.store"),
        ("nous.lsp.synthetic", "nous.lsp.server"),
        ("nous.cli", "nous.memory.model"),
        ("nous.cli", "nous"),
    }


def test_the_architecture_doc_shows_the_table() -> None:
    """docs/architecture.md's "may import" table says what `rules.MAY_IMPORT` says."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (.*) \|$", text, re.MULTILINE)
    shown = {part: set(re.findall(r"`(\w+)`", allowed)) for part, allowed in rows}
    assert shown == {part: set(allowed) for part, allowed in MAY_IMPORT.items()}


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
