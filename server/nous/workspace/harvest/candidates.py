"""Which files of a workspace the harvest reads, and what each one is to it.

The boundary's walk (symlinked folders never entered), less what `.nousignore` / `.env*`
exclude and vendored trees. What one file is can depend on the others, and that knowledge is
kept here, so every harvester stays a function of (path, text): an instruction file's aliases (a
symlink to it, a byte copy in the same folder, a checkout's flattened symlink), the files it
imports with `@path` (instruction files governing the importer's folder), the folders of
decision records without a status of their own (RFC folders, found by name or by their numbered
records) with the status their README gives merged records, and which documents instruction
files link to (read first when documents are capped).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from nous.workspace import boundary
from nous.workspace.detect import IGNORED_DIRS
from nous.workspace.harvest import adr, decision_log, instructions, procedures

MAX_FILE_BYTES = 1_000_000
MATCHERS = (instructions.matches, adr.matches, procedures.matches)
MAX_DEPTH = 8
MAX_DOCS = 400
"""Documents beyond instruction files and decision records read per harvest: linked ones
first, then contributing/development guides and READMEs, then the shallowest."""
MAX_IMPORT_DEPTH = 5
"""Hops of `@path` imports followed from an instruction file (Claude Code's own limit)."""
LINK_TEXT_BYTES = 255
_LINK = re.compile(r"\]\(\s*<?([^)\s>#]+\.(?:md|rst))(?:#[^)\s]*)?>?")
RFC_FOLDERS = frozenset({"rfcs", "rfc"})
_README = frozenset({"readme.md", "index.md"})
_MERGED_ARE_ACCEPTED = re.compile(
    r"\b(?:contains|holds|lists)\s+(?:only\s+)?(?:the\s+)?(?:accepted|approved|active)\b"
    r"|\bactive\s+rfcs?\b"
    r"|\bmerged\b[^.\n]{0,80}\b(?:active|accepted|approved)\b"
    r"|\b(?:accepted|approved)\b[^.\n]{0,40}\bmerge",
    re.I,
)
"""What an RFC folder's README says when a merged RFC is an accepted one: "contains accepted
design documents", "Active RFC List", "the PR will be merged and the RFC will become 'active'",
"Once approved, self-merge your RFC"."""


@dataclass(frozen=True)
class Role:
    """What the walk learned about a file from the other files; the harvester it goes to is
    still a function of (path, text) and this."""

    alias_of: str | None = None
    """Harvested as nothing: a symlink to, a byte copy of, or a checkout's flattened symlink to
    the instruction file named here, whose rules are stored once under that name."""
    governs: str | None = None
    """An instruction file by an `@path` import or as a symlink's target: the folder its rules
    apply to (the importer's)."""
    folder_status: str | None = None
    """In a decision-record folder: the status its README gives merged records ("accepted"),
    or "" (none: `recorded`)."""
    template: bool = False
    """A record template in a decision-record folder: harvested as nothing."""

    def key(self) -> str:
        """'' for a file harvested on its own; else what its harvest depends on beside its bytes
        (a file that becomes an alias or an import is harvested again, unchanged as it is)."""
        parts = [f"alias={self.alias_of}" if self.alias_of is not None else "",
                 f"governs={self.governs}" if self.governs is not None else "",
                 f"records={self.folder_status}" if self.folder_status is not None else "",
                 "template" if self.template else ""]  # fmt: skip
        return ";".join(p for p in parts if p)


ON_ITS_OWN = Role()


@dataclass
class Plan:
    paths: list[str]
    """What is read, sorted."""
    roles: dict[str, Role]
    """The paths whose harvest depends on other files."""


def plan(root: Path, ignore: boundary.Ignore | None = None) -> Plan:
    """The files to read and what each one is: the boundary's walk (symlinked folders never
    entered), less what `.nousignore` / `.env*` exclude and vendored trees; instruction files by
    name, their aliases, the files they import (`@path`, followed up to MAX_IMPORT_DEPTH hops),
    the decision records (RFC folders found by shape, decision logs) and up to MAX_DOCS other
    documents, those an instruction file links to first."""
    ignore = ignore or boundary.harvest_ignore(root)

    def skip(rel: str, is_dir: bool) -> bool:
        return (is_dir and rel.rsplit("/", 1)[-1] in IGNORED_DIRS) or ignore(rel, is_dir)

    walked = boundary.walk(root, skip, max_depth=MAX_DEPTH)
    found = [rel for rel in walked if harvestable(rel)]
    everything = set(found)
    found = [rel for rel in found if not copy_of_another(rel, everything)]
    named = [r for r in found if instructions.matches(r)]
    aliases = _aliases(root, named, ignore)
    governs: dict[str, str] = {}
    for alias, target in aliases.items():
        if not instructions.matches(target):  # `.clinerules` → notes/team.md
            _govern(governs, target, instructions.subtree(alias))
    sources = [r for r in named if r not in aliases]
    _imports(root, [*sources, *governs], aliases, governs, ignore)
    roles: dict[str, Role] = {a: Role(alias_of=t) for a, t in aliases.items()}
    roles.update({r: Role(governs=where) for r, where in governs.items() if r not in aliases})
    for rel, status in _record_files(root, found, ignore).items():
        if rel not in roles and not instructions.matches(rel):
            roles[rel] = Role(template=True) if status is None else Role(folder_status=status)
    rules = {*named, *governs, *roles}
    rules |= {r for r in found if adr.matches(r) or decision_log.matches(r)}
    linked = _linked(root, [*sources, *governs], ignore)
    docs = sorted(
        (r for r in found if r not in rules),
        key=lambda r: (r not in linked, procedures.priority(r), r),
    )
    return Plan(sorted(rules | set(docs[:MAX_DOCS])), roles)


LANGUAGES = frozenset(
    "ar bg bn ca cs da de el es et fa fi fr he hi hr hu id it ja ko lt lv ms nb nl no pl pt ro "
    "ru sk sl sr sv th tr uk ur vi zh".split()
)
"""The languages documentation is translated into (ISO 639-1; `go`, `js` or `py` are not)."""
_LOCALE = re.compile(r"([a-z]{2})(?:[-_](?:[a-z]{2}|hans|hant))?", re.I)
_VERSION = re.compile(r"v?\d+(?:\.(?:\d+|x))*|version-[\w.-]+", re.I)
SNAPSHOT_ROOTS = frozenset({"versioned_docs", "i18n"})
"""Docusaurus keeps an older version's pages (`versioned_docs/version-2.0/…`) and each
translation (`i18n/ja/…`) in trees of their own."""


def copy_of_another(rel: str, found: set[str]) -> bool:
    """A translated or an older version's copy of a page the workspace also has: `docs/ja/x.md`
    beside `docs/x.md` (or `docs/en/x.md`), `docs/v2/x.mdx` beside `docs/x.mdx`, and whatever
    Docusaurus keeps under `versioned_docs/` and `i18n/`. openai-agents' generated ja/ko/zh
    pages were 63 % of its memories and came first for English questions; fastmcp's frozen
    v2/v3 guides contradicted the current one. A folder named like a language or a version in a
    documentation tree is read when nothing else has the same page."""
    parts = rel.split("/")
    if parts[0] in SNAPSHOT_ROOTS and len(parts) > 2:
        return True
    folders = [p.lower() for p in parts[:-1]]
    docs = next((i for i, f in enumerate(folders) if f in instructions.DOC_FOLDERS), None)
    if docs is None:
        return False  # `api/v1/README.md` is its own page, not a copy of `api/README.md`
    for i in range(docs + 1, len(parts) - 1):
        part = parts[i]
        said = _LOCALE.fullmatch(part)
        locale = said is not None and said[1].lower() in LANGUAGES
        if not (locale or _VERSION.fullmatch(part)):
            continue
        if "/".join(parts[:i] + parts[i + 1 :]) in found:
            return True
        if locale and "/".join([*parts[:i], "en", *parts[i + 1 :]]) in found:
            return True
    return False


def _real(root: Path, rel: str) -> str | None:
    """`rel` with symlinks resolved, relative to the real root; None when it is missing or
    outside the folder (`read_bounded` decides what may be read)."""
    real_root = os.path.realpath(root)
    try:
        real = os.path.realpath(os.path.join(real_root, rel), strict=True)
    except OSError:
        return None
    if not real.startswith(real_root.rstrip(os.sep) + os.sep) or not os.path.isfile(real):
        return None
    return os.path.relpath(real, real_root).replace(os.sep, "/")


def _readable(root: Path, rel: str, ignore: boundary.Ignore) -> bytes | None:
    try:
        return boundary.read_bounded(root, rel, MAX_FILE_BYTES, ignore)
    except OSError:
        return None


def _aliases(root: Path, named: list[str], ignore: boundary.Ignore) -> dict[str, str]:
    """{alias: the instruction file it stands for}: a symlink to a file inside the folder, a
    checkout's flattened symlink (the file holds only the target's relative path, as git writes
    one without symlink support), or a byte copy of another instruction file in the same
    folder. Among copies the canonical one is AGENTS.md, then a symlink's target, then the
    alphabetically first."""
    out: dict[str, str] = {}
    texts: dict[str, bytes] = {}
    for rel in named:
        if os.path.islink(os.path.join(root, rel)):
            target = _real(root, rel)
            if target and target != rel and _readable(root, target, ignore) is not None:
                out[rel] = target
            continue
        raw = _readable(root, rel, ignore)
        if raw is None or not raw.strip():
            continue
        pointed = _link_text(root, rel, raw, ignore)
        if pointed:
            out[rel] = pointed
        else:
            texts[rel] = raw
    targets = set(out.values())
    copies: dict[tuple[str, str], list[str]] = {}
    for rel, raw in texts.items():
        key = (posixpath.dirname(rel), hashlib.sha256(raw).hexdigest())
        copies.setdefault(key, []).append(rel)
    for group in copies.values():
        canonical = min(group, key=lambda r: (posixpath.basename(r).lower() != "agents.md",
                                               r not in targets, r))  # fmt: skip
        out.update({rel: canonical for rel in group if rel != canonical})
    for rel in list(out):  # CLAUDE.md → GEMINI.md, itself a copy of AGENTS.md
        seen, target = {rel}, out[rel]
        while target in out and target not in seen:
            seen.add(target)
            target = out[target]
        out[rel] = target
    return {alias: target for alias, target in out.items() if alias != target}


def _link_text(root: Path, rel: str, raw: bytes, ignore: boundary.Ignore) -> str | None:
    """The file a checkout's flattened symlink names: its whole content a relative path (no
    whitespace, no newline) to a readable file inside the folder."""
    if len(raw) > LINK_TEXT_BYTES or any(c in raw for c in b" \t\r\n"):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), text))
    if text.startswith("/") or joined.startswith(".."):
        return None
    target = _real(root, joined)
    if not target or target == rel or _readable(root, target, ignore) is None:
        return None
    return target


def _common(a: str, b: str) -> str:
    """The deepest folder holding both folders ('' is the workspace)."""
    pa, pb = (a.split("/") if a else []), (b.split("/") if b else [])
    n = 0
    while n < min(len(pa), len(pb)) and pa[n] == pb[n]:
        n += 1
    return "/".join(pa[:n])


def _govern(governs: dict[str, str], rel: str, folder: str) -> bool:
    """`rel` applies to `folder` too: it governs the common ancestor of the folders it was
    brought into. True when that changed."""
    common = _common(governs[rel], folder) if rel in governs else folder
    changed = governs.get(rel) != common
    governs[rel] = common
    return changed


def _imports(
    root: Path, sources: list[str], aliases: dict[str, str], governs: dict[str, str],
    ignore: boundary.Ignore,
) -> None:  # fmt: skip
    """Follow the `@path` imports of the instruction files `sources`: each imported file is an
    instruction file governing its importer's folder (added to `governs`; a file that is one by
    name keeps its own folder when that is the same)."""
    frontier = list(dict.fromkeys(sources))
    for _hop in range(MAX_IMPORT_DEPTH):
        following = []
        for rel in frontier:
            raw = _readable(root, rel, ignore)
            if raw is None:
                continue
            where = governs.get(rel, instructions.subtree(rel))
            for target in instructions.imports(rel, raw.decode("utf-8", errors="replace")):
                real = _real(root, target)
                real = aliases.get(real, real) if real else None
                if not real or real == rel or _readable(root, real, ignore) is None:
                    continue
                if instructions.matches(real) and real not in governs:
                    own = instructions.subtree(real)
                    if _common(own, where) == own:
                        continue  # it governs the importer's folder already
                    governs[real] = own
                if _govern(governs, real, where):
                    following.append(real)
        if not following:
            return
        frontier = following


def _record_files(root: Path, found: list[str], ignore: boundary.Ignore) -> dict[str, str | None]:
    """{path: the status its folder's README gives merged records ("accepted") or "", None for
    a template} of the Markdown files of RFC folders: a folder named `rfcs/` / `rfc/`, or one
    where most Markdown files have numbered or dated names (READMEs left out)."""
    folders: dict[str, list[str]] = {}
    for rel in found:
        if rel.lower().endswith((".md", ".markdown")):
            folders.setdefault(posixpath.dirname(rel), []).append(rel)
    out: dict[str, str | None] = {}
    for folder, files in folders.items():
        numbered = [f for f in files if adr.numbered(f)]
        named = posixpath.basename(folder).lower() in RFC_FOLDERS
        if not named and not (len(numbered) >= 3 and 2 * len(numbered) >= len(files)):
            continue
        readmes = [f for f in files if posixpath.basename(f).lower() in _README]
        said = b"".join(_readable(root, f, ignore) or b"" for f in readmes)
        status = "accepted" if _MERGED_ARE_ACCEPTED.search(said.decode("utf-8", "replace")) else ""
        for rel in files:
            if rel not in readmes:
                out[rel] = None if adr.is_template(rel) else status
    return out


def _linked(root: Path, sources: list[str], ignore: boundary.Ignore) -> set[str]:
    """Workspace-relative Markdown paths the instruction files link to."""
    out: set[str] = set()
    for rel in sources:
        raw = _readable(root, rel, ignore)
        if raw is None:
            continue
        for target in _LINK.findall(raw.decode("utf-8", errors="replace")):
            if "://" in target:
                continue
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
            if not joined.startswith(".."):
                out.add(joined.lstrip("/"))
    return out


def harvestable(relpath: str) -> bool:
    """True when some harvester reads this path (removed paths count too)."""
    return any(match(relpath) for match in MATCHERS)
