"""Architecture decision records → decisions, found by shape wherever they live, status mapped to
the lifecycle: proposed/draft → pending, accepted/implemented → reviewed, deprecated/rejected →
inactive, superseded → superseded (linked to the ADR it names as successor).

Shape: a numbered (`0007-…`, `adr-019-…`, `adr-draft-…`) Markdown file in a decisions-like folder,
or any numbered file that reads like an ADR (a status plus context/decision sections). Status is
read from YAML front matter, a `## Status` section (paragraph or bullet), a `Status:` /
`* **Status**: …` line, or free text ("Implemented in …"). One record leads with the title, the
status and the decision (MADR "Decision Outcome" / "Chosen option" included); every other
section becomes records of its own (ADRs run to 90 KB and answers sit deep inside them).

RFCs are decision records too (labelled `RFC <n>`): dated names (`2020-04-06-1858-…`) are
numbered by the number after the date; `sync` finds RFC folders whose records carry no status
(`reads_like_record` tells a record from other docs there) and passes the status the folder's
README gives merged ones. A template (`template.md`, `0000_example.md`) is no decision. A record
that says it replaces another (`succession`) names it in `supersedes`.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import PurePosixPath

from nous.text.markdown import Block, Document, Section, parse, render_block
from nous.text.words import letters
from nous.workspace.harvest import records, succession
from nous.workspace.harvest.model import Harvested

FOLDERS = frozenset({"adr", "adrs", "decisions", "decision-records", "architecture", "rfcs", "rfc"})
_NAME = re.compile(r"^(?:adr[-_ ]?)?(?:\d{1,5}|\d{8}|draft)(?:[-_ .]\S*)?\.(?:md|rst)$", re.I)
"""`0007-use-grpc.md`, `adr-019-….md`, `ADR-0003.md`, `2020-04-06-….md`, log4brains'
`20200926-use-log4brains.md`."""
_UNNUMBERED_STATUS = re.compile(r"^\W*status\b|^#+\s*status\b", re.I | re.M)
_UNNUMBERED_SECTION = re.compile(r"^#+\s*(context|decision)\b", re.I | re.M)
STATUS = {
    "proposed": "pending", "draft": "pending", "proposal": "pending", "pending": "pending",
    "accepted": "reviewed", "approved": "reviewed", "implemented": "reviewed",
    "adopted": "reviewed", "done": "reviewed", "decided": "reviewed", "final": "reviewed",
    "deprecated": "inactive", "rejected": "reviewed", "obsolete": "inactive",
    "withdrawn": "inactive", "abandoned": "inactive", "declined": "reviewed",
    "superseded": "superseded", "replaced": "superseded",
}  # fmt: skip
"""A rejected or declined proposal is a decision made (against it): it stays in context, its
title says "Rejected", so "could we do X?" is answered by the record that chose otherwise."""
_DECISION = (
    "decision outcome", "decision", "chosen option", "decision and rationale", "outcome",
    "accepted solution", "agreed solution", "chosen solution", "resolution",
)  # fmt: skip
_NOT_DECISION = ("decision driver", "decision maker", "decision criteria", "decision factor")
_NUMBER = re.compile(r"(\d{1,5})")
_DATED = re.compile(r"^(\d{4}-?\d{2}-?\d{2})(?:[-_](\d{1,6}))?[-_]")
"""`2020-04-06-1858-automatically-adjust-request-limits.md`: a date, then the record's number."""
_BARE = re.compile(
    r"^(?:\d+\.\s+)?(?:(?:ADR|RFC)[-\s]*#?\s*)?\d+(?:\s*[-–:]?\s*\d{4}-\d{2}-\d{2})?[.:)\s–-]*",
    re.I,
)
"""What a title says before its subject: `RFC #2768 - 2020-06-12 - `, `1. `, `ADR-019: `."""
_STATUS_LINE = re.compile(r"^\W*status\W*\s*[:-]\s*(.+)$", re.I | re.M)
_STATUS_LEAD = re.compile(rf"^({'|'.join([*STATUS, 'archived', 'reverted'])})\s*(?::|\.?$)", re.I)
"""A paragraph or quote under the title that is a status word, alone or leading a sentence
(archived and reverted are shown as written: still the record of what was decided then)."""
RECORD_SECTIONS = (
    "summary", "motivation", "proposal", "proposed", "decision", "alternative", "rationale",
    "background", "context", "goals", "non-goals", "drawbacks", "design", "overview",
    "problem", "outcome", "prior art", "unresolved", "scope", "solution", "accepted solution",
    "consequences", "requirements", "current state", "desired state", "objective",
)  # fmt: skip
"""Headings that make a document in an RFC folder read like a record (two of them)."""


_NOT_RECORDS = frozenset({"readme", "index", "toc", "summary", "contributing", "overview"})
"""A decision folder's own pages: its index, never a record."""


def is_template(relpath: str) -> bool:
    """A record template (`template.md`, `adr-template.md`, `0000_example.md`,
    `_YYYY-MM-DD-issue#-title.md`): the shape of a decision, not one."""
    name = PurePosixPath(relpath).name.lower()
    return "template" in name or "example" in name or name.startswith("_")


def numbered(relpath: str) -> bool:
    """A numbered (`0007-…`, `adr-019-…`) or dated (`2020-04-06-1858-…`) record name."""
    return bool(_NAME.match(PurePosixPath(relpath).name.lower()))


def matches(relpath: str, text: str | None = None) -> bool:
    p = PurePosixPath(relpath)
    name = p.name.lower()
    if is_template(relpath):
        return False
    in_folder = any(part.lower() in FOLDERS for part in p.parts[:-1])
    if not _NAME.match(name):
        # an unnumbered record in a decision folder (`docs/adr/use-postgres.md`): by its shape
        return (
            in_folder and text is not None and PurePosixPath(name).stem not in _NOT_RECORDS
            and p.suffix.lower() in (".md", ".rst")
            and bool(_UNNUMBERED_STATUS.search(text)) and bool(_UNNUMBERED_SECTION.search(text))
        )  # fmt: skip
    if in_folder:
        return True
    if text is None:
        return False
    lowered = text.lower()
    return "status" in lowered and ("## context" in lowered or "## decision" in lowered)


_OPENING_SECTIONS = frozenset({"summary", "abstract", "overview", "motivation", "introduction"})
"""A first heading that is one of these is no title: the file name names the record."""


def _section_name(title: str) -> set[str]:
    """The record headings (Summary, Motivation, …) `title` is."""
    title = re.sub(r"^[\d.\s]+", "", title.lower().strip("*: "))
    return {s for s in RECORD_SECTIONS if title.startswith(s)}


def reads_like_record(text: str) -> bool:
    """Two or more record headings (Summary, Motivation, Proposal, Alternatives, …)."""
    seen: set[str] = set()
    for section in parse(text).sections:
        seen |= _section_name(section.title)
    return len(seen) >= 2


def number_of(relpath_or_ref: str) -> str | None:
    name = PurePosixPath(relpath_or_ref).name
    dated = _DATED.match(name)
    if dated:
        return str(int(dated.group(2))) if dated.group(2) else None
    match = _NUMBER.search(name)
    return str(int(match.group(1))) if match else None


def _label(relpath: str, number: str | None, bare: str) -> str:
    """`ADR 7: Use gRPC`, `RFC 1858: Automatically adjust request limits`, `RFC 2020-09-28: …`."""
    p = PurePosixPath(relpath)
    rfc = any("rfc" in part.lower() for part in p.parts[:-1]) or p.name.lower().startswith("rfc")
    kind = "RFC" if rfc else "ADR"
    dated = _DATED.match(p.name)
    day = dated.group(1) if dated else None
    if day and "-" not in day:  # log4brains' 20200926
        day = f"{day[:4]}-{day[4:6]}-{day[6:]}"
    key = number or day
    return f"{kind} {key}: {bare}" if key else f"{kind}: {bare}"


def target(relpath: str, ref: succession.Ref) -> str | None:
    """A reference as `sync` looks it up: the main anchor of a linked record file
    (`file:<path>#adr-<n>`), else a record number."""
    href = ref.href.split("#", 1)[0]
    if href and "://" not in href and href.lower().endswith((".md", ".markdown")):
        path = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), href)).lstrip("/")
        if not path.startswith(".."):
            return f"file:{path}#adr-{number_of(path) or 0}"
    if ref.number:
        return str(int(ref.number))
    return succession.number_in(ref.text) if ref.text else None


def _is_status(section: Section) -> bool:
    return section.title.lower().strip("* ") == "status"


def _status_text(doc: Document) -> str:
    if doc.front.get("status"):
        return doc.front["status"]
    for section in doc.sections:
        if _is_status(section) and section.blocks:
            block = section.blocks[0]
            return block.items[0] if block.kind == "list" and block.items else block.text
    for section in doc.sections[:3]:
        for block in section.blocks[:6]:
            texts = block.items if block.kind == "list" else [block.text]
            for text in texts:
                found = _STATUS_LINE.search(text.replace("*", ""))
                if found:
                    return found.group(1)
    for section in doc.sections[:2]:  # opendal's `**Reverted**`, vector's `> **Archived:** …`
        for block in section.blocks[:4]:
            lead = _STATUS_LEAD.match(block.text) if block.kind in ("para", "quote") else None
            if lead:
                return lead.group(1)  # the word: the record's text says the rest
    return ""


_DECLINED = re.compile(
    r"\b(?:decided|chose|agreed|voted)\s+(?:not|against)\b"
    r"|\bnot\s+(?:to\s+)?(?:move|moving|go|going|proceed|proceeding)\s+forward\b"
    r"|\bwill\s+not\s+(?:be\s+)?(?:pursued|implemented|adopted|pursue|implement|adopt)\b",
    re.I,
)
"""A status said in a sentence that declines: "The team decided not to move forward with this
change." (vector's RFC 8025) is rejected, not decided."""


def _state(written: str) -> str | None:
    """The status word `written` says (a key of STATUS): a sentence that declines is rejected."""
    if _DECLINED.search(written):
        return "rejected"
    return next((w for w in letters(written) if w in STATUS), None)


def read_status(doc: Document) -> tuple[str | None, str | None, str]:
    """(lifecycle status, successor reference, the status as written)."""
    raw = " ".join(_status_text(doc).split())
    word = _state(raw)
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


STATUS_SENTENCE_WORDS = 12
"""A status section of this many words or more says what was decided and why, not a state
(vector's RFC 8025: "The team decided not to move forward with this change. … a clearer,
cheaper path … via more granular timing metrics.")."""


def _lead(doc: Document) -> list[Block]:
    """What the decision is: its decision sections (MADR "Chosen option" included), with the
    first substantive section after them when those say little ("Approved"), never a title."""
    chosen = [b for s in doc.sections if _is_decision(s) for b in s.blocks]
    if not chosen:  # a status said in sentences is the decision: "The team decided not to …"
        status = next((s for s in doc.sections if _is_status(s)), None)
        if status is not None and _words(status.blocks) >= STATUS_SENTENCE_WORDS:
            chosen = list(status.blocks)
            while len(chosen) > 1 and _words(chosen[:1]) < STATUS_SENTENCE_WORDS:
                chosen = chosen[1:]  # "Proposed — pending approval.": the state, in the title
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
            return [*chosen, *_opening(section.blocks)]
    return chosen


_GOAL = re.compile(
    r"\b(?:our goal is|the goal of this (?:rfc|document|proposal|change) is|we propose"
    r"|this (?:rfc|document|proposal) (?:proposes|recommends)|we recommend|we (?:have )?decided)\b",
    re.I,
)
"""A sentence that states what a record without a decision section proposes."""


def _opening(blocks: list[Block]) -> list[Block]:
    """What a record with no decision section leads with: its opening section's first two
    blocks, or, when those state no goal and a later block of the section does ("Our goal is to
    migrate most users away from the batch processor …" after four blocks of background), that
    block, then the first (what is proposed, then the ground it stands on)."""
    head = blocks[:2]
    if any(_GOAL.search(render_block(b)) for b in head):
        return head
    goal = next((b for b in blocks[2:] if _GOAL.search(render_block(b))), None)
    return [goal, blocks[0]] if goal is not None else head


def harvest(relpath: str, text: str, folder_status: str | None = None) -> list[Harvested]:
    """The records of one ADR or RFC; `folder_status` (from `sync`: what its folder's README
    says merged records are) stands in when the record states no status of its own."""
    doc = parse(text)
    number = number_of(relpath)
    title = doc.title or PurePosixPath(relpath).stem
    if title.lower().strip("*: ") in _OPENING_SECTIONS:  # opendal's RFCs open with `# Summary`
        stem = _DATED.sub("", PurePosixPath(relpath).stem + "-")
        title = re.sub(r"^\d+[-_]", "", stem).replace("_", " ").replace("-", " ").strip() or title
    bare = _BARE.sub("", title).strip() or title
    status, successor, written = read_status(doc)
    if not written and folder_status in STATUS:
        status, written = STATUS[folder_status], folder_status
    said = succession.claims(text)
    if successor is None and said.superseded_by:
        successor = target(relpath, said.superseded_by[0])
    supersedes = [t for t in (target(relpath, r) for r in said.supersedes) if t]
    return of_record(doc, relpath, number, _label(relpath, number, bare), status, written,
                     successor=successor, supersedes=supersedes)  # fmt: skip


def of_record(
    doc: Document, relpath: str, number: str | None, label: str, status: str | None,
    written: str, successor: str | None = None, supersedes: list[str] | None = None,
    whole_first: bool = False,
) -> list[Harvested]:  # fmt: skip
    """One decision record as memories: the main record (`#adr-<n>`: label, status, decision)
    then its other sections (`#adr-<n>-<section>`, tagged `adr-section`). `whole_first`: with
    no decision section, the first section leads whole when it fits one record (a decision
    log's entry is a date line and a few paragraphs: split, its answer lands in two halves)."""
    title = doc.title
    tags = ["adr", f"adr-{number}" if number else "adr"]
    common = {"status": status, "successor": successor, "confidence": 1.0}
    lead_blocks = _lead(doc)
    first = next((s for s in doc.sections if s.blocks), None)
    if (
        whole_first
        and first
        and not any(_is_decision(s) for s in doc.sections)
        and sum(len(render_block(b)) for b in first.blocks) <= records.LIMIT
    ):
        lead_blocks = list(first.blocks)
    shown = " ".join(written.split()[:8]).rstrip(".")
    if len(written.split()) >= STATUS_SENTENCE_WORDS:  # a sentence: the record's body says it
        word = _state(written)
        shown = word.capitalize() if word else ""
    head = f"{label} (status: {shown})" if shown else label
    main = records.Record([head], "adr", list(lead_blocks))
    out = []
    parts = records.of_section(Section([head], 1, "adr", main.blocks), [head]) or [main]
    for n, record in enumerate(parts):
        anchor = f"adr-{number or 0}" if n == 0 else f"adr-{number or 0}-decision-{n + 1}"
        # a main record split for size: its further parts are sections of it (they bring the
        # first part, which says the decision, and never stand for it)
        out.append(Harvested(kind="decision", content=record.content(),
                             anchor=f"file:{relpath}#{anchor}",
                             tags=tags if n == 0 else [*tags, "adr-section"], importance=0.8,
                             supersedes=list(supersedes or []) if n == 0 else [],
                             **common))  # type: ignore[arg-type]  # fmt: skip
    lead_ids = {id(b) for b in lead_blocks}
    used: dict[str, int] = {}
    for section in doc.sections:
        if _is_status(section) or _is_decision(section):
            continue
        if section.level <= 1 and _words(section.blocks) < 15:
            continue  # the lines under the title: date, deciders, a PR link
        rest = Section(section.path, section.level, section.anchor,
                       [b for b in section.blocks if id(b) not in lead_ids])  # fmt: skip
        path = [label, *[p for p in section.path if p != title]]
        for record in records.of_section(rest, path):
            used[record.anchor] = used.get(record.anchor, 0) + 1
            if used[record.anchor] > 1:  # "Pros" under every option
                record.anchor = f"{record.anchor}-{used[record.anchor]}"
            out.append(Harvested(kind="decision", content=record.content(),
                                 anchor=f"file:{relpath}#adr-{number or 0}-{record.anchor}",
                                 tags=[*tags, "adr-section"], importance=0.6,
                                 **common))  # type: ignore[arg-type]  # fmt: skip
    return out
