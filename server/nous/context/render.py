"""Rendering selected memories as Markdown in the look of seed 003: one heading per non-empty
layer. Memory text is untrusted: it is flattened to one line, stripped of invisible characters,
fake role tags and remote images, and can never open a heading of its own."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nous.memory import renderings

_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u00ad]")
_ROLE_TAG = re.compile(
    r"<\|?/?\s*(system|assistant|user|im_start|im_end|endoftext)\s*\|?>|\[/?(INST|SYS)\]", re.I
)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")


def clean(text: str) -> str:
    """One safe line of memory text."""
    text = _INVISIBLE.sub("", text)
    text = _ROLE_TAG.sub("", text)
    text = _IMAGE.sub("[image removed]", text)
    text = " ".join(text.split())
    return text.lstrip("#>").strip()


def item_line(kind: str, text: str, layer_kinds: list[str]) -> str:
    """`- text`, the kind's label dropped where the heading already says it."""
    prefix = f"{renderings.label(kind)}: "
    if text.startswith(prefix):
        text = text[len(prefix) :]
        if kind not in layer_kinds:
            text = f"({kind}) {text}"
    if kind == "constraint":
        text = f"WARN: {text}"
    return f"- {clean(text)}"


@dataclass
class Block:
    """One layer's rendered part: heading, optional fixed text, and item lines."""

    name: str
    title: str
    fixed: str = ""
    lines: list[str] = field(default_factory=list)

    def render(self) -> str:
        body = [part for part in (self.fixed, *self.lines) if part]
        return f"## {self.title}\n" + "\n".join(body) if body else ""


def document(blocks: list[Block]) -> str:
    return "\n\n".join(part for part in (b.render() for b in blocks) if part)
