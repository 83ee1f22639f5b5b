"""Run the harvesters over a workspace and keep the store true to the sources.

What is read, and what each file is to the harvest (an alias, an import, a decision record of an
RFC folder), is `candidates`'s; the harvester a file goes to is a function of its path, its text
and that role. Unchanged files (same sha256 of bytes and role as last time) are skipped. A changed file's memories are rewritten:
rules still there are confirmed, new ones created, vanished ones made inactive; a removed file
makes all of its memories inactive. What is read, and how, is `boundary`'s: `.env*` files and
`.nousignore` matches are never read, nor anything that is not a regular file inside the folder;
one unreadable, refused or malformed file is logged and skipped. After the files, records that
say they replace others (by status or in their text) are linked to them: the older record's rows
become superseded by the newer one's main row.
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
from nous.memory import scope as scopes
from nous.memory.interface import Store
from nous.memory.model import Draft, Memory
from nous.text import rst
from nous.workspace import boundary
from nous.workspace.harvest import adr, decision_log, git, instructions, procedures
from nous.workspace.harvest.candidates import (
    MAX_FILE_BYTES,
    ON_ITS_OWN,
    RFC_FOLDERS,
    Role,
    harvestable,
    plan,
)
from nous.workspace.harvest.model import Harvested

log = logging.getLogger(__name__)

__all__ = ["MAX_FILE_BYTES", "Report", "candidates", "harvestable", "plan", "sync"]


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
    """Relative paths of the files the harvest reads (`candidates.plan`)."""
    return plan(root, ignore).paths


def _harvest_file(rel: str, text: str, role: Role = ON_ITS_OWN) -> list[Harvested]:
    if role.alias_of is not None or role.template:
        return []
    if role.governs is not None or instructions.matches(rel):
        return instructions.harvest(rel, text, role.governs)  # Markdown, whatever its name
    lowered = rel.lower()
    if lowered.endswith(".rst") or (lowered.endswith(".txt") and rst.looks_like_rst(text)):
        text = rst.to_markdown(text)  # a Python project's docs: read as the Markdown they say
    record = role.folder_status is not None and (
        posixpath.basename(posixpath.dirname(rel)).lower() in RFC_FOLDERS
        or adr.reads_like_record(text)
    )  # in an `rfcs/` folder every document is one; elsewhere one that reads like a record
    if adr.matches(rel, text) or record:
        return adr.harvest(rel, text, role.folder_status or None)
    if decision_log.matches(rel, text):
        return decision_log.harvest(rel, text)
    if procedures.matches(rel):
        return procedures.harvest(rel, text)
    return []


HARVESTER_VERSION = "5"
"""Bumped when the harvesters read a file differently (issue 25: decision logs, RFC folders,
lower-case agents.md; 3: a table is stored with its delimiter row, so it is read as a table,
a row a unit, and not as one run-on paragraph; 4: other agents' instruction files and rule
folders, `.windsurf/rules/` or `.kiro/steering/`, are rules, no longer documents; reStructuredText
documents and records are read; log4brains' dated, bare `ADR-0003.md` and unnumbered records in
a decision folder are decisions; a list under a heading that prohibits, "## Don't", is led by
it; HTML comments and task boxes are dropped; 5: a `SKILL.md` or lower-case `agents.md` in a
docs, examples or fixtures folder is a document, not rules; a heading's `{#id}` is no title word;
a list whose every item says its own "don't" is not led by its heading): every file is harvested
again once, so an existing store picks it up."""


def _sha(raw: bytes, role: Role) -> str:
    """What the harvest ledger keeps for a file: its bytes' sha256 with the harvesters' version,
    and its role when it has one (so a change of role alone harvests it again)."""
    digest = hashlib.sha256(raw)
    digest.update(b"\0nous-harvester:" + HARVESTER_VERSION.encode())
    if role.key():
        digest.update(b"\0nous-role:" + role.key().encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _drafts(items: list[Harvested], project_scope: str) -> list[Draft]:
    # A workspace's files are its project's, even a rule that applies to one language: a shared
    # `language:` scope would show it to every other project (and let their harvest retire it).
    return [
        Draft(kind=h.kind, content=h.content, scope=project_scope, source=h.anchor,
              status=h.status, tags=[*h.tags, *([scopes.language(h.language)] if h.language else [])],
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
    for memory_id, kind, status in store.sources.live_from_source(f"file:{rel}#", project_scope):
        if memory_id not in kept and lifecycle.machine(kind).allows(status, "inactive"):
            store.transition(memory_id, "inactive", f"no longer in {rel}")
            report.retired += 1


def _live(store: Store, scope: str, base: str) -> list[Memory]:
    """The live rows of one record: its main row (`base`, `file:<rel>#adr-<n>`) and its sections
    (`base-…`)."""
    ids = [i for i, _kind, _status in store.sources.live_from_source(base, scope)]
    rows = store.get_many(ids).values()
    return [m for m in rows if m.source == base or (m.source or "").startswith(f"{base}-")]


def _main(store: Store, scope: str, ref: str) -> Memory | None:
    """The live main row of the record `ref` names (a main anchor, or a number)."""
    if ref.startswith("file:"):
        return next((m for m in _live(store, scope, ref) if m.source == ref), None)
    number = adr.number_of(ref)
    found = store.sources.live_adr(number, scope) if number is not None else None
    return store.get_many([found]).get(found) if found else None


_MAIN = re.compile(r"#adr-\d+$")


def _link_successors(store: Store, scope: str, changed: dict[str, list[Harvested]]) -> None:
    """Records a changed record says replaced it (its status or its text), or that it replaces,
    are linked: every live row of the older one is superseded by the newer one's main row. A
    reference that no live record answers to is left alone."""
    for items in changed.values():
        for h in items:
            if not _MAIN.search(h.anchor):
                continue  # a section: its record's main row speaks for it
            pairs = [(h.anchor, h.successor)] if h.successor else []
            pairs += [(ref, h.anchor) for ref in h.supersedes]
            for older, newer in pairs:
                try:
                    _supersede(store, scope, older, newer)
                except NousError as exc:
                    log.warning("harvest: %s not linked to %s: %s", boundary.display(older),
                                boundary.display(newer), exc)  # fmt: skip


def _supersede(store: Store, scope: str, older_ref: str, newer_ref: str) -> None:
    newer = _main(store, scope, newer_ref)
    older = _main(store, scope, older_ref)
    if newer is None or older is None or older.source == newer.source:
        return
    for memory in _live(store, scope, older.source or ""):
        if memory.status == "superseded":
            if memory.superseded_by != newer.id:
                store.link_successor(memory.id, newer.id)
        elif lifecycle.machine(memory.kind).allows(memory.status, "superseded"):
            store.supersede(memory.id, newer.id)


def sync(store: Store, project: str, root: Path, git_limit: int = 50) -> Report:
    """Harvest `root` into `project` (its id); returns what changed."""
    started = time.perf_counter()
    scope = scopes.project(project)
    report = Report()
    seen = set()
    decisions: dict[str, list[Harvested]] = {}
    known = store.sources.harvested(project)
    ignore = boundary.harvest_ignore(root)
    walk = plan(root, ignore)
    for rel in walk.paths:
        report.files += 1
        seen.add(rel)
        role = walk.roles.get(rel, ON_ITS_OWN)
        try:
            raw = boundary.read_bounded(root, rel, MAX_FILE_BYTES, ignore)
            sha = _sha(raw, role)
            if known.get(rel) == sha:
                continue
            items = _harvest_file(rel, raw.decode("utf-8", errors="replace"), role)
            _write(store, scope, rel, items, report)
            if any("adr" in h.tags for h in items):
                decisions[rel] = items
            store.sources.note_harvested(project, rel, sha)
            report.changed += 1
        except (OSError, NousError, ValueError) as exc:
            log.warning("harvest: skipped %s: %s", boundary.display(rel), exc)
            report.errors.append(boundary.display(f"{rel}: {exc}"))
    _link_successors(store, scope, decisions)
    for rel in set(known) - seen:
        for memory_id, kind, status in store.sources.live_from_source(f"file:{rel}#", scope):
            if lifecycle.machine(kind).allows(status, "inactive"):
                store.transition(memory_id, "inactive", f"{rel} was removed")
                report.retired += 1
        store.sources.drop_harvested(project, rel)
    commits = git.harvest(root, git_limit)
    if commits:
        results = store.remember_many(_drafts(commits, scope))
        report.commits = sum(r.status == "created" for r in results)
    report.seconds = round(time.perf_counter() - started, 3)
    return report
