"""Memories that stay true to the code: a memory naming a workspace file or symbol is checked when
that file changes; if the file is gone, or none of the symbols it names are in the file any more,
the memory is demoted before it can be injected again (facts and decisions → superseded;
procedures and constraints → retired; other kinds → inactive; episodes are history and stay)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from nous.memory import lifecycle
from nous.memory.interface import Store
from nous.workspace import boundary

log = logging.getLogger(__name__)
_SYMBOL = re.compile(
    r"`([A-Za-z_][\w.]*)(?:\(\))?`|\b([a-z]+(?:_[a-z0-9]+)+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)\b"
)
_KEEP = frozenset({"episode"})
MAX_FILE_BYTES = 4_000_000


def symbols(text: str, relpath: str) -> set[str]:
    """Code-like names a memory mentions (backticked names, snake_case, camelCase, CamelCase)."""
    found = {a or b for a, b in _SYMBOL.findall(text)}
    stem = Path(relpath).stem
    return {s.rsplit(".", 1)[-1] for s in found if s and s not in relpath and s != stem}


def demote(store: Store, memory_id: str, kind: str, status: str, reason: str) -> bool:
    machine = lifecycle.machine(kind)
    target = machine.superseded or lifecycle.INACTIVE
    if not machine.allows(status, target):
        target = lifecycle.INACTIVE
        if not machine.allows(status, target):
            return False
    store.transition(memory_id, target, reason)
    return True


def check(store: Store, project_scope: str, root: Path, changed: set[str]) -> list[str]:
    """Check the memories naming any of the changed files; returns the ids demoted."""
    demoted = []
    for rel in sorted(changed):
        if ("/" not in rel and "." not in rel) or not boundary.is_utf8(rel):
            continue  # a bare word would match too much; an undecodable name matches nothing
        rows = store.sources.mentioning(project_scope, rel)
        if not rows:
            continue
        try:
            text: str | None = boundary.read_bounded(root, rel, MAX_FILE_BYTES).decode(
                "utf-8", errors="replace"
            )
        except FileNotFoundError:
            text = None
        except OSError as exc:  # refused by the boundary (outside, FIFO, too large) or unreadable
            log.info("anchor check skipped %s: %s", rel, exc)
            continue
        for memory_id, kind, status, content in rows:
            if kind in _KEEP:
                continue
            if text is None:
                reason = f"{rel} no longer exists"
            else:
                names = symbols(content, rel)
                if not names or any(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
                    continue
                reason = f"{', '.join(sorted(names))} no longer in {rel}"
            if demote(store, memory_id, kind, status, reason):
                demoted.append(memory_id)
    return demoted
