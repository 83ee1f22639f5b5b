"""The write path's rows: a draft made ready to store (normalised, redacted in every field,
rendered, hashed), the lookup of what a batch already holds, and the one row a write inserts or
confirms. The same normalised text written twice in one scope is a confirmation of the first row,
never a second one; what a chat session said (`memory.turns`) is deduplicated within that session
only, so each session keeps its own turns and notes and forgetting one session never takes
another's. The SQL runs inside the store's transaction (`MemoryStore.remember_many`)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nous.errors import InvalidMemory
from nous.memory import lifecycle, renderings, turns
from nous.memory import scope as scopes
from nous.memory.database import Database
from nous.memory.embedder import Vector
from nous.memory.embeddings import Embeddings
from nous.memory.model import Draft, Memory, now
from nous.memory.rows import COLUMNS, READ, blob, decode, read, sealed
from nous.text import secrets
from nous.text.secrets import Redaction
from nous.text.tokens import TokenCounter


@dataclass
class WriteResult:
    """What a remember did: the row, `created` or `confirmed`, and the redactions made."""

    memory: Memory
    status: str
    redactions: list[Redaction] = field(default_factory=list)


@dataclass
class Prepared:
    """A draft ready to store: its fields redacted, its content normalised and rendered."""

    draft: Draft
    scope: str
    content: str
    content_hash: str
    summary: str
    micro: str
    redactions: list[Redaction]
    redaction: str
    """The row's seal (`rows.sealed`)."""


def prepare(draft: Draft, counter: TokenCounter) -> Prepared:
    draft = draft.validated()
    since = secrets.gaps()
    clean, found = secrets.redact(renderings.normalise(draft.content))
    scanned = set() if found else {clean}  # found clean by that scan: not scanned for the seal
    tags = []
    for tag in draft.tags:  # every stored field, not only the content
        clean_tag, in_tag = secrets.redact(tag)
        tags.append(clean_tag)
        found += in_tag
        if not in_tag:
            scanned.add(clean_tag)
    source, in_source = secrets.redact(draft.source)
    found += in_source
    if not in_source:
        scanned.add(source)
    draft = draft.model_copy(update={"tags": sorted(set(tags)), "source": source})
    args = (draft.outcome, draft.confidence, counter)
    summary = renderings.summary(draft.kind, clean, *args)
    micro = renderings.micro(draft.kind, clean, *args)
    return Prepared(
        draft=draft,
        scope=draft.scope or scopes.UNIVERSAL,
        content=clean,
        content_hash=renderings.content_hash(clean, turns.session_of(source)),
        summary=summary,
        micro=micro,
        redactions=found,
        redaction=sealed((clean, summary, micro, source, json.dumps(draft.tags)), scanned, since),
    )


def write_batch(
    db: Database,
    vectors: Embeddings,
    counter: TokenCounter,
    drafts: Sequence[Draft],
    embedded: tuple[str, Vector] | None = None,
) -> tuple[list[WriteResult], list[str]]:
    """Prepare and embed `drafts` (a deferring store leaves their vectors to its backlog), then
    write them in one transaction; (what each write did, the ids created without a vector).
    `embedded` is (text, its vector) the caller already has: used when the stored content is
    exactly that text (nothing redacted, nothing normalised away)."""
    embedder = vectors.embedder
    prepared = [prepare(d, counter) for d in drafts]
    known = existing_keys(db, [(p.scope, p.content_hash) for p in prepared])
    todo = [p for p in prepared if (p.scope, p.content_hash) not in known]
    found: dict[int, Vector] = {}
    if embedded is not None:
        found = {id(p): embedded[1] for p in todo if p.content == embedded[0]}
    rest = [p for p in todo if id(p) not in found]
    if vectors.deferred:
        rest = []  # written without a vector: the backlog computes it after the commit
    found.update(
        zip([id(p) for p in rest], embedder.embed_many([p.content for p in rest]), strict=True)
    )
    results = []
    deferred: list[str] = []
    with db.write():
        change = db.next_change()
        for p in prepared:
            vector = found.get(id(p))
            if vector is None and not vectors.deferred and not _exists(db, p):
                vector = embedder.embed(p.content)  # purged since we looked: rare
            results.append(write_one(db, p, vector, change, embedder.name))
            if vector is None and results[-1].status == "created":
                deferred.append(results[-1].memory.id)
    return results, deferred


def _exists(db: Database, p: Prepared) -> bool:
    return bool(existing_keys(db, [(p.scope, p.content_hash)]))


def existing_keys(db: Database, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (scope, content hash) pairs among `keys` that rows already hold."""
    found: set[tuple[str, str]] = set()
    for start in range(0, len(keys), 400):
        chunk = keys[start : start + 400]
        clause = " OR ".join("(scope = ? AND content_hash = ?)" for _ in chunk)
        flat = [v for pair in chunk for v in pair]
        found |= set(
            db.conn.execute(
                f"SELECT scope, content_hash FROM memories WHERE {clause}", flat
            ).fetchall()
        )
    return found


def write_one(
    db: Database, p: Prepared, vector: Vector | None, change: int, model: str
) -> WriteResult:
    """Insert `p` (with its vector, or none yet: deferred) or confirm the row holding its text;
    inside a write transaction whose change is `change`."""
    row = db.conn.execute(
        f"SELECT {READ} FROM memories WHERE scope = ? AND content_hash = ?",
        (p.scope, p.content_hash),
    ).fetchone()
    stamp = now()
    if row is not None:
        old = decode(row)
        confirmations = old.confirmations + 1
        status = lifecycle.on_confirm(old.kind, old.status, confirmations)
        db.conn.execute(
            "UPDATE memories SET confirmations = ?, last_seen_at = ?, updated_at = ?, "
            "status = ?, status_changed_at = ?, change_seq = ?, shared = ? WHERE id = ?",
            (
                confirmations,
                stamp,
                stamp,
                status,
                stamp if status != old.status else old.status_changed_at,
                change,
                int(old.shared or p.draft.shared),  # the same text shared again: shared
                old.id,
            ),
        )
        if status != old.status:
            db.log_transition(old.id, old.status, status, stamp, "confirmed")
        return WriteResult(read(db.conn, old.id), "confirmed", p.redactions)
    d = p.draft
    status = d.status or lifecycle.initial(d.kind)
    if status not in lifecycle.machine(d.kind).edges:
        raise InvalidMemory(
            f"{status!r} is not a state {lifecycle.article(d.kind)} {d.kind} can be in"
        )
    memory_id = uuid.uuid4().hex
    db.conn.execute(
        f"INSERT INTO memories ({COLUMNS}, embedding, embedding_model, change_seq, redaction) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)",
        (
            memory_id, d.kind, p.scope, p.content, p.summary, p.micro, stamp, stamp, stamp,
            status, stamp, d.confidence, d.importance, d.outcome, d.source, p.content_hash,
            d.superseded_by, json.dumps(d.tags), int(d.shared),
            blob(vector) if vector is not None else b"",
            model, change, p.redaction,
        ),
    )  # fmt: skip
    db.log_transition(memory_id, None, status, stamp, "created")
    return WriteResult(read(db.conn, memory_id), "created", p.redactions)


def set_status(db: Database, memory: Memory, target: str, reason: str, **extra: Any) -> None:
    """Move `memory` to `target` (and set the `extra` columns), logging the transition; inside
    a write transaction."""
    stamp = now()
    sets = ", ".join(f"{k} = ?" for k in extra)
    db.conn.execute(
        "UPDATE memories SET status = ?, status_changed_at = ?, updated_at = ?, "
        f"change_seq = ?{', ' + sets if sets else ''} WHERE id = ?",
        (target, stamp, stamp, db.next_change(), *extra.values(), memory.id),
    )
    if target != memory.status:
        db.log_transition(memory.id, memory.status, target, stamp, reason)
