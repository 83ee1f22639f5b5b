"""Instruction files → the project's rules, one record per rule block (a section, or the part of
a long section that fits one record), read as a Markdown tree.

AGENTS.md, CLAUDE.md, GEMINI.md, CONVENTIONS.md, `.github/copilot-instructions.md`,
`*.instructions.md` (with `applyTo`), agent skills (`SKILL.md`), `.cursorrules`,
`.cursor/rules/*`, `.clinerules`, and the other agents' names for the same file (`AGENT.md`,
`.windsurfrules`, Zed's root `.rules`, `QWEN.md`, `CRUSH.md`, `.goosehints`, `.roorules`,
`.augment-guidelines`, `.junie/guidelines.md`, `.gemini/styleguide.md`, `.idx/airules.md`,
OpenHands' `.openhands/microagents/repo.md`) and rule folders (`.claude/rules/`,
`.windsurf/rules/`, `.roo/rules*/`, `.kiro/steering/`, `.continue/rules/`, `.augment/rules/`,
`.trae/rules/`, `.amazonq/rules/`) — at any depth, `agents.md` / `claude.md` / `gemini.md` in any
case: a nested file applies to its subtree (tagged `subtree:<dir>`; the pipeline boosts it when
the active file is under that folder). A list keeps its lead-in, so every item of "Agents MUST
NOT:" is stored under that line and the record is a constraint; a code block stays with the
sentence that introduces it.

An `@path` token (Claude Code's import: `@AGENTS.md`, `@.agents/agents.md.`) names a file whose
rules the instruction file pulls in: `imports` lists them, `sync` harvests them as instruction
files governing the importer's folder, and a line that only imports is no rule of its own.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from pathlib import PurePosixPath

from nous.text.markdown import outside_code, parse
from nous.workspace.detect import EXTENSIONS
from nous.workspace.harvest import records
from nous.workspace.harvest.model import Harvested, slug

NAMES = frozenset(
    {"AGENTS.md", "CLAUDE.md", "CONVENTIONS.md", ".cursorrules", ".clinerules", "GEMINI.md",
     "SKILL.md", "copilot-instructions.md", "AGENT.md", ".windsurfrules", "QWEN.md", "CRUSH.md",
     ".goosehints", ".roorules", ".augment-guidelines"}
)  # fmt: skip
ANY_CASE = frozenset({"agents.md", "claude.md", "gemini.md"})
"""Names matched in any case (fx-private-relay's nested `api/agents.md`)."""
ROOT_NAMES = frozenset({".rules"})
"""Names that are instruction files only at the workspace root (Zed's `.rules`)."""
FILES = frozenset(
    {".junie/guidelines.md", ".gemini/styleguide.md", ".idx/airules.md",
     ".openhands/microagents/repo.md"}
)  # fmt: skip
"""Instruction files known by their folder and name (at any depth, like the names)."""
RULE_FOLDERS = (
    (".cursor", "rules"), (".claude", "rules"), (".windsurf", "rules"), (".kiro", "steering"),
    (".continue", "rules"), (".augment", "rules"), (".trae", "rules"), (".amazonq", "rules"),
    (".roo", "rules"),
)  # fmt: skip
"""(agent folder, folder of rule files): every text file under such a pair is an instruction
file (`.roo/rules-code/` too: a Roo mode's own rules)."""
RULE_SUFFIXES = frozenset({".md", ".mdc", ".markdown", ".txt", ""})
MARKERS = (".github", ".cursor", ".clinerules", ".agents", ".claude", ".windsurf", ".kiro",
           ".continue", ".augment", ".trae", ".amazonq", ".roo", ".junie", ".gemini", ".idx",
           ".openhands")  # fmt: skip
"""Folders of agent configuration: a file under one governs the folder that holds it."""
_IMPORT = re.compile(r"(?:^|(?<=\s))@([\w.~/-][^\s`'\"<>()\[\]]*)")
_TRAILING = ".,;:!?"
MAX_IMPORT_LINE = 2000
"""Longer lines are prose, never read for imports (and no pattern runs over a huge line)."""
_CODE_SPAN = re.compile(r"(`+).*?\1")


DOC_FOLDERS = frozenset({"docs", "doc", "documentation", "website", "site", "content"})
"""Folders of a project's documentation (its pages, not its guidance)."""
CONTENT_FOLDERS = DOC_FOLDERS | frozenset(
    {"examples", "example", "samples", "sample", "fixtures", "__fixtures__", "testdata",
     "test_data", "test-data"}
)  # fmt: skip
"""Folders whose files are the project's content, not guidance for working on it: a `SKILL.md`
there belongs to an example app or to the product's docs (openai-agents' `examples/**/skills/`,
fastmcp's `docs/.mintlify/skills/`), and a lower-case `agents.md` there is a page about agents
(openai-agents' `docs/agents.md`). An agent folder (`.agents/`, `.claude/`, …) above the file
still makes it one; an `AGENTS.md` spelled so is one anywhere."""


def matches(relpath: str) -> bool:
    p = PurePosixPath(relpath)
    name = p.name
    loose = name == "SKILL.md" or (name not in NAMES and name.lower() in ANY_CASE)
    if loose and _in_content(p.parts[:-1]):
        return False
    if name in NAMES or name.lower() in ANY_CASE or name.endswith(".instructions.md"):
        return True
    if name in ROOT_NAMES and len(p.parts) == 1:
        return True
    if "/".join(p.parts[-2:]) in FILES or "/".join(p.parts[-3:]) in FILES:
        return True
    folders = p.parts[:-1]
    if ".clinerules" in folders:
        return True
    if p.suffix.lower() not in RULE_SUFFIXES:
        return False
    return any(
        agent in folders
        and any(f == rules or f.startswith(f"{rules}-")
                for f in folders[folders.index(agent) + 1 :])
        for agent, rules in RULE_FOLDERS
    )  # fmt: skip


def _in_content(folders: tuple[str, ...]) -> bool:
    """`folders` lie in a content folder (CONTENT_FOLDERS) with no agent folder below it."""
    for i in range(len(folders) - 1, -1, -1):
        if folders[i] in MARKERS:
            return False
        if folders[i].lower() in CONTENT_FOLDERS:
            return True
    return False


def subtree(relpath: str) -> str:
    """The folder an instruction file governs ('' for the whole workspace): a file under a
    `.github/` (skills, instructions) governs the folder that holds that `.github/`."""
    parts = PurePosixPath(relpath).parts[:-1]
    for marker in MARKERS:
        if marker in parts:
            parts = parts[: parts.index(marker)]
            break
    return "/".join(parts)


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(index, line without code spans) of the lines outside fenced code blocks: an `@` inside
    code is not an import (Claude Code does not evaluate them there either)."""
    out: list[tuple[int, str]] = []
    for n, line, _ in outside_code(text.splitlines()):
        if len(line) <= MAX_IMPORT_LINE:
            out.append((n, _CODE_SPAN.sub(" ", line)))
    return out


def _paths(line: str) -> list[str]:
    """The `@path` tokens of a line that name a path: with a `/` or a `.` (`@maintainers` is a
    mention), neither under `~` nor absolute."""
    tokens = (t.rstrip(_TRAILING) for t in _IMPORT.findall(line))
    return [t for t in tokens if ("/" in t or "." in t) and not t.startswith(("~", "/"))]


def imports(relpath: str, text: str) -> list[str]:
    """Workspace-relative paths of the files `relpath` imports with `@path` (relative to its own
    folder, as Claude Code resolves them). A token without a `/` or a `.` is a mention
    (`@maintainers`), not a path; `~`, absolute and `..`-escaping paths are left out; whether
    the file exists is for the caller to find out."""
    out: dict[str, None] = {}
    folder = posixpath.dirname(relpath)
    for _n, line in _prose_lines(text):
        for token in _paths(line):
            joined = posixpath.normpath(posixpath.join(folder, token))
            if joined != "." and not joined.startswith("../") and joined != "..":
                out[joined] = None
    return list(out)


def _without_import_lines(text: str) -> str:
    """`text` less the lines that hold nothing but `@path` imports (they are no rule)."""
    drop = set()
    for n, line in _prose_lines(text):
        found = _paths(line)
        rest = _IMPORT.sub(" ", line).strip(" \t-*>" + _TRAILING)
        if found and not rest and len(found) == len(_IMPORT.findall(line)):
            drop.add(n)
    if not drop:
        return text
    return "\n".join(line for n, line in enumerate(text.splitlines()) if n not in drop)


def _apply_language(front: dict[str, str]) -> str | None:
    """The one language an `applyTo:` / `globs:` / `paths:` pattern (Copilot, Cursor, Claude
    Code) scopes the file to, if any."""
    pattern = front.get("applyto") or front.get("globs") or front.get("paths")
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


def harvest(relpath: str, text: str, governs: str | None = None) -> list[Harvested]:
    """The rules of an instruction file; `governs` (from `sync`: a file imported or symlinked
    from another instruction file) is the folder they apply to, else the file's own subtree."""
    doc = parse(_without_import_lines(text))
    language = _apply_language(doc.front)
    label = relpath
    where = subtree(relpath) if governs is None else governs
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
