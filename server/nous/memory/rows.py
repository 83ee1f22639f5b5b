"""A memory row as SQLite holds it: the record's columns, their decoding into a `Memory` (redacted
again on the way out unless sealed) and a vector's BLOB form. Shared by every reader of the
`memories` table.

A row's `redaction` (migration 9) is its seal: `<rules id>.<digest>`, the rule set that found
every text field of the row clean (`secrets.rules_id`, `secrets.clean`) and a digest of those
fields as they were found. A row whose seal matches the rules in force and its fields as they are
now is read back as it is; any other (written before the seal existed, written while a rule was
missing or under another rule set, or whose text anything changed since, an older Nous included)
is scrubbed as it is read. `<rules id>.-` records a row these rules found a secret in: scrubbed on
every read, and not scanned again by `reseal`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from nous.errors import UnknownMemory
from nous.memory.embedder import Vector
from nous.memory.model import Memory
from nous.text import secrets

COLUMNS = (
    "id, kind, scope, content, summary, micro, created_at, updated_at, last_seen_at, status, "
    "status_changed_at, confidence, importance, outcome, confirmations, activations, frequency, "
    "source, content_hash, superseded_by, tags, pinned, shared"
)
"""The record's columns, in `Memory`'s field order (without `origin`)."""
NAMES = tuple(c.strip() for c in COLUMNS.split(","))
READ = f"{COLUMNS}, redaction"
"""What `decode` reads: the record's columns and the row's seal."""
TEXT = ("content", "summary", "micro", "source", "tags")
"""The text fields a seal covers (`tags` as its stored JSON)."""
HOLDS_SECRET = "-"
"""A seal's digest when the rules found a secret in a field (or could not scan one in full)."""
EXCLUDED_STATUSES = ("inactive", "retired")
"""States a search never returns."""


def decode(row: Sequence[Any]) -> Memory:
    """The `Memory` of a row of `READ`."""
    # Rows were validated on the way in; constructing without validation is ~5x faster and
    # a context request builds a few hundred of these.
    *record, redaction = row
    data = dict(zip(NAMES, record, strict=True))
    if redaction is not None and redaction == seal(*(data[n] for n in TEXT)):
        # Found clean by the rules in force, and unchanged since: as it is (and the gate's
        # check of the renderings need not scan them again).
        secrets.vouch(data["summary"], data["micro"])
        data["tags"] = json.loads(data["tags"])
    else:
        # Redacted again on the way out (cached): a row written before a detection rule existed
        # never reaches a prompt, a recall or an expand with the secret in it. The summary and
        # micro renderings are derived from the content: scanned only when the content had one.
        content = data["content"]
        data["content"] = secrets.scrub(content)
        if data["content"] != content:
            data["summary"] = secrets.scrub(data["summary"])
            data["micro"] = secrets.scrub(data["micro"])
        data["source"] = secrets.scrub(data["source"])
        data["tags"] = [secrets.scrub(t) for t in json.loads(data["tags"])]
    data["pinned"] = bool(data["pinned"])
    data["shared"] = bool(data["shared"])
    return Memory.model_construct(**data)


def seal(content: str, summary: str, micro: str, source: str, tags: str) -> str:
    """The `redaction` of a row with these text fields (`tags` as stored, JSON), every one of
    them found clean by the rules in force; see the module's docstring."""
    rules = secrets.rules_id()
    digest = hashlib.blake2b(rules.encode(), digest_size=10)
    for text in (content, summary, micro, source, tags):
        digest.update(f"{len(text)}:".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))
    return f"{rules}.{digest.hexdigest()}"


def sealed(
    fields: tuple[str, str, str, str, str], scanned: Collection[str] = (), since: int | None = None
) -> str:
    """What a writer stores as `redaction` for a row's text `fields` (content, summary, micro,
    source and the tags as stored, JSON): their seal when the rules in force find every one
    clean, each scanned in full (no library timeout), else `<rules id>.-`. `scanned`: texts the
    caller's own `redact` already found nothing in, after `since` (`secrets.gaps()` before that
    scan); not scanned again."""
    content, summary, micro, source, tags = fields
    start = secrets.gaps() if since is None else since
    texts = [t for t in (content, summary, micro, source, *json.loads(tags)) if t not in scanned]
    if secrets.clean(texts) and secrets.gaps() == start:
        return seal(content, summary, micro, source, tags)
    return f"{secrets.rules_id()}.{HOLDS_SECRET}"


def read(conn: sqlite3.Connection, memory_id: str) -> Memory:
    """The row of `memory_id`; `UnknownMemory` when the file holds none."""
    row = conn.execute(f"SELECT {READ} FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        raise UnknownMemory(memory_id)
    return decode(row)


def blob(vector: Vector) -> bytes:
    """A vector as stored: little-endian float32."""
    return np.asarray(vector, dtype="<f4").tobytes()
