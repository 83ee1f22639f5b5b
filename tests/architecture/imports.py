"""The package's import graph, read from the source with `ast`, and the checks run on it.

Every `import` statement counts, wherever it stands: at the top of a module, inside a function
(a lazy import is still a dependency, it only runs later) and under `if TYPE_CHECKING:`. A
type-only import counts too: a handler that names the store's record type knows the store's
layer, and mypy follows the import like any other. Moving an import under `TYPE_CHECKING` or
into a function therefore never makes a forbidden import allowed.

Relative imports are resolved against the importing module (`from ..memory import store` in
`nous/lsp/handlers.py` is `nous.memory.store`), and `from package import name` imports the
submodule `package.name` when there is one, else the package itself.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

PACKAGE_NAME = "nous"


@dataclass(frozen=True)
class Import:
    """One module's import of another (or of a third-party top-level name)."""

    importer: str
    target: str
    where: str  # path:line, for the failure message

    def __str__(self) -> str:
        return f"{self.where} {self.importer} imports {self.target}"


def module_name(path: Path, root: Path) -> str:
    """`root/nous/lsp/handlers.py` → `nous.lsp.handlers`; a package's `__init__.py` → the package."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str:
    """The part of the package a module belongs to: `nous.lsp.handlers` → `lsp`,
    `nous.cli` → `cli`, `nous` itself → `nous`; a third-party module → its top-level name."""
    names = module.split(".")
    if names[0] != PACKAGE_NAME:
        return names[0]
    return names[1] if len(names) > 1 else PACKAGE_NAME


def imports_in(
    source: str, module: str, *, is_package: bool, known: Collection[str], where: str
) -> Iterator[Import]:
    """Every import in `source`, the text of `module`, at any depth. `known` is the set of the
    package's module names: it tells a submodule (`from nous import memory`) from a name."""
    anchor = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, f"{where}:{node.lineno}")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = anchor.split(".")
                up = up[: len(up) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield Import(module, sub if sub in known else base, f"{where}:{node.lineno}")


@dataclass(frozen=True)
class Package:
    """The `nous` package under `root` (the directory that holds `nous/`). `also_known` adds
    module names that are not files here (a synthetic package in a test knows the real one's)."""

    root: Path
    also_known: frozenset[str] = frozenset()

    @cached_property
    def files(self) -> dict[str, Path]:
        found = sorted((self.root / PACKAGE_NAME).rglob("*.py"))
        return {module_name(path, self.root): path for path in found}

    @cached_property
    def imports(self) -> list[Import]:
        known = set(self.files) | self.also_known
        return [
            found
            for module, path in self.files.items()
            for found in imports_in(
                path.read_text(), module, is_package=path.name == "__init__.py", known=known,
                where=str(path.relative_to(self.root.parent)),
            )
        ]  # fmt: skip

    @cached_property
    def internal(self) -> list[Import]:
        """The imports of one `nous` module by another, each edge once."""
        seen: dict[tuple[str, str], Import] = {}
        for found in self.imports:
            if found.target.split(".")[0] == PACKAGE_NAME and found.target != found.importer:
                seen.setdefault((found.importer, found.target), found)
        return list(seen.values())


def within(module: str, prefixes: Iterable[str]) -> bool:
    """Whether `module` is one of `prefixes` or inside one of them."""
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The import loops: each strongly connected component of more than one module, sorted
    (Tarjan's algorithm, iterative: the graph is small but recursion depth is not ours to set)."""
    graph: dict[str, list[str]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)
