"""Frame selection by pattern (no LLM): conversation, question, task, decision, creative, debug."""

from __future__ import annotations

import re

from nous.context.config import FRAMES

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("debug", re.compile(
        r"\b(error|exception|traceback|stack ?trace|bug|crash\w*|fail\w*|broken|segfault|"
        r"doesn'?t work|not working|regression|flaky|debug\w*|panic)\b", re.I)),
    ("decision", re.compile(
        r"\b(should (we|i)|decid\w*|decision|choose|choice|vs\.?|versus|trade-?offs?|"
        r"pros and cons|alternatives?|which (one|is better)|recommend\w*|worth it)\b", re.I)),
    ("creative", re.compile(
        r"\b(brainstorm\w*|ideas?|imagine|come up with|name for|slogan|story|poem|what if)\b",
        re.I)),
    ("task", re.compile(
        r"^\s*(please\s+)?(implement|add|create|write|build|refactor|update|migrate|set up|"
        r"make|fix|remove|rename|convert|generate|wire|port|extract)\b", re.I)),
    ("question", re.compile(
        r"(\?\s*$)|^\s*(what|where|when|why|how|who|which|can|could|does|do|is|are|explain)\b",
        re.I)),
]  # fmt: skip


def select(text: str, forced: str | None = None) -> str:
    """The frame for `text`; `forced` (when a known frame) wins."""
    if forced in FRAMES:
        return forced
    for frame, pattern in _PATTERNS:
        if pattern.search(text):
            return frame
    return "conversation"
