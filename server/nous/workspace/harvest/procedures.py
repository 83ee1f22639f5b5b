"""Developer documentation → procedures and facts, one record per section (split when long).

Read (Markdown or reStructuredText): CONTRIBUTING, README, DEVELOPMENT / DEV_SETUP / HACKING /
coding standards at any depth,
and every other Markdown document of the workspace (contributing guides, maintainer how-tos,
architecture docs) — those an instruction file links to first (`sync` orders and caps them).
A section with commands, numbered steps or a how-to heading is a procedure, else a fact.
Not read: changelogs, licences, codes of conduct, issue/PR templates.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from nous.text.markdown import parse
from nous.workspace.harvest import records
from nous.workspace.harvest.model import Harvested, slug

_SKIP = re.compile(
    r"^(changelog|changes|history|license|licence|copying|notice|code_of_conduct|"
    r"code-of-conduct|security|authors|contributors|codeowners|funding|support|"
    r"pull_request_template|issue_template|.*template.*)(\.[a-z]+)?$",
    re.I,
)
SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt")
"""Markdown, and reStructuredText (`text/rst.py` turns it into Markdown first; `.txt` only in a
docs folder, where Sphinx projects such as Django keep their sources)."""
_NOTES = frozenset({"releases", "release-notes", "release_notes", "changelog", "changes", "news"})
"""Folders of release notes: history, not guidance (read from Markdown as before)."""
_SKIP_DIRS = frozenset({"issue_template", "pull_request_template", "node_modules", "vendor"})
_HOW_TO = re.compile(
    r"\b(how to|how do|getting started|setup|set up|install|develop|running|run|test|build|"
    r"release|deploy|contribut|workflow|commit|debug|upgrade|migrat|format|lint|tag|publish)",
    re.I,
)
_PRIORITY = re.compile(r"contribut|develop|dev_setup|hacking|standard|guide|readme", re.I)


_RST_GUIDANCE = re.compile(
    r"contribut|develop|dev_setup|hacking|standard|guideline|style-?guide|coding-?style|readme"
    r"|maintain|release-process|releasing|convention",
    re.I,
)
"""A reStructuredText document is read when its name or a folder of its path says it guides
contributors (`CONTRIBUTING.rst`, `docs/internals/contributing/writing-code/coding-style.rst`):
a Sphinx project's manual (`docs/ref/`, `docs/topics/`) is hundreds of files that say how to use
the project, not how to work on it, and docutils reads ~0.6 MB/s (Django's 290 KB of contributor
and internals documents: 0.49 s; its 9 MB manual would take 15 s)."""
_RST_GUIDANCE_FOLDER = re.compile(r"contribut|develop|dev_setup|hacking|internals|maintain", re.I)
"""A folder's name says less than a file's: `docs/topics/testing/` is a manual's chapter."""


def matches(relpath: str) -> bool:
    p = PurePosixPath(relpath)
    if p.suffix.lower() not in SUFFIXES and p.name.lower() != "contributing":
        return False
    if any(part.lower() in _SKIP_DIRS for part in p.parts[:-1]):
        return False
    if p.suffix.lower() in (".rst", ".txt") and not _guides(p):
        return False
    return not _SKIP.match(p.name)


def _guides(p: PurePosixPath) -> bool:
    """A reStructuredText document (`.rst`, or `.txt` in a docs folder, as Django's Sphinx
    sources are) that guides contributors, outside release notes."""
    folders = [part.lower() for part in p.parts[:-1]]
    if any(part in _NOTES for part in folders):
        return False
    if p.suffix.lower() == ".txt" and not any(part in ("docs", "doc") for part in folders):
        return False
    return bool(_RST_GUIDANCE.search(p.stem)) or any(
        _RST_GUIDANCE_FOLDER.search(part) for part in p.parts[:-1]
    )


def priority(relpath: str) -> int:
    """Lower first, when `sync` caps how many documents it reads."""
    p = PurePosixPath(relpath)
    return (0 if _PRIORITY.search(p.name) else 1) * 10 + min(len(p.parts), 9)


def _kind(title: str, text: str) -> str:
    if "```" in text or _HOW_TO.search(title) or re.search(r"^1\. ", text, re.M):
        return "procedure"
    return "fact"


def harvest(relpath: str, text: str) -> list[Harvested]:
    doc = parse(text)
    out = []
    for record in records.of_document(doc, relpath):
        record.path = [f"{relpath}: {record.path[0]}" if doc.title else relpath, *record.path[1:]]
        content = record.content()
        out.append(
            Harvested(
                kind=_kind(record.path[-1], content), content=content,
                anchor=f"file:{relpath}#{record.anchor}",
                tags=["docs", slug(record.path[-1], 30)], confidence=0.9, importance=0.5,
            )
        )  # fmt: skip
    return out
