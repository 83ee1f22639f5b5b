"""The team store (design §13): one project's shared memories on PostgreSQL with pgvector.

The only holder of PostgreSQL SQL. One `TeamStore` is bound to one project key and every
statement filters on it, so a project's queries never see another's rows, whatever ids they are
given. Vectors are searched through an HNSW index (`vector_cosine_ops`), words through a
`tsvector` column with a GIN index. Writes are upserts by the memory's id (a row written twice is
one row; an older version never overwrites a newer one), so a retried write is harmless.

Schema changes are numbered, append-only steps (`memory/team_schema.py`) recorded in
`nous_team_schema`, applied under an advisory lock so several processes connecting to a new
database at once apply each step once.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nous.errors import InvalidMemory, StoreError, UnknownMemory
from nous.memory import lifecycle, team_url
from nous.memory.embedder import Vector
from nous.memory.model import Memory, now
from nous.memory.team_schema import HNSW_INDEX, LOCK_KEY, migrations
from nous.text import secrets
from nous.text.words import split

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2
"""libpq's connect timeout (its minimum is 2 s): a connection attempt runs on the team threads,
never on the request path."""
STATEMENT_TIMEOUT_MS = 5000
EXCLUDED_STATUSES = ["inactive", "retired"]
FIELDS = (
    "id", "kind", "scope", "content", "summary", "micro", "created_at", "updated_at",
    "last_seen_at", "status", "status_changed_at", "confidence", "importance", "outcome",
    "confirmations", "activations", "frequency", "source", "content_hash", "superseded_by",
    "tags", "pinned",
)  # fmt: skip
"""The record's fields, in `Memory`'s order; the table adds project_key, embedding, model."""


class TeamStoreError(StoreError):
    """The team store cannot be reached or used (the message never holds a password)."""


@dataclass
class Hit:
    """One team memory a search found: the record (origin `team`), its vector, both signals."""

    memory: Memory
    vector: Vector
    cosine: float
    rank: float
    """Full-text rank (`ts_rank_cd`), 0 when the memory holds none of the words."""


@dataclass
class Row:
    """One memory as it is pushed: the record's fields, its vector and model."""

    fields: dict[str, Any]
    vector: Vector
    model: str


def tsquery(text: str, limit: int = 32) -> str:
    """An OR of the text's words, as `to_tsquery` reads it (words only: nothing to escape)."""
    words = list(dict.fromkeys(w for w in split(text) if len(w) > 1))
    return " | ".join(f"'{w}'" for w in words[:limit])


class TeamStore:
    """One project's rows on one PostgreSQL server; use from one thread."""

    def __init__(
        self, url: str, project_key: str, dimension: int, model: str, password: str | None = None
    ) -> None:
        try:
            import psycopg
            from pgvector.psycopg import register_vector
        except ImportError as exc:
            raise TeamStoreError(
                "the team store needs psycopg and pgvector: pip install 'nous-context[team]'"
            ) from exc
        self.project_key = project_key
        self.dimension = dimension
        self.model = model
        self.url = team_url.redact(url)
        self._ef = 0
        secret = team_url.password(url, password)
        try:
            extra: dict[str, Any] = {"password": secret} if secret else {}
            self._conn = psycopg.connect(
                url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                application_name="nous", options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
                **extra,
            )  # fmt: skip
        except psycopg.Error as exc:
            raise TeamStoreError(f"cannot reach the team store {self.url}: {_reason(exc)}") from exc
        try:
            self._migrate()
            register_vector(self._conn)
            self._check_dimension()
        except psycopg.Error as exc:
            self._conn.close()
            raise TeamStoreError(f"team store {self.url}: {_reason(exc)}") from exc

    def close(self) -> None:
        self._conn.close()

    @property
    def closed(self) -> bool:
        return bool(self._conn.closed) or bool(self._conn.broken)

    # -- schema ---------------------------------------------------------------------------------

    def _migrate(self) -> list[int]:
        done = []
        with self._conn.transaction():
            self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS nous_team_schema (version integer PRIMARY KEY, "
                "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            row = self._conn.execute("SELECT max(version) FROM nous_team_schema").fetchone()
            version = int(row[0] or 0) if row else 0
            for number, name, sql in migrations(self.dimension):
                if number <= version:
                    continue
                self._conn.execute(sql.encode())
                self._conn.execute(
                    "INSERT INTO nous_team_schema (version, name) VALUES (%s, %s)", (number, name)
                )
                done.append(number)
        return done

    def schema_version(self) -> int:
        row = self._conn.execute("SELECT max(version) FROM nous_team_schema").fetchone()
        return int(row[0] or 0) if row else 0

    def _check_dimension(self) -> None:
        row = self._conn.execute(
            "SELECT value FROM nous_team_meta WHERE name = 'dimension'"
        ).fetchone()
        if row is not None and int(row[0]) != self.dimension:
            raise TeamStoreError(
                f"team store {self.url} holds {row[0]}-d vectors; this Nous embeds "
                f"{self.dimension}-d ({self.model}): use the team's embedding model"
            )

    # -- writes ---------------------------------------------------------------------------------

    def put_many(self, rows: Sequence[Row]) -> int:
        """Upsert rows by id (one transaction): a newer version replaces an older one, never the
        other way round, and a row of another project is never touched. Returns rows sent."""
        if not rows:
            return 0
        columns = ", ".join(("project_key", *FIELDS, "embedding", "embedding_model"))
        marks = ", ".join(["%s"] * (len(FIELDS) + 3))
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in (*FIELDS[1:], "embedding",
                                                            "embedding_model"))  # fmt: skip
        sql = (
            f"INSERT INTO nous_memories ({columns}) VALUES ({marks}) ON CONFLICT (id) DO UPDATE "
            f"SET {updates}, pushed_at = now() WHERE nous_memories.project_key = "
            "EXCLUDED.project_key AND nous_memories.updated_at <= EXCLUDED.updated_at"
        )
        values = [
            (self.project_key, *(_wire(r.fields, f) for f in FIELDS),
             np.asarray(r.vector, dtype=np.float32), r.model)
            for r in rows
        ]  # fmt: skip
        with self._conn.transaction(), self._conn.cursor() as cur:
            cur.executemany(sql, values)
        return len(rows)

    def load(self, rows: Sequence[Row]) -> int:
        """Bulk-load new rows (a benchmark's or an import's set; ids must be new) in one
        transaction: the HNSW index is dropped, the rows COPied, the index built again (much
        faster than growing the graph row by row). Returns rows."""
        columns = ", ".join(("project_key", *FIELDS, "embedding", "embedding_model"))
        statement = f"COPY nous_memories ({columns}) FROM STDIN"
        with self._conn.transaction(), self._conn.cursor() as cur:
            cur.execute("SET LOCAL statement_timeout = 0")
            cur.execute("SET LOCAL maintenance_work_mem = '512MB'")
            cur.execute("DROP INDEX IF EXISTS nous_memories_embedding")
            with cur.copy(statement) as copy:
                for r in rows:
                    copy.write_row(
                        (self.project_key, *(_wire(r.fields, f) for f in FIELDS),
                         np.asarray(r.vector, dtype=np.float32), r.model)
                    )  # fmt: skip
            cur.execute(HNSW_INDEX)
        # fresh statistics: without them the planner took the project index and sorted every
        # row by distance instead of walking the HNSW graph (10x slower at 10k)
        self._conn.execute("ANALYZE nous_memories")
        return len(rows)

    def set_status(
        self, memory_id: str, status: str, at: str, superseded_by: str | None = None
    ) -> bool:
        """A lifecycle change made by someone who does not hold the row (forget, supersede)."""
        cur = self._conn.execute(
            "UPDATE nous_memories SET status = %s, status_changed_at = %s, updated_at = %s, "
            "superseded_by = coalesce(%s, superseded_by), pushed_at = now() "
            "WHERE id = %s AND project_key = %s AND updated_at <= %s",
            (status, at, at, superseded_by, memory_id, self.project_key, at),
        )
        return cur.rowcount > 0

    def delete(self, ids: Sequence[str]) -> int:
        cur = self._conn.execute(
            "DELETE FROM nous_memories WHERE id = ANY(%s) AND project_key = %s",
            (list(ids), self.project_key),
        )
        return cur.rowcount

    # -- reads ----------------------------------------------------------------------------------

    def search(
        self, query: str, vector: Vector, k: int, scopes: Sequence[str] | None = None
    ) -> list[Hit]:
        """The vector top-`k` and the full-text top-`k` of this project's live rows (in
        `scopes` when given), each with both signals and its record: one statement, one round
        trip, rows in binary (vectors parse ~7x faster than from text)."""
        where, args = self._where(scopes)
        q = np.asarray(vector, dtype=np.float32)
        words = tsquery(query)
        self._set_ef(k)
        found = self._conn.execute(
            f"WITH dense AS (SELECT id FROM nous_memories WHERE {where} "
            "AND embedding_model = %s ORDER BY embedding <=> %s LIMIT %s), "
            "lexical AS (SELECT id, ts_rank_cd(tsv, q) AS rank FROM nous_memories, "
            f"to_tsquery('english', %s) q WHERE %s AND tsv @@ q AND {where} "
            "ORDER BY rank DESC LIMIT %s) "
            f"SELECT {', '.join('m.' + f for f in FIELDS)}, m.embedding, lexical.rank "
            "FROM nous_memories m LEFT JOIN lexical ON lexical.id = m.id "
            "WHERE m.project_key = %s AND m.id IN "
            "(SELECT id FROM dense UNION SELECT id FROM lexical)",
            (*args, self.model, q, k, words or "x", bool(words), *args, k, self.project_key),
            binary=True,
        ).fetchall()
        hits = []
        for row in found:
            row_vector = _vector(row[-2])
            rank = float(row[-1]) if row[-1] is not None else 0.0
            hits.append(Hit(_memory(row[:-2]), row_vector, float(row_vector @ q), rank))
        return hits

    def _set_ef(self, k: int) -> None:
        """HNSW's candidate list for a top-k (session-wide: no transaction per search)."""
        ef = _ef(k)
        if ef != self._ef:
            self._conn.execute(f"SET hnsw.ef_search = {ef}")
            self._ef = ef

    def warm(self) -> None:
        """Load what a first search would (the vector and text-search code in the server
        process, the driver's adapters), so the first real one is as fast as the rest."""
        self.search("warm", np.zeros(self.dimension, dtype=np.float32), 1)

    def rows(self, ids: Sequence[str]) -> dict[str, tuple[Memory, Vector]]:
        """This project's rows among `ids` with their vectors (another project's are as if
        unknown), in one statement."""
        return self._rows(list(ids))

    # -- the verbs of `Store` a shared store offers (`interface.SharedStore`) -------------------

    def get(self, memory_id: str) -> Memory:
        found = self._rows([memory_id])
        if memory_id not in found:
            raise UnknownMemory(memory_id)
        return found[memory_id][0]

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        return {i: row[0] for i, row in self._rows(list(ids)).items()}

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        return {i: row[1] for i, row in self._rows(list(ids)).items()}

    def vector_search(
        self, query: Vector, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top-k (id, cosine) of this project's live rows (HNSW)."""
        where, args = self._where(scopes)
        self._set_ef(k)
        q = np.asarray(query, dtype=np.float32)
        found = self._conn.execute(
            f"SELECT id, 1 - (embedding <=> %s) FROM nous_memories WHERE {where} "
            "AND embedding_model = %s ORDER BY embedding <=> %s LIMIT %s",
            (q, *args, self.model, q, k),
        ).fetchall()
        return [(r[0], float(r[1])) for r in found]

    def text_search(
        self, query: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top-k (id, `ts_rank_cd`, higher is better) over an OR of the query's words (GIN)."""
        words = tsquery(query)
        if not words or k <= 0:
            return []
        where, args = self._where(scopes)
        found = self._conn.execute(
            "SELECT id, ts_rank_cd(tsv, q) AS rank FROM nous_memories, "
            f"to_tsquery('english', %s) q WHERE tsv @@ q AND {where} ORDER BY rank DESC LIMIT %s",
            (words, *args, k),
        ).fetchall()
        return [(r[0], float(r[1])) for r in found]

    def forget(self, memory_id: str, purge: bool = False) -> Memory:
        """Mark a team row forgotten (its kind's `on_forget` state), or delete it (`purge`;
        never a decision)."""
        memory = self.get(memory_id)
        if purge:
            if memory.kind == "decision":
                raise InvalidMemory("decisions are never deleted; forget marks them inactive")
            self.delete([memory_id])
            return memory
        self.set_status(memory_id, lifecycle.on_forget(memory.kind, memory.status), now())
        return self.get(memory_id)

    def supersede(self, old_id: str, new_id: str) -> Memory:
        if old_id == new_id:
            raise InvalidMemory("a memory cannot supersede itself")
        old = self.get(old_id)
        target = lifecycle.on_supersede(old.kind, old.status)
        self.set_status(old_id, target, now(), superseded_by=new_id)
        return self.get(old_id)

    def _where(self, scopes: Sequence[str] | None) -> tuple[str, list[Any]]:
        where = "project_key = %s AND status <> ALL(%s)"
        args: list[Any] = [self.project_key, EXCLUDED_STATUSES]
        if scopes is not None:
            where += " AND scope = ANY(%s)"
            args.append(list(scopes))
        return where, args

    def _rows(self, ids: list[str]) -> dict[str, tuple[Memory, Vector]]:
        if not ids:
            return {}
        out: dict[str, tuple[Memory, Vector]] = {}
        for row in self._conn.execute(
            f"SELECT {', '.join(FIELDS)}, embedding FROM nous_memories "
            "WHERE id = ANY(%s) AND project_key = %s",
            (ids, self.project_key),
            binary=True,  # vectors as binary: parsing their text form cost ~7x more
        ):
            vector = _vector(row[-1])
            memory = _memory(row[:-1])
            out[memory.id] = (memory, vector)
        return out

    def page(
        self, offset: int, limit: int, query: str | None = None, statuses: Sequence[str] = ()
    ) -> tuple[list[Memory], int]:
        """One page of this project's rows, last updated first (the memory browser's team
        list): `query` words must all occur; without `statuses`, forgotten rows are left out."""
        where = (
            "project_key = %s AND status = ANY(%s)"
            if statuses
            else ("project_key = %s AND status <> ALL(%s)")
        )
        args: list[Any] = [self.project_key, list(statuses) or ["inactive"]]
        if query and query.strip():
            where += " AND tsv @@ plainto_tsquery('english', %s)"
            args.append(query)
        row = self._conn.execute(
            f"SELECT count(*) FROM nous_memories WHERE {where}", args
        ).fetchone()
        total = int(row[0]) if row else 0
        rows = self._conn.execute(
            f"SELECT {', '.join(FIELDS)} FROM nous_memories WHERE {where} "
            "ORDER BY updated_at DESC, id LIMIT %s OFFSET %s",
            (*args, limit, offset),
        ).fetchall()
        return [_memory(r) for r in rows], total

    def count(self) -> int:
        """This project's rows, whatever their state."""
        row = self._conn.execute(
            "SELECT count(*) FROM nous_memories WHERE project_key = %s", (self.project_key,)
        ).fetchone()
        return int(row[0]) if row else 0

    def ids(self) -> list[str]:
        """Every id of this project's rows (tests and the benchmark check what arrived)."""
        rows = self._conn.execute(
            "SELECT id FROM nous_memories WHERE project_key = %s ORDER BY id", (self.project_key,)
        ).fetchall()
        return [r[0] for r in rows]


def _ef(k: int) -> int:
    """HNSW's candidate list: it filters (project, scope, status) after the scan, so it looks
    wider than k for the project's rows to fill it."""
    return max(100, min(1000, 2 * k))


def create_database(url: str, name: str) -> None:
    """Create an empty database on the server of `url` (what a test or a benchmark starts
    from; a team's administrator does this once)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _vector(stored: Any) -> Vector:
    """pgvector's `Vector` (0.4+) or an array (older adapters) as a read-only float32 array."""
    vector = np.asarray(
        stored.to_numpy() if hasattr(stored, "to_numpy") else stored, dtype=np.float32
    )
    vector.setflags(write=False)
    return vector


def _wire(fields: dict[str, Any], name: str) -> Any:
    value = fields[name]
    if name == "tags":
        return json.dumps(value)
    if name == "pinned":
        return bool(value)
    return value


def _memory(row: Sequence[Any]) -> Memory:
    """A team row as a record: redacted again on the way in (another machine's rule set may have
    been older), marked as coming from the team."""
    data = dict(zip(FIELDS, row, strict=True))
    content = data["content"]
    data["content"] = secrets.scrub(content)
    if data["content"] != content:  # the renderings are drawn from the content
        data["summary"] = secrets.scrub(data["summary"])
        data["micro"] = secrets.scrub(data["micro"])
    data["source"] = secrets.scrub(data["source"])
    data["tags"] = [secrets.scrub(t) for t in json.loads(data["tags"])]
    data["pinned"] = bool(data["pinned"])
    return Memory.model_construct(**data, shared=True, origin="team")


def _reason(exc: BaseException) -> str:
    """The driver's message, first line, without anything that looks like a password."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return re.sub(r"(password=)\S+", r"\1***", secrets.scrub(text))
