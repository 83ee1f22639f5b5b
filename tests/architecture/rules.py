"""The one table of the architecture's import rules (docs/architecture.md, "The arrows").

`MAY_IMPORT` says, for each part of the `nous` package, which other parts it may import; every
other part is forbidden to it. `ONLY` gives a third-party package its one home. The tests in
`test_layers.py` are generated from these two tables: one rule (a part and a part or package it
must not import) a test on the source, and a test that the checker reports a synthetic file
breaking it. `KNOWN` lists the imports that break a rule today, each with the reason it is
allowed to stay for now; `KNOWN_CYCLES` the import loops. Each entry is checked to be still
needed, so a fix must remove its entry, and nothing new can hide behind an old one.

What counts as an import (function-level and `TYPE_CHECKING` ones too): `imports.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tests.architecture.imports import PACKAGE_NAME, Import, part_of, within

# Any part may import these: the package root (`__version__`), the named exceptions every
# layer raises (only the adapters turn them into JSON-RPC errors or exit codes), the model files
# the program runs on (`assets`) and the text utilities (`text`: the Markdown tree, token counts,
# secret detection, the full-text word splitter), which know nothing of the store.
FLOOR = frozenset({"nous", "errors", "assets", "text"})

MAY_IMPORT: dict[str, frozenset[str]] = {
    # the adapters: a request's first hop; they reach the store only through a use case
    "__main__": frozenset({"cli"}),
    "cli": frozenset({"engine", "browsing", "context", "protocol", "settings"}),
    "lsp": frozenset({"engine", "browsing", "context", "workspace", "protocol", "settings"}),
    "mcp_cli": frozenset({"mcp_server", "settings"}),
    "mcp_server": frozenset({"engine", "context", "protocol", "settings"}),
    # the per-folder object and the use cases
    "browsing": frozenset({"engine", "memory", "protocol", "settings"}),
    "engine": frozenset({"context", "workspace", "memory", "protocol", "settings"}),
    "context": frozenset({"memory", "protocol", "settings"}),
    "workspace": frozenset({"memory", "protocol", "settings"}),
    # the store
    "memory": frozenset({"protocol"}),
    # the bottom floor
    "settings": frozenset(),
    "protocol": frozenset(),
    "errors": frozenset(),
    "nous": frozenset(),
    "assets": frozenset(),
    "text": frozenset(),
    # beside the daemon: never imported by it
    "measurement": frozenset(),
    "evaluation": frozenset(
        {"engine", "context", "workspace", "memory", "protocol", "settings", "measurement"}
    ),
    "bench": frozenset(
        {"lsp", "engine", "context", "workspace", "memory", "protocol", "settings"}
        | {"measurement", "evaluation"}
    ),
}

# A third-party package and the only modules that may import it.
ONLY: dict[str, tuple[str, ...]] = {
    "pygls": ("nous.lsp",),
    "lsprotocol": ("nous.lsp",),
    # the team store's driver is an optional extra: a Nous without a team store never imports it
    "psycopg": ("nous.memory.team", "nous.bench.team"),
    "pgvector": ("nous.memory.team", "nous.bench.team"),
    "pgserver": ("nous.memory.team", "nous.bench.team"),
    "mcp": ("nous.mcp_server",),
}


@dataclass(frozen=True)
class Known:
    """An import that breaks a rule today, and why it stays for now."""

    importer: str  # the importing module
    target: str  # the imported module (or a package above it)
    why: str

    def excuses(self, found: Import) -> bool:
        return found.importer == self.importer and within(found.target, (self.target,))


# Pure text and URL helpers that sit in memory/ only because it was the bottom floor; issue 29
# (item 2) moves them, with secrets/ and markdown.py, into a package any layer may import.
_TEXT_HELPERS = (
    "a pure helper with no store behind it; it leaves memory/ with the text utilities "
    "(issue 29, item 2)"
)

KNOWN: tuple[Known, ...] = (
    Known("nous.settings", "nous.memory.team_url", "checks the teamStore URL: " + _TEXT_HELPERS),
)

# Import loops between modules (function-level and TYPE_CHECKING imports count).
KNOWN_CYCLES: tuple[tuple[frozenset[str], str], ...] = ()


@dataclass(frozen=True)
class Rule:
    """`importer` (a part of `nous`) never imports `forbidden` (a part, or a third-party package),
    except in the modules of `owners` (the package's one home)."""

    importer: str
    forbidden: str
    owners: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.importer}-never-{self.forbidden}"

    def broken_by(self, found: Import) -> bool:
        if part_of(found.importer) != self.importer or within(found.importer, self.owners):
            return False
        if self.forbidden in MAY_IMPORT:  # a part of the package
            return (
                found.target.split(".")[0] == PACKAGE_NAME
                and part_of(found.target) == self.forbidden
            )
        return found.target.split(".")[0] == self.forbidden

    def breaches(self, imports: Iterable[Import]) -> list[Import]:
        """The imports that break the rule, less the known ones."""
        return [
            found for found in imports
            if self.broken_by(found) and not any(k.excuses(found) for k in KNOWN)
        ]  # fmt: skip


def rules() -> list[Rule]:
    """Every rule the two tables make: each part against each part it may not import, and each
    part against each third-party package it is not the home of."""
    parts = sorted(MAY_IMPORT)
    made = [
        Rule(part, other)
        for part in parts
        for other in parts
        if other != part and other not in FLOOR and other not in MAY_IMPORT[part]
    ]
    for package, owners in sorted(ONLY.items()):
        for part in parts:
            mine = tuple(owner for owner in owners if part_of(owner) == part)
            if f"{PACKAGE_NAME}.{part}" not in mine:  # else the whole part is its home
                made.append(Rule(part, package, mine))
    return made
