"""A memory row as SQLite holds it: the record's columns, their decoding into a `Memory` (redacted
again on the way out) and a vector's BLOB form. Shared by every reader of the `memories` table."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
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
EXCLUDED_STATUSES = ("inactive", "retired")
"""States a search never returns."""


def decode(row: Sequence[Any]) -> Memory:
    """The `Memory` of a row of `COLUMNS`."""
    # Rows were validated on the way in; constructing without validation is ~5x faster and
    # a context request builds a few hundred of these.
    data = dict(zip(NAMES, row, strict=True))
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


def read(conn: sqlite3.Connection, memory_id: str) -> Memory:
    """The row of `memory_id`; `UnknownMemory` when the file holds none."""
    row = conn.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        raise UnknownMemory(memory_id)
    return decode(row)


def blob(vector: Vector) -> bytes:
    """A vector as stored: little-endian float32."""
    return np.asarray(vector, dtype="<f4").tobytes()
