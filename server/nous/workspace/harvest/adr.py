"""Architecture decision records → decisions, found by shape wherever they live, status mapped to
the lifecycle: proposed/draft → pending, accepted/implemented → reviewed, deprecated/rejected →
inactive, superseded → superseded (linked to the ADR it names as successor).

Shape: a numbered (`0007-…`, `adr-019-…`, `adr-draft-…`) Markdown file in a decisions-like folder,
or any numbered file that reads like an ADR (a status plus context/decision sections). Status is
read from YAML front matter, a `## Status` section (paragraph or bullet), a `Status:` /
`* **Status**: …` line, or free text ("Implemented in …"). One record leads with the title, the
status and the decision (MADR "Decision Outcome" / "Chosen option" included); every other
section becomes records of its own (ADRs run to 90 KB and answers sit deep inside them).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from nous.memory.markdown import Block, Document, Section, parse
from nous.workspace.harvest import records
from nous.workspace.harvest.model import Harvested

FOLDERS = frozenset({"adr", "adrs", "decisions", "decision-records", "architecture", "rfcs", "rfc"})
_NAME = re.compile(r"^(?:adr[-_ ]?)?(?:\d{1,5}|draft)[-_ .]\S*\.md$", re.I)
STATUS = {
    "proposed": "pending", "draft": "pending", "proposal": "pending", "pending": "pending",
    "accepted": "reviewed", "approved": "reviewed", "implemented": "reviewed",
    "adopted": "reviewed", "done": "reviewed", "decided": "reviewed", "final": "reviewed",
    "deprecated": "inactive", "rejected": "inactive", "obsolete": "inactive",
    "withdrawn": "inactive", "abandoned": "inactive", "declined": "inactive",
    "superseded": "superseded", "replaced": "superseded",
}  # fmt: skip
_DECISION = ("decision outcome", "decision", "chosen option", "decision and rationale", "outcome")
_NOT_DECISION = ("decision driver", "decision maker", "decision criteria", "decision factor")
_NUMBER = re.compile(r"(\d{1,5})")
_STATUS_LINE = re.compile(r"^\W*status\W*\s*[:-]\s*(.+)$", re.I | re.M)


def matches(relpath: str, text: str | None = None) -> bool:
    p = PurePosixPath(relpath)
    name = p.name.lower()
    if "template" in name or not _NAME.match(name):
        return False
    if any(part.lower() in FOLDERS for part in p.parts[:-1]):
        return True
    if text is None:
        return False
    lowered = text.lower()
    return "status" in lowered and ("## context" in lowered or "## decision" in lowered)


def number_of(relpath_or_ref: str) -> str | None:
    match = _NUMBER.search(PurePosixPath(relpath_or_ref).name)
    return str(int(match.group(1))) if match else None


def _status_text(doc: Document) -> str:
    if doc.front.get("status"):
        return doc.front["status"]
    for section in doc.sections:
        if section.title.lower().strip("* ") == "status" and section.blocks:
            block = section.blocks[0]
            return block.items[0] if block.kind == "list" and block.items else block.text
    for section in doc.sections[:3]:
        for block in section.blocks[:6]:
            texts = block.items if block.kind == "list" else [block.text]
            for text in texts:
                found = _STATUS_LINE.search(text.replace("*", ""))
                if found:
                    return found.group(1)
    return ""


def read_status(doc: Document) -> tuple[str | None, str | None, str]:
    """(lifecycle status, successor reference, the status as written)."""
    raw = " ".join(_status_text(doc).split())
    words = re.findall(r"[a-z]+", raw.lower())
    word = next((w for w in words if w in STATUS), None)
    successor = None
    if word in ("superseded", "replaced"):
        link = re.search(r"(?:superseded|replaced) by\s*:?\s*\[?([^\]\n]*)\]?", raw, re.I)
        if link:
            successor = link.group(1).strip()
    return (STATUS[word] if word else None), successor, raw


def _is_context(section: Section) -> bool:
    title = section.title.lower().strip()
    return title.startswith(("context", "problem", "background", "motivation"))


def _is_decision(section: Section) -> bool:
    title = section.title.lower().strip()
    if title.startswith(_NOT_DECISION):
        return False  # MADR's "Decision Drivers" are the forces, not the decision
    return any(title.startswith(d) for d in _DECISION)


_META = (
    "status",
    "changelog",
    "change log",
    "history",
    "date",
    "authors",
    "revision",
    "references",
)


def _words(blocks: list[Block]) -> int:
    return sum(len((b.text or " ".join(b.items)).split()) for b in blocks)


def _lead(doc: Document) -> list[Block]:
    """What the decision is: its decision sections (MADR "Chosen option" included), with the
    first substantive section after them when those say little ("Approved"), never a title."""
    chosen = [b for s in doc.sections if _is_decision(s) for b in s.blocks]
    if not chosen:
        for section in doc.sections:
            for block in section.blocks:
                if re.match(r"\**chosen option", block.text or " ".join(block.items), re.I):
                    chosen.append(block)
    context = next((s for s in doc.sections if _is_context(s)), None)
    if _words(chosen) >= 12:  # the decision, then why: its context (both answer "why X?")
        return [*chosen, *(context.blocks[:3] if context else [])]
    for section in doc.sections:
        title = section.title.lower().strip("* ")
        if title.startswith(_META) or _is_decision(section) or not section.level:
            continue
        if _words(section.blocks) >= 8:
            return [*chosen, *section.blocks[:2]]
    return chosen


def harvest(relpath: str, text: str) -> list[Harvested]:
    doc = parse(text)
    number = number_of(relpath)
    title = doc.title or PurePosixPath(relpath).stem
    bare = re.sub(r"^(ADR[-\s]?)?\d+[.:)\s-]*", "", title, flags=re.I).strip() or title
    label = f"ADR {number}: {bare}" if number else f"ADR: {bare}"
    status, successor, written = read_status(doc)
    tags = ["adr", f"adr-{number}" if number else "adr"]
    common = {"status": status, "successor": successor, "confidence": 1.0}
    lead_blocks = _lead(doc)
    shown = " ".join(written.split()[:8]).rstrip(".")
    head = f"{label} (status: {shown})" if shown else label
    main = records.Record([head], "adr", list(lead_blocks))
    out = []
    parts = records.of_section(Section([head], 1, "adr", main.blocks), [head]) or [main]
    for n, record in enumerate(parts):
        anchor = f"adr-{number or 0}" if n == 0 else f"adr-{number or 0}-decision-{n + 1}"
        out.append(Harvested(kind="decision", content=record.content(),
                             anchor=f"file:{relpath}#{anchor}", tags=tags, importance=0.8,
                             **common))  # type: ignore[arg-type]  # fmt: skip
    lead_ids = {id(b) for b in lead_blocks}
    for section in doc.sections:
        if section.title.lower().strip("* ") == "status" or _is_decision(section):
            continue
        if section.level <= 1 and _words(section.blocks) < 15:
            continue  # the lines under the title: date, deciders, a PR link
        rest = Section(section.path, section.level, section.anchor,
                       [b for b in section.blocks if id(b) not in lead_ids])  # fmt: skip
        path = [label, *[p for p in section.path if p != title]]
        for record in records.of_section(rest, path):
            out.append(Harvested(kind="decision", content=record.content(),
                                 anchor=f"file:{relpath}#adr-{number or 0}-{record.anchor}",
                                 tags=[*tags, "adr-section"], importance=0.6,
                                 **common))  # type: ignore[arg-type]  # fmt: skip
    return out
