"""A decision log → decisions: one Markdown file of numbered entries, each a decision record.

Shape: a file whose name says decisions (`DECISIONS.md`, `decision-log.md`) holding at least
three numbered headings at one level (`## 12. Remove running unit tests on iOS 12 simulators`,
`## Decision 3: …`), each with its date and prose (sentry-cocoa's `develop-docs/DECISIONS.md`,
35 entries in 49 KB). Every entry is stored like an ADR (`adr.of_record`): a main record
`Decision <n>: <title>` (`#adr-<n>`), then its sections (`#adr-<n>-<section>`), tagged `adr`
so the pipeline treats them as decision records. What comes before the first entry (the table
of contents aside) is kept as the log's own notes.

Later entries reverse earlier ones: an entry that says so (`succession`: "This decision reverts
[manually installing iOS 12 simulators](#ios-12-simulators)", or the older one's "We reverted
this decision with [...](#remove-ios-12-simulators)") names the other entry by its main anchor;
references resolve within the log by in-page anchor (`<a name>` or the heading's slug), by
number ("decision 3") or by title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from nous.text.markdown import outside_code, parse
from nous.workspace.harvest import adr, records, succession
from nous.workspace.harvest.model import Harvested, slug

MIN_ENTRIES = 3
_HEADING = re.compile(r"^(#{1,6})[ \t]+(\S.*)$")
_ENTRY = re.compile(r"^(?:decision\s+)?#?(\d{1,4})\s*[.:)-]?\s+(\S.*)$", re.I)
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)\s*=\s*[\"']([^\"']+)[\"']\s*/?>\s*(?:</a>)?", re.I)
_CONTENTS = ("table of contents", "contents", "toc", "index")


@dataclass
class Entry:
    number: str
    title: str
    names: list[str] = field(default_factory=list)
    """In-page anchors that lead to the entry: its `<a name>` and its heading's slug."""
    lines: list[str] = field(default_factory=list)
    """The entry's text after its heading."""


def matches(relpath: str, text: str | None = None) -> bool:
    p = PurePosixPath(relpath)
    name = p.name.lower()
    if p.suffix.lower() not in (".md", ".markdown") or "decision" not in name:
        return False
    if adr.is_template(relpath) or adr.matches(relpath):
        return False  # a numbered file is one record, not a log
    return text is None or len(_split(text)[1]) >= MIN_ENTRIES


def _github_slug(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, text) of the headings outside fenced code."""
    out = []
    for n, line, _ in outside_code(lines):
        found = _HEADING.match(line)
        if found:  # a closing `##` is no part of the heading
            out.append((n, len(found.group(1)), found.group(2).rstrip().rstrip("#").rstrip()))
    return out


def _split(text: str) -> tuple[list[str], list[Entry]]:
    """(the lines before the first entry, the entries) at the shallowest heading level that
    numbers at least MIN_ENTRIES headings."""
    lines = text.splitlines()
    headings = _headings(lines)
    level = next(
        (lv for lv in range(1, 7)
         if sum(1 for _n, hl, t in headings
                if hl == lv and _ENTRY.match(_HTML_ANCHOR.sub("", t).strip())) >= MIN_ENTRIES),
        None,
    )  # fmt: skip
    if level is None:
        return lines, []
    starts = [(n, t) for n, hl, t in headings if hl <= level]
    entries: list[Entry] = []
    preamble: list[str] = lines
    for i, (n, heading) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(lines)
        plain = _HTML_ANCHOR.sub("", heading).strip()
        found = _ENTRY.match(plain)
        if not found:
            continue
        if not entries:
            preamble = lines[:n]
        names = [*_HTML_ANCHOR.findall(heading), _github_slug(plain)]
        entries.append(Entry(str(int(found.group(1))), found.group(2).strip(), names,
                             lines[n + 1 : end]))  # fmt: skip
    return preamble, entries


def _preamble(relpath: str, lines: list[str]) -> list[Harvested]:
    doc = parse("\n".join(lines))
    out = []
    for section in doc.sections:
        if section.title.lower().strip("*: ") in _CONTENTS:
            continue
        path = section.path or [doc.title or relpath]
        for record in records.of_section(section, [f"{relpath}: {path[0]}", *path[1:]]):
            out.append(Harvested(kind="fact", content=record.content(),
                                 anchor=f"file:{relpath}#{record.anchor}",
                                 tags=["docs", slug(record.path[-1], 30)], importance=0.5))  # fmt: skip
    return out


def _resolver(relpath: str, entries: list[Entry]) -> dict[str, str]:
    """{in-page anchor, number or lower-case title: the entry's main anchor}."""
    index: dict[str, str] = {}
    for entry in entries:
        anchor = f"file:{relpath}#adr-{entry.number}"
        for key in (*entry.names, entry.number, entry.title.lower().rstrip(".")):
            index.setdefault(key, anchor)
    return index


def _target(relpath: str, index: dict[str, str], ref: succession.Ref) -> str | None:
    href = ref.href
    if href.startswith("#"):
        return index.get(href[1:].lower())
    if href:  # a link to another file: a record there, as an ADR names it
        return adr.target(relpath, ref)
    if ref.number:
        return index.get(str(int(ref.number)))
    return index.get(ref.title.lower().rstrip(".")) if ref.title else None


def harvest(relpath: str, text: str) -> list[Harvested]:
    preamble, entries = _split(text)
    out = _preamble(relpath, preamble)
    index = _resolver(relpath, entries)
    seen: set[str] = set()
    for entry in entries:
        if entry.number in seen:
            continue  # a number used twice: the first entry keeps it
        seen.add(entry.number)
        body = "\n".join(entry.lines)
        doc = parse(f"# {entry.title}\n\n{body}")
        status, successor, written = adr.read_status(doc)
        own = index[entry.number]
        said = succession.claims(body)
        later = [t for t in (_target(relpath, index, r) for r in said.superseded_by) if t != own]
        earlier = [t for t in (_target(relpath, index, r) for r in said.supersedes) if t != own]
        successor = (index.get(successor.lower().rstrip(".")) if successor else None) or (
            later[0] if later and later[0] else None
        )
        out += adr.of_record(doc, relpath, entry.number, f"Decision {entry.number}: {entry.title}",
                             status, written, successor=successor,
                             supersedes=[t for t in earlier if t], whole_first=True)  # fmt: skip
    return out
