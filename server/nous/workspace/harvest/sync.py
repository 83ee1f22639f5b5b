"""Run the harvesters over a workspace and keep the store true to the sources.

Unchanged files (same sha256 as last time) are skipped. A changed file's memories are rewritten:
rules still there are confirmed, new ones created, vanished ones made inactive; a removed file
makes all of its memories inactive. What is read, and how, is `boundary`'s: `.env*` files and
`.nousignore` matches are never read, nor anything that is not a regular file inside the folder;
one unreadable, refused or malformed file is logged and skipped.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from nous.errors import NousError
from nous.memory import lifecycle
from nous.memory.interface import Store
from nous.memory.model import Draft
from nous.workspace import boundary
from nous.workspace.detect import IGNORED_DIRS
from nous.workspace.harvest import adr, git, instructions, procedures
from nous.workspace.harvest.model import Harvested

log = logging.getLogger(__name__)
MAX_FILE_BYTES = 1_000_000
HARVESTERS = ((instructions.matches, instructions.harvest), (adr.matches, adr.harvest),
              (procedures.matches, procedures.harvest))  # fmt: skip
MAX_DEPTH = 8
MAX_DOCS = 400
"""Documents beyond instruction files and ADRs read per harvest: linked ones first, then
contributing/development guides and READMEs, then the shallowest."""
_LINK = re.compile(r"\]\(\s*<?([^)\s>#]+\.md)(?:#[^)\s]*)?>?")


@dataclass
class Report:
    files: int = 0
    changed: int = 0
    created: int = 0
    confirmed: int = 0
    retired: int = 0
    commits: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


def candidates(root: Path, ignore: boundary.Ignore | None = None) -> list[str]:
    """Relative paths of the files some harvester reads: the boundary's walk (symlinked folders
    never entered), less what `.nousignore` / `.env*` exclude and vendored trees."""
    ignore = ignore or boundary.harvest_ignore(root)

    def skip(rel: str, is_dir: bool) -> bool:
        return (is_dir and rel.rsplit("/", 1)[-1] in IGNORED_DIRS) or ignore(rel, is_dir)

    walked = boundary.walk(root, skip, max_depth=MAX_DEPTH)
    found = [rel for rel in walked if any(match(rel) for match, _ in HARVESTERS)]
    rules = [r for r in found if instructions.matches(r) or adr.matches(r)]
    linked = _linked(root, [r for r in found if instructions.matches(r)], ignore)
    docs = sorted(
        (r for r in found if r not in set(rules)),
        key=lambda r: (r not in linked, procedures.priority(r), r),
    )
    return sorted(rules + docs[:MAX_DOCS])


def _linked(root: Path, sources: list[str], ignore: boundary.Ignore) -> set[str]:
    """Workspace-relative Markdown paths the instruction files link to."""
    out: set[str] = set()
    for rel in sources:
        try:
            text = boundary.read_bounded(root, rel, MAX_FILE_BYTES, ignore).decode(
                "utf-8", errors="replace"
            )
        except OSError:
            continue
        for target in _LINK.findall(text):
            if "://" in target:
                continue
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
            if not joined.startswith(".."):
                out.add(joined.lstrip("/"))
    return out


def harvestable(relpath: str) -> bool:
    """True when some harvester reads this path (removed paths count too)."""
    return any(match(relpath) for match, _ in HARVESTERS)


def _harvest_file(rel: str, text: str) -> list[Harvested]:
    if instructions.matches(rel):
        return instructions.harvest(rel, text)
    if adr.matches(rel, text):
        return adr.harvest(rel, text)
    if procedures.matches(rel):
        return procedures.harvest(rel, text)
    return []


def _drafts(items: list[Harvested], project_scope: str) -> list[Draft]:
    # A workspace's files are its project's, even a rule that applies to one language: a shared
    # `language:` scope would show it to every other project (and let their harvest retire it).
    return [
        Draft(kind=h.kind, content=h.content, scope=project_scope, source=h.anchor,
              status=h.status, tags=[*h.tags, *([f"language:{h.language}"] if h.language else [])],
              confidence=h.confidence, importance=h.importance)
        for h in items
    ]  # fmt: skip


def _write(
    store: Store, project_scope: str, rel: str, items: list[Harvested], report: Report
) -> None:
    results = store.remember_many(_drafts(items, project_scope)) if items else []
    kept = set()
    for harvested, result in zip(items, results, strict=True):
        kept.add(result.memory.id)
        report.created += result.status == "created"
        report.confirmed += result.status == "confirmed"
        target = harvested.status
        memory = result.memory
        if (
            target
            and target != memory.status
            and lifecycle.machine(memory.kind).allows(memory.status, target)
        ):
            store.transition(memory.id, target, f"source {rel} says {target}")
    for memory_id, kind, status in store.live_from_source(f"file:{rel}#", project_scope):
        if memory_id not in kept and lifecycle.machine(kind).allows(status, "inactive"):
            store.transition(memory_id, "inactive", f"no longer in {rel}")
            report.retired += 1


def _link_successors(store: Store, project_scope: str, adrs: dict[str, list[Harvested]]) -> None:
    for items in adrs.values():
        for h in items:
            if not h.successor:
                continue
            number = adr.number_of(h.successor)
            old = store.id_of_source(h.anchor, project_scope)
            new = store.live_adr(number, project_scope) if number is not None else None
            if old and new and old != new:
                store.link_successor(old, new)


def sync(store: Store, project: str, root: Path, git_limit: int = 50) -> Report:
    """Harvest `root` into `project` (its id); returns what changed."""
    started = time.perf_counter()
    scope = f"project:{project}"
    report = Report()
    seen = set()
    adrs: dict[str, list[Harvested]] = {}
    known = store.harvested(project)
    ignore = boundary.harvest_ignore(root)
    for rel in candidates(root, ignore):
        report.files += 1
        seen.add(rel)
        try:
            raw = boundary.read_bounded(root, rel, MAX_FILE_BYTES, ignore)
            sha = hashlib.sha256(raw).hexdigest()
            if known.get(rel) == sha:
                continue
            items = _harvest_file(rel, raw.decode("utf-8", errors="replace"))
            _write(store, scope, rel, items, report)
            if any("adr" in h.tags for h in items):
                adrs[rel] = items
            store.note_harvested(project, rel, sha)
            report.changed += 1
        except (OSError, NousError, ValueError) as exc:
            log.warning("harvest: skipped %s: %s", boundary.display(rel), exc)
            report.errors.append(boundary.display(f"{rel}: {exc}"))
    _link_successors(store, scope, adrs)
    for rel in set(known) - seen:
        for memory_id, kind, status in store.live_from_source(f"file:{rel}#", scope):
            if lifecycle.machine(kind).allows(status, "inactive"):
                store.transition(memory_id, "inactive", f"{rel} was removed")
                report.retired += 1
        store.drop_harvested(project, rel)
    commits = git.harvest(root, git_limit)
    if commits:
        results = store.remember_many(_drafts(commits, scope))
        report.commits = sum(r.status == "created" for r in results)
    report.seconds = round(time.perf_counter() - started, 3)
    return report
