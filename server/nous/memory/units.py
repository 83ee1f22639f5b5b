"""Unit vectors: one embedding per unit (sentence, list item, code line, table row, heading) of a
record harvested from a document, so the gate can see that one line of a long section answers a
question the section as a whole is far from (design §2.5, the `ucos` feature).

A section embedded whole averages its facts: "Keep PRs under 700 lines of code" inside a
"Simplicity Rules" section scores a cosine of 0.21 with "Is there a size limit for pull
requests?". Its best unit says it alone. Only records from files (`file:` sources) get unit
vectors: a harvested section holds many facts; a remembered memory or a chat turn is one.

Derived data, kept beside the row in `unit_vectors` (migration 9) with the content hash and the
model it was computed from: an edit or a model change makes it stale (read as absent, computed
again), a deleted memory takes it along (a trigger). A record of one unit stores an empty blob
(its unit cosine is its cosine). Computed after the row's own vector: inline by a store that
embeds inline, on the backlog's thread by a deferring one (`memory.backlog`), and for rows
written before this table existed the first time a store opens the file.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Sequence

import numpy as np

from nous.memory.embedder import Embedder, Matrix
from nous.text.markdown import units

log = logging.getLogger(__name__)

MOST = 60
"""Units embedded per record (a long section's first ones; its later ones rarely answer alone)."""
BATCH = 16


def texts(content: str) -> list[str]:
    """The texts of `content`'s units that get a vector: each with its lead-in ("Agents MUST
    NOT:" before an item), in document order, at most MOST."""
    return [u.said for u in units(content)][:MOST]


def pending(conn: sqlite3.Connection, model: str, ids: Sequence[str] | None = None) -> list[str]:
    """Ids of file records (of `ids`, or all) whose unit vectors are missing or stale."""
    sql = (
        "SELECT m.id FROM memories m LEFT JOIN unit_vectors u ON u.memory_id = m.id "
        "WHERE m.source LIKE 'file:%' AND (u.memory_id IS NULL OR u.content_hash != "
        "m.content_hash OR u.model != ?)"
    )
    if not present(conn):
        return []
    if ids is None:
        return [r[0] for r in conn.execute(sql, (model,))]
    out: list[str] = []
    for start in range(0, len(ids), 400):
        chunk = list(ids[start : start + 400])
        marks = ",".join("?" * len(chunk))
        out += [r[0] for r in conn.execute(f"{sql} AND m.id IN ({marks})", (model, *chunk))]
    return out


def fill(conn: sqlite3.Connection, embedder: Embedder, ids: Iterable[str]) -> int:
    """Compute and store the unit vectors of `ids` that are missing or stale; the number of
    records given vectors. One model call for all their units, one short transaction."""
    todo = pending(conn, embedder.name, list(ids))
    if not todo:
        return 0
    rows: list[tuple[str, str, list[str]]] = []
    for start in range(0, len(todo), 400):
        chunk = todo[start : start + 400]
        marks = ",".join("?" * len(chunk))
        for memory_id, content, content_hash in conn.execute(
            f"SELECT id, content, content_hash FROM memories WHERE id IN ({marks})", chunk
        ):
            found = texts(content)
            rows.append((memory_id, content_hash, found if len(found) > 1 else []))
    wanted = list(dict.fromkeys(t for _, _, found in rows for t in found))
    vectors = dict(zip(wanted, embedder.embed_many(wanted, batch_size=BATCH), strict=True))
    conn.execute("BEGIN IMMEDIATE")
    try:
        for memory_id, content_hash, found in rows:
            blob = np.stack([vectors[t] for t in found]).astype("<f4").tobytes() if found else b""
            conn.execute(
                "INSERT OR REPLACE INTO unit_vectors (memory_id, content_hash, model, vectors) "
                "SELECT id, ?, ?, ? FROM memories WHERE id = ? AND content_hash = ?",
                (content_hash, embedder.name, blob, memory_id, content_hash),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(rows)


def read(
    conn: sqlite3.Connection, ids: Sequence[str], model: str, dimension: int
) -> dict[str, Matrix]:
    """{id: its unit vectors (units × dimension)} for the records of `ids` that have current
    ones of more than one unit. The file has the table (`present`)."""
    out: dict[str, Matrix] = {}
    if not ids:
        return out
    for start in range(0, len(ids), 400):
        chunk = list(ids[start : start + 400])
        marks = ",".join("?" * len(chunk))
        for memory_id, blob in conn.execute(
            "SELECT u.memory_id, u.vectors FROM unit_vectors u JOIN memories m "
            "ON m.id = u.memory_id AND m.content_hash = u.content_hash "
            f"WHERE u.model = ? AND length(u.vectors) > 0 AND u.memory_id IN ({marks})",
            (model, *chunk),
        ):
            if len(blob) % (4 * dimension) == 0:
                out[memory_id] = np.frombuffer(blob, dtype="<f4").reshape(-1, dimension)
    return out


def present(conn: sqlite3.Connection) -> bool:
    """The file has the table (a store opened by a version before migration 9 has not)."""
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'unit_vectors'"
    ).fetchone()
    return found is not None
