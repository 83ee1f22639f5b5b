"""The vector index saved beside its database (`<db>-vectors`), so a process opening a large store
reads one file instead of every row's vector.

At 100k memories the index load read 150 MB of blobs row by row (~0.4 s of a one-shot command's
second); the snapshot is the index's own int8 rows (~40 MB), read at once. It is a cache, never the
truth: it names its database (a random key in `counters`), the model and dimension, and the change
sequence it holds everything up to; a process loading it pulls the rows and tombstones after that
sequence from the database like any other change, and re-checks the rows that had no vector of its
model then. A snapshot of another database, model or a later sequence (a database restored from a
backup) is ignored. A purge deletes the file; a snapshot is written only after syncing, with the
rows deleted by then zeroed, so it never keeps a deleted memory's vector.
"""

from __future__ import annotations

import json
import logging
import os
import random
import sqlite3
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

MAGIC = b"NOUSVEC1"
KEY = "store_key"
MIN_ROWS = 5_000
"""Smaller indexes load from the table in a few tens of ms: no file for them."""
STALE_ROWS = 1_000
"""Rows changed since the file was read or written before closing rewrites it."""


def path_for(db: Path) -> Path:
    return db.with_name(db.name + "-vectors")


def store_key(conn: sqlite3.Connection) -> int:
    """The database's random key (made on first use; call inside a write transaction)."""
    conn.execute(
        "INSERT OR IGNORE INTO counters (name, value) VALUES (?, ?)",
        (KEY, random.getrandbits(62) + 1),
    )
    return int(conn.execute("SELECT value FROM counters WHERE name = ?", (KEY,)).fetchone()[0])


@dataclass
class Snapshot:
    change_seq: int
    ids: list[str]
    scopes: list[str]
    scope_code: npt.NDArray[np.int32]
    live: npt.NDArray[np.bool_]
    scale: npt.NDArray[np.float32]
    matrix: npt.NDArray[np.int8]
    missing: list[str]
    """Rows that had no vector of this model when it was written (to re-check)."""


def save(path: Path, key: int, model: str, snap: Snapshot) -> None:
    """Write atomically (a reader sees the old file or the new one); errors are logged only."""
    ids = "\n".join(snap.ids).encode()
    missing = "\n".join(snap.missing).encode()
    n, dimension = snap.matrix.shape
    parts = [
        np.ascontiguousarray(snap.scale, dtype="<f4").tobytes(),
        np.ascontiguousarray(snap.scope_code, dtype="<i4").tobytes(),
        np.ascontiguousarray(snap.live, dtype=np.uint8).tobytes(),
        np.ascontiguousarray(snap.matrix, dtype=np.int8).tobytes(),
        ids,
        missing,
    ]
    header = json.dumps(
        {
            "key": key,
            "model": model,
            "dimension": dimension,
            "rows": n,
            "changeSeq": snap.change_seq,
            "scopes": snap.scopes,
            "lengths": [len(p) for p in parts],
        }
    ).encode()
    written: str | None = None
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name, delete=False) as tmp:
            written = tmp.name
            tmp.write(MAGIC + struct.pack("<Q", len(header)) + header)
            for part in parts:
                tmp.write(part)
        os.replace(written, path)
    except OSError as exc:
        log.info("cannot write the vector snapshot %s: %s", path, exc)
        if written is not None:
            Path(written).unlink(missing_ok=True)


def load(path: Path, key: int, model: str, dimension: int, top: int) -> Snapshot | None:
    """The snapshot when it is this database's, model's and not ahead of it; else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        if data[:8] != MAGIC:
            raise ValueError("not a vector snapshot")
        (size,) = struct.unpack("<Q", data[8:16])
        head = json.loads(data[16 : 16 + size])
        if head["key"] != key or head["model"] != model or head["dimension"] != dimension:
            return None
        if head["changeSeq"] > top:
            return None  # the database went back (restored): its rows may not be these
        n = int(head["rows"])
        offset = 16 + size
        parts = []
        for length in head["lengths"]:
            parts.append(data[offset : offset + length])
            offset += length
        if offset != len(data):
            raise ValueError("truncated")
        scale, codes, live, matrix, ids, missing = parts
        out = Snapshot(
            change_seq=int(head["changeSeq"]),
            ids=ids.decode().split("\n") if n else [],
            scopes=list(head["scopes"]),
            scope_code=np.frombuffer(codes, dtype="<i4").astype(np.int32),
            live=np.frombuffer(live, dtype=np.uint8).astype(bool),
            scale=np.frombuffer(scale, dtype="<f4").astype(np.float32),
            matrix=np.frombuffer(matrix, dtype=np.int8).reshape(n, dimension),
            missing=missing.decode().split("\n") if missing else [],
        )
        if not (len(out.ids) == len(out.scope_code) == len(out.live) == len(out.scale) == n):
            raise ValueError("inconsistent row counts")
        return out
    except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError) as exc:
        log.info("ignoring the vector snapshot %s: %s", path, exc)
        return None


def drop(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("cannot remove the vector snapshot %s: %s", path, exc)
