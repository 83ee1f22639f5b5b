"""What a harvester returns: one memory draft with its anchor and the lifecycle state it implies."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Harvested:
    kind: str
    content: str
    anchor: str
    """`file:<relpath>#<anchor>` or `git:<sha>`."""
    status: str | None = None
    language: str | None = None
    tags: list[str] = field(default_factory=list)
    successor: str | None = None
    """For a superseded ADR: the anchor-less relpath or number of the ADR that replaces it."""
    confidence: float = 0.9
    importance: float = 0.6


def slug(text: str, limit: int = 60) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit] or "section"


def rule_kind(text: str) -> str:
    """constraint for never/don't rules, preference for "prefer", else convention."""
    lowered = text.lower()
    if re.search(
        r"\b(never|don'?t|do not|must not|mustn'?t|avoid|no\s+\w+ing|forbidden|not allowed)\b",
        lowered,
    ):
        return "constraint"
    if re.search(r"\b(prefer|preferably|i like|we like|favou?r)\b", lowered):
        return "preference"
    return "convention"
