"""Sections of a parsed Markdown document → records of a bounded size.

A record is one section (its heading path as a `# A › B` first line, then its blocks as plain
Markdown). A section longer than `LIMIT` characters is split at block boundaries; a list that is
too long is split between items and each part keeps the lead-in; a long paragraph is split between
sentences. Nothing is cut inside a sentence, an item or a code block: an extract at render time
picks the relevant units of a record, so records only need to be small enough for one embedding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nous.text.markdown import Block, Document, Section, render_block, sentences

LIMIT = 1800
"""Characters of blocks per record (~250 tokens: what one embedding of the model covers)."""
MIN_WORDS = 4
_PROHIBITION = re.compile(
    r"\b(must not|mustn'?t|shall not|should not|shouldn'?t|do not|don'?t|never|avoid|forbidden"
    r"|not allowed|prohibited|no longer allowed|cannot|can'?t)\b",
    re.I,
)
_PREFERENCE = re.compile(r"\b(prefer|preferably|favou?r)\b", re.I)


@dataclass
class Record:
    path: list[str]
    anchor: str
    blocks: list[Block]

    @property
    def heading(self) -> str:
        return " › ".join(p for p in self.path if p)

    def content(self) -> str:
        body = "\n\n".join(render_block(b) for b in self.blocks)
        return f"# {self.heading}\n\n{body}" if self.heading else body

    def words(self) -> int:
        return sum(len(render_block(b).split()) for b in self.blocks)


def _size(block: Block) -> int:
    return len(render_block(block))


def _pieces(block: Block) -> list[Block]:
    """`block` split so that no piece is over LIMIT (lists keep their lead-in in every piece)."""
    if _size(block) <= LIMIT:
        return [block]
    if block.kind == "list":
        out: list[Block] = []
        items: list[str] = []
        for item in block.items:
            trial = Block("list", items=[*items, item], lead=block.lead, ordered=block.ordered)
            if items and _size(trial) > LIMIT:
                out.append(Block("list", items=items, lead=block.lead, ordered=block.ordered))
                items = [item]
            else:
                items.append(item)
        if items:
            out.append(Block("list", items=items, lead=block.lead, ordered=block.ordered))
        return out
    if block.kind == "para":
        out, current = [], ""
        for sentence in sentences(block.text):
            if current and len(current) + len(sentence) + 1 > LIMIT:
                out.append(Block("para", current))
                current = sentence
            else:
                current = f"{current} {sentence}".strip()
        if current:
            out.append(Block("para", current))
        return out
    if block.kind in ("code", "table"):
        lines = block.text.splitlines()
        out = []
        chunk: list[str] = []
        for line in lines:
            if chunk and len("\n".join([*chunk, line])) > LIMIT:
                out.append(Block(block.kind, "\n".join(chunk), lead=block.lead, lang=block.lang))
                chunk = [lines[0]] if block.kind == "table" else []
            chunk.append(line)
        if chunk:
            out.append(Block(block.kind, "\n".join(chunk), lead=block.lead, lang=block.lang))
        return out
    return [block]


_PROHIBITING_HEADING = re.compile(
    r"^\W*(?:don'?ts?|do\s+not|never|avoid|must\s+not|mustn'?t|prohibited|forbidden"
    r"|not\s+allowed|anti-?patterns?|what\s+not\s+to\b|things\s+to\s+avoid)\b",
    re.I,
)
PROHIBITING_HEADING_WORDS = 5
"""A heading of at most this many words that says "don't" is a list's lead-in (`led`)."""


def led(blocks: list[Block], heading: str) -> list[Block]:
    """`blocks` with a list that has no lead-in of its own led by the section's heading when the
    heading prohibits ("## Don't" over "- Use the requests library."): every item then reads as
    what it is, a prohibition, as under "Agents MUST NOT:". A list whose every item says its own
    "don't" ("## Anti-Patterns" over "- **Don't call `save()` twice**") needs no lead: it would
    only say the heading again on every line."""
    title = heading.strip().strip("*_`#: ")
    if len(title.split()) > PROHIBITING_HEADING_WORDS or not _PROHIBITING_HEADING.match(title):
        return blocks
    return [
        Block(b.kind, b.text, b.items, f"{title}:", b.lang, b.ordered)
        if b.kind == "list" and not b.lead and not all(map(prohibitive, b.items))
        else b
        for b in blocks
    ]


def of_section(section: Section, path: list[str]) -> list[Record]:
    """One section as one or more records of at most ~LIMIT characters of blocks."""
    records: list[Record] = []
    current: list[Block] = []
    size = 0
    for block in led(section.blocks, section.title):
        for piece in _pieces(block):
            piece_size = _size(piece)
            if current and size + piece_size > LIMIT:
                records.append(Record(path, section.anchor, current))
                current, size = [], 0
            current.append(piece)
            size += piece_size
    if current:
        records.append(Record(path, section.anchor, current))
    if len(records) > 1:
        for n, record in enumerate(records, start=1):
            record.anchor = f"{section.anchor}-{n}"
    return [r for r in records if r.words() >= MIN_WORDS]


def of_document(doc: Document, file_label: str) -> list[Record]:
    """Every section of `doc` as records, heading paths led by `file_label` when the document
    has no title."""
    out: list[Record] = []
    seen: dict[str, int] = {}
    for section in doc.sections:
        path = section.path or [doc.title or file_label]
        if not doc.title:
            path = [file_label, *section.path]
        for record in of_section(section, path):
            count = seen.get(record.anchor, 0)
            seen[record.anchor] = count + 1
            if count:
                record.anchor = f"{record.anchor}-{count + 1}"
            out.append(record)
    return out


def prohibitive(text: str) -> bool:
    return bool(_PROHIBITION.search(text))


def rule_kind(record: Record) -> str:
    """constraint when the record's rules are prohibitions (a `must not:` lead-in, a table whose
    header prohibits, or most of its items/sentences), procedure when it carries commands,
    preference for "prefer", else convention."""
    rules: list[str] = []
    for block in record.blocks:
        if block.kind == "list":
            if block.lead and prohibitive(block.lead):
                rules += ["must not"] * len(block.items)
            else:
                rules += block.items
        elif block.kind == "para":
            rules += sentences(block.text)
        elif block.kind == "table" and prohibitive(block.text.split("\n", 1)[0]):
            rules += ["must not"] * block.text.count("\n")  # a table of "Don't | Why" rows
    negative = sum(1 for r in rules if prohibitive(r))
    if rules and negative * 2 >= len(rules) and negative:
        return "constraint"
    if any(b.kind == "code" for b in record.blocks):
        return "procedure"
    if rules and any(_PREFERENCE.search(r) for r in rules):
        return "preference"
    return "convention"
