"""Instruction files → one memory per rule (AGENTS.md, CLAUDE.md, copilot-instructions,
`*.instructions.md` with `applyTo`, .cursorrules, .cursor/rules/*, .clinerules, CONVENTIONS.md)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import PurePosixPath

from nous.workspace.detect import EXTENSIONS
from nous.workspace.harvest.model import Harvested, rule_kind, slug

NAMES = frozenset(
    {"AGENTS.md", "CLAUDE.md", "CONVENTIONS.md", ".cursorrules", ".clinerules", "GEMINI.md"}
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)")
_HEADING = re.compile(r"^\s*#{1,6}\s+(.*\S)")
_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)


def matches(relpath: str) -> bool:
    p = PurePosixPath(relpath)
    if p.name in NAMES and len(p.parts) <= 2:
        return True
    if relpath == ".github/copilot-instructions.md":
        return True
    if p.name.endswith(".instructions.md"):
        return True
    if len(p.parts) >= 3 and p.parts[0] == ".cursor" and p.parts[1] == "rules":
        return True
    return len(p.parts) >= 2 and p.parts[0] == ".clinerules"


def _apply_language(front: str) -> str | None:
    """The one language an `applyTo:` / `globs:` pattern scopes the file to, if any."""
    match = re.search(r"^(?:applyTo|globs)\s*:\s*['\"]?([^'\"\n]+)", front, re.M)
    if not match:
        return None
    languages = set()
    for glob in match.group(1).split(","):
        glob = glob.strip()
        hits = {lang for ext, lang in EXTENSIONS.items() if fnmatch.fnmatch(f"x/y{ext}", glob)}
        if not hits or len(hits) > 1:
            return None
        languages |= hits
    return languages.pop() if len(languages) == 1 else None


def harvest(relpath: str, text: str) -> list[Harvested]:
    front_match = _FRONT.match(text)
    language = _apply_language(front_match.group(1)) if front_match else None
    body = text[front_match.end() :] if front_match else text
    rules: list[tuple[str, str]] = []
    section = "rules"
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            joined = " ".join(paragraph).strip()
            if len(joined.split()) >= 4:
                rules.append((section, joined))
            paragraph.clear()

    in_code = False
    for line in body.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            flush()
            continue
        if in_code:
            continue
        if heading := _HEADING.match(line):
            flush()
            section = heading.group(1)
            continue
        if bullet := _BULLET.match(line):
            flush()
            rules.append((section, bullet.group(1)))
            continue
        if line.strip():
            paragraph.append(line.strip())
        else:
            flush()
    flush()
    out = []
    for n, (title, rule) in enumerate(rules, start=1):
        out.append(
            Harvested(
                kind=rule_kind(rule), content=rule,
                anchor=f"file:{relpath}#{slug(title)}-{n}", language=language,
                tags=["instructions", slug(title, 30)],
            )
        )  # fmt: skip
    return out
