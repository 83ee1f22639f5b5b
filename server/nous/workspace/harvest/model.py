"""What a harvester returns: one memory draft with its anchor and the lifecycle state it implies."""

from __future__ import annotations

from dataclasses import dataclass, field

from nous.text.markdown import slug

__all__ = ["Harvested", "slug"]


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
    """For a superseded record: the number of the record that replaces it, or its main anchor
    (`file:<relpath>#adr-<n>`)."""
    supersedes: list[str] = field(default_factory=list)
    """For a record that says it replaces older ones: their numbers or main anchors."""
    confidence: float = 0.9
    importance: float = 0.6
