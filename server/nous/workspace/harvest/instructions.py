"""Instruction files → the project's rules, one record per rule block (a section, or the part of
a long section that fits one record), read as a Markdown tree.

AGENTS.md, CLAUDE.md, GEMINI.md, CONVENTIONS.md, `.github/copilot-instructions.md`,
`*.instructions.md` (with `applyTo`), agent skills (`SKILL.md`), `.cursorrules`,
`.cursor/rules/*`, `.clinerules` — at any depth: a nested file applies to its subtree (tagged
`subtree:<dir>`; the pipeline boosts it when the active file is under that folder). A list keeps
its lead-in, so every item of "Agents MUST NOT:" is stored under that line and the record is a
constraint; a code block stays with the sentence that introduces it.
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath

from nous.memory.markdown import parse
from nous.workspace.detect import EXTENSIONS
from nous.workspace.harvest import records
from nous.workspace.harvest.model import Harvested, slug

NAMES = frozenset(
    {"AGENTS.md", "CLAUDE.md", "CONVENTIONS.md", ".cursorrules", ".clinerules", "GEMINI.md",
     "SKILL.md", "copilot-instructions.md"}
)  # fmt: skip


def matches(relpath: str) -> bool:
    p = PurePosixPath(relpath)
    if p.name in NAMES or p.name.endswith(".instructions.md"):
        return True
    if ".cursor" in p.parts[:-1] and "rules" in p.parts[:-1]:
        return True
    return ".clinerules" in p.parts[:-1]


def subtree(relpath: str) -> str:
    """The folder an instruction file governs ('' for the whole workspace): a file under a
    `.github/` (skills, instructions) governs the folder that holds that `.github/`."""
    parts = PurePosixPath(relpath).parts[:-1]
    for marker in (".github", ".cursor", ".clinerules"):
        if marker in parts:
            parts = parts[: parts.index(marker)]
            break
    return "/".join(parts)


def _apply_language(front: dict[str, str]) -> str | None:
    """The one language an `applyTo:` / `globs:` pattern scopes the file to, if any."""
    pattern = front.get("applyto") or front.get("globs")
    if not pattern:
        return None
    languages = set()
    for glob in pattern.split(","):
        glob = glob.strip().strip("'\"")
        hits = {lang for ext, lang in EXTENSIONS.items() if fnmatch.fnmatch(f"x/y{ext}", glob)}
        if not hits or len(hits) > 1:
            return None
        languages |= hits
    return languages.pop() if len(languages) == 1 else None


def harvest(relpath: str, text: str) -> list[Harvested]:
    doc = parse(text)
    language = _apply_language(doc.front)
    label = relpath
    where = subtree(relpath)
    tags = ["instructions"] + ([f"subtree:{where}"] if where else [])
    if doc.front.get("name"):  # an agent skill: its name and description lead its records
        tags.append(slug(doc.front["name"], 40))
    out = []
    for record in records.of_document(doc, label):
        if not doc.title:
            record.path = [label, *record.path[1:]]
        else:
            record.path = [f"{label}: {record.path[0]}", *record.path[1:]]
        out.append(
            Harvested(
                kind=records.rule_kind(record), content=record.content(),
                anchor=f"file:{relpath}#{record.anchor}", language=language,
                tags=[*tags, slug(record.path[-1], 30)], confidence=1.0, importance=0.7,
            )
        )  # fmt: skip
    return out
