"""The memory store: one SQLite file (WAL) with the memories, their full-text index and vectors.

Every write is one short `BEGIN IMMEDIATE` transaction (embedding and secret scanning happen
before it opens), so several processes can share a file without lost or duplicated rows. The same
normalised text written twice in one scope is a confirmation of the first row, never a second one;
what a chat session said (`memory.turns`) is deduplicated within that session only, so each session
keeps its own turns and notes and forgetting one session never takes another's.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import platformdirs

from nous.errors import InvalidMemory, StoreError, UnknownMemory
from nous.memory import fts, lifecycle, migrations, renderings, snapshot, turns
from nous.memory import scope as scopes
from nous.memory.backlog import Backlog
from nous.memory.embedder import Embedder, Vector
from nous.memory.interface import Candidates
from nous.memory.metrics import MetricRows
from nous.memory.model import (
    OUTCOMES,
    Draft,
    Memory,
    check_kind,
    check_unit,
    now,
)
from nous.memory.projects import ProjectRows
from nous.memory.sources import SourceRows, prefix_range
from nous.memory.usage import HALF_LIFE_DAYS, UsageRows
from nous.memory.vectors import VectorIndex
from nous.text import secrets
from nous.text.secrets import Redaction
from nous.text.tokens import TokenCounter

log = logging.getLogger(__name__)

CACHE_KIB = 32 * 1024
BUSY_TIMEOUT_MS = 10_000
JOURNAL_LIMIT = 64 * 1024 * 1024
CHECKPOINT_AT = 16 * 1024 * 1024
"""WAL size past which a writer runs a TRUNCATE checkpoint: under a steady stream of readers the
automatic (passive) checkpoints never let the WAL restart, and it grew past 64 MB in 15 s."""
CHECKPOINT_WAIT_MS = 1000
EXCLUDED_STATUSES = ("inactive", "retired")
_COLUMNS = (
    "id, kind, scope, content, summary, micro, created_at, updated_at, last_seen_at, status, "
    "status_changed_at, confidence, importance, outcome, confirmations, activations, frequency, "
    "source, content_hash, superseded_by, tags, pinned, shared"
)


def default_path() -> Path:
    """`<user data dir>/nous/memory.db`: the database when no setting names one (`--db`,
    `nous.db`, `NOUS_DB`: `Settings.db`); never inside a workspace."""
    return Path(platformdirs.user_data_dir("nous")) / "memory.db"


@dataclass
class WriteResult:
    """What a remember did: the row, `created` or `confirmed`, and the redactions made."""

    memory: Memory
    status: str
    redactions: list[Redaction] = field(default_factory=list)


@dataclass
class _Prepared:
    draft: Draft
    scope: str
    content: str
    content_hash: str
    summary: str
    micro: str
    redactions: list[Redaction]


class MemoryStore(UsageRows, SourceRows, ProjectRows, MetricRows):
    """All reads and writes of one memory database; use from one thread.

    The only holder of the connection and of SQL: callers use its verbs (this class and the
    row mixins it is made of: sessions and usage, harvest sources, project claims, the
    metrics' reads) and pass
    the vectors they already computed. `nous.memory.interface.Store` is its shape.
    """

    def __init__(
        self,
        path: Path | str,
        embedder: Embedder,
        counter: TokenCounter,
        defer_vectors: bool = False,
    ) -> None:
        """`defer_vectors`: a write is acknowledged once its row and full-text entry are
        committed and its vector is computed in the background (`memory.backlog`; searchable by
        text at once, by vector when its batch lands; `wait_embedded` waits for it). Such a
        store also embeds the rows it finds without a vector when it opens (a writer that
        stopped before their vector landed). Not for `:memory:` (one connection only)."""
        self.path = Path(path)
        self._embedder = embedder
        self.counter = counter
        try:
            if str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
            )
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_LIMIT}")
            # The default 2 MB page cache re-reads the hot index pages on every request.
            self._conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            with self.write():
                migrations.apply(self._conn, now())
                key = snapshot.store_key(self._conn)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open memory database {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create memory database {path}: {exc.strerror}") from exc
        self._saved = None if str(path) == ":memory:" else snapshot.path_for(self.path)
        self._index = VectorIndex(embedder.dimension, embedder.name, self._saved, key)
        self._df_cache: dict[str, int] = {}
        self._df_seen = -1
        self._df_total = 0
        self._always_on: dict[tuple[object, ...], list[str]] = {}
        self._always_on_seen = -1
        self._early: dict[str, Vector] = {}
        """Vectors of pending rows computed for a search before the backlog stored theirs."""
        self._backlog = (
            Backlog(self.path, embedder) if defer_vectors and str(path) != ":memory:" else None
        )
        self.team: TeamLink | None = None
        """The team store (design §13), attached by the engine when one is configured: its search
        adds candidates, and the team memories it found answer `get_many` and `vectors` too."""
        self._index.sync(self._conn)
        self._report_other_models()
        if self._backlog is not None:
            self._backlog.add(self._index.pending)

    def _report_other_models(self) -> None:
        """Say so when the file holds vectors another model made (the `embedding_model`
        setting changed, or another version wrote them): they are left out of vector search
        and, in a deferring store, re-embedded in the background; found by text meanwhile.
        What the index's first load found: no extra read of the table."""
        found = self._index.other_models
        if not found:
            return
        models = ", ".join(f"{n} by {model}" for model, n in found.most_common())
        then = (
            "re-embedding them in the background"
            if self._backlog is not None
            else "a daemon (which defers vectors) re-embeds them"
        )
        log.warning(
            "%s: %d memories have vectors of another model (%s), not of %s: %s; they are "
            "found by text meanwhile",
            self.path, found.total(), models, self._embedder.name, then,
        )  # fmt: skip

    def close(self) -> None:
        """Close. Deferred vectors still pending are finished by the backlog's own thread and
        connection in the background, or, if the process ends first, by the next deferring
        store to open the file; `wait_embedded` first to have them all before returning."""
        if self.team is not None:
            self.team.close()
        if self._backlog is not None:
            self._backlog.close()
        self.save_snapshot()
        self._conn.close()

    def save_snapshot(self) -> None:
        """Keep a large vector index beside the file for the next process to open
        (`memory.snapshot`; only when it moved on since the last one). Never raises."""
        try:
            self._index.save(self._conn)
        except sqlite3.Error as exc:
            log.info("vector snapshot not written: %s", exc)

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """Block until the vectors this store deferred are stored and in its index (at once
        when it defers none); False on timeout. A harness that searches right after writing
        calls it."""
        if self._backlog is None:
            return True
        done = self._backlog.wait(timeout)
        self._index.sync(self._conn)
        return done

    @contextmanager
    def vectors_held(self) -> Iterator[None]:
        """Deferred vectors wait until the block ends (`Backlog.held`); nothing when the store
        embeds as it writes."""
        if self._backlog is None:
            yield
            return
        with self._backlog.held():
            yield

    def pending_vectors(self) -> int:
        """Rows this store's backlog has yet to embed."""
        return 0 if self._backlog is None else len(self._backlog)

    # -- the model ------------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        return self._embedder.name

    @property
    def dimension(self) -> int:
        return self._embedder.dimension

    def embed(self, text: str) -> Vector:
        """The vector of one text with the store's model (what a caller searches with)."""
        return self._embedder.embed(text)

    def embed_many(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embedder.embed_many(texts)

    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One model call, no cache (what a benchmark times)."""
        return self._embedder.embed_batch(texts)

    # -- transactions ---------------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One `BEGIN IMMEDIATE` transaction; rolled back on any error."""
        for attempt in range(5):
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == 4:
                    raise StoreError(f"memory database is busy: {exc}") from exc
                time.sleep(0.05 * (attempt + 1))
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def _next_change(self) -> int:
        row = self._conn.execute(
            "UPDATE counters SET value = value + 1 WHERE name = 'change_seq' RETURNING value"
        ).fetchone()
        return int(row[0])

    def _after_write(self) -> None:
        self._index.pull(self._conn)
        self._bound_wal()
        if self.team is not None:
            self.team.poke()  # a shared row's change is in the outbox: push it

    def _bound_wal(self) -> None:
        """Checkpoint and truncate the WAL once it passes `CHECKPOINT_AT`, waiting at most
        `CHECKPOINT_WAIT_MS` for other connections' transactions (a busy checkpoint is retried
        after the next write)."""
        try:
            if Path(f"{self.path}-wal").stat().st_size < CHECKPOINT_AT:
                return
        except OSError:
            return
        self.checkpoint(wait_ms=CHECKPOINT_WAIT_MS)

    def checkpoint(self, wait_ms: int = CHECKPOINT_WAIT_MS) -> bool:
        """A TRUNCATE checkpoint (call when idle too); False when other connections kept it
        from completing within `wait_ms`."""
        self._conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
        try:
            busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.OperationalError as exc:
            log.info("checkpoint skipped: %s", exc)
            return False
        finally:
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return not busy

    # -- writing --------------------------------------------------------------------------------

    def _prepare(self, draft: Draft) -> _Prepared:
        draft = draft.validated()
        clean, found = secrets.redact(renderings.normalise(draft.content))
        tags = []
        for tag in draft.tags:  # every stored field, not only the content
            clean_tag, in_tag = secrets.redact(tag)
            tags.append(clean_tag)
            found += in_tag
        source, in_source = secrets.redact(draft.source)
        found += in_source
        draft = draft.model_copy(update={"tags": sorted(set(tags)), "source": source})
        args = (draft.outcome, draft.confidence, self.counter)
        return _Prepared(
            draft=draft,
            scope=draft.scope or scopes.UNIVERSAL,
            content=clean,
            content_hash=renderings.content_hash(clean, turns.session_of(source)),
            summary=renderings.summary(draft.kind, clean, *args),
            micro=renderings.micro(draft.kind, clean, *args),
            redactions=found,
        )

    def remember(self, draft: Draft, embedded: tuple[str, Vector] | None = None) -> WriteResult:
        """Store one memory, or confirm the existing one with the same text in the same scope.
        `embedded` is (text, its vector) the caller already has: used when the stored content
        is exactly that text (nothing redacted, nothing normalised away)."""
        return self.remember_many([draft], embedded)[0]

    def remember_many(
        self, drafts: Sequence[Draft], embedded: tuple[str, Vector] | None = None
    ) -> list[WriteResult]:
        """Store a batch: embedded together first, then written in one short transaction."""
        prepared = [self._prepare(d) for d in drafts]
        known = self._existing_keys([(p.scope, p.content_hash) for p in prepared])
        todo = [p for p in prepared if (p.scope, p.content_hash) not in known]
        vectors: dict[int, Vector] = {}
        if embedded is not None:
            vectors = {id(p): embedded[1] for p in todo if p.content == embedded[0]}
        rest = [p for p in todo if id(p) not in vectors]
        if self._backlog is not None:
            rest = []  # written without a vector: the backlog computes it after the commit
        vectors.update(
            zip(
                [id(p) for p in rest],
                self._embedder.embed_many([p.content for p in rest]),
                strict=True,
            )
        )
        results = []
        deferred: list[str] = []
        with self.write():
            change = self._next_change()
            for p in prepared:
                vector = vectors.get(id(p))
                if vector is None and self._backlog is None and not self._exists(p):
                    vector = self._embedder.embed(p.content)  # purged since we looked: rare
                results.append(self._write_one(p, vector, change))
                if vector is None and results[-1].status == "created":
                    deferred.append(results[-1].memory.id)
        self._after_write()
        if self._backlog is not None:
            # this write's rows only: another writer's pending rows are its own backlog's
            # (or, if it stopped, the next deferring store's to open the file)
            self._backlog.add(deferred)
        return results

    def _existing_keys(self, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        for start in range(0, len(keys), 400):
            chunk = keys[start : start + 400]
            clause = " OR ".join("(scope = ? AND content_hash = ?)" for _ in chunk)
            flat = [v for pair in chunk for v in pair]
            found |= set(
                self._conn.execute(
                    f"SELECT scope, content_hash FROM memories WHERE {clause}", flat
                ).fetchall()
            )
        return found

    def _exists(self, p: _Prepared) -> bool:
        return bool(self._existing_keys([(p.scope, p.content_hash)]))

    def _write_one(self, p: _Prepared, vector: Vector | None, change: int) -> WriteResult:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE scope = ? AND content_hash = ?",
            (p.scope, p.content_hash),
        ).fetchone()
        stamp = now()
        if row is not None:
            old = _memory(row)
            confirmations = old.confirmations + 1
            status = lifecycle.on_confirm(old.kind, old.status, confirmations)
            self._conn.execute(
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
                self._log_transition(old.id, old.status, status, stamp, "confirmed")
            return WriteResult(self.get(old.id), "confirmed", p.redactions)
        d = p.draft
        status = d.status or lifecycle.initial(d.kind)
        if status not in lifecycle.machine(d.kind).edges:
            raise InvalidMemory(
                f"{status!r} is not a state {lifecycle.article(d.kind)} {d.kind} can be in"
            )
        memory_id = uuid.uuid4().hex
        self._conn.execute(
            f"INSERT INTO memories ({_COLUMNS}, embedding, embedding_model, change_seq) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
            (
                memory_id, d.kind, p.scope, p.content, p.summary, p.micro, stamp, stamp, stamp,
                status, stamp, d.confidence, d.importance, d.outcome, d.source, p.content_hash,
                d.superseded_by, json.dumps(d.tags), int(d.shared),
                _blob(vector) if vector is not None else b"",
                self._embedder.name, change,
            ),
        )  # fmt: skip
        self._log_transition(memory_id, None, status, stamp, "created")
        return WriteResult(self.get(memory_id), "created", p.redactions)

    def _log_transition(
        self, memory_id: str, old: str | None, new: str, at: str, reason: str
    ) -> None:
        self._conn.execute(
            "INSERT INTO transitions (memory_id, from_status, to_status, at, reason) "
            "VALUES (?, ?, ?, ?, ?)",
            (memory_id, old, new, at, reason),
        )

    def transition(self, memory_id: str, target: str, reason: str) -> Memory:
        """Move a memory to `target` if its kind allows it, else `InvalidTransition`. One that
        is already there (another process moved it first: two windows judging the same reply)
        stays, unchanged."""
        with self.write():
            memory = self.get(memory_id)
            if memory.status == target:
                return memory
            lifecycle.check(memory.kind, memory.status, target)
            self._set_status(memory, target, reason)
        self._after_write()
        return self.get(memory_id)

    def _set_status(self, memory: Memory, target: str, reason: str, **extra: Any) -> None:
        stamp = now()
        sets = ", ".join(f"{k} = ?" for k in extra)
        self._conn.execute(
            "UPDATE memories SET status = ?, status_changed_at = ?, updated_at = ?, "
            f"change_seq = ?{', ' + sets if sets else ''} WHERE id = ?",
            (target, stamp, stamp, self._next_change(), *extra.values(), memory.id),
        )
        if target != memory.status:
            self._log_transition(memory.id, memory.status, target, stamp, reason)

    def forget(self, memory_id: str, purge: bool = False) -> Memory:
        """Mark inactive (kept, excluded from context); `purge` deletes the row for good."""
        with self.write():
            memory = self.get(memory_id)
            if purge:
                if memory.kind == "decision":
                    raise InvalidMemory("decisions are never deleted; forget marks them inactive")
                self._next_change()
                self._conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
                self._conn.execute("DELETE FROM usage WHERE memory_id = ?", (memory_id,))
                if self._saved is not None:  # it may hold this row's vector: made again later
                    snapshot.drop(self._saved)
            else:
                target = lifecycle.on_forget(memory.kind, memory.status)
                self._set_status(memory, target, "forgotten")
        self._after_write()
        return memory if purge else self.get(memory_id)

    def supersede(self, old_id: str, new_id: str) -> Memory:
        """Mark `old_id` superseded by `new_id` (still searchable, ranked lower)."""
        if old_id == new_id:
            raise InvalidMemory("a memory cannot supersede itself")
        if new_id not in self.get_many([new_id]):  # a team memory a search found counts
            raise UnknownMemory(new_id)
        with self.write():
            old = self.get(old_id)
            target = lifecycle.on_supersede(old.kind, old.status)
            self._set_status(old, target, f"superseded by {new_id}", superseded_by=new_id)
        self._after_write()
        return self.get(old_id)

    def link_successor(self, old_id: str, new_id: str) -> None:
        """Record that `new_id` replaces `old_id` (the old one's state is set separately)."""
        with self.write():
            self._conn.execute(
                "UPDATE memories SET superseded_by = ?, change_seq = ? WHERE id = ?",
                (new_id, self._next_change(), old_id),
            )
        self._after_write()

    def set_outcome(self, memory_id: str, outcome: str) -> Memory:
        """Log a decision's or procedure's outcome (a decision becomes `reviewed`)."""
        if outcome not in OUTCOMES:
            raise InvalidMemory(f"invalid outcome {outcome!r}: use one of {', '.join(OUTCOMES)}")
        with self.write():
            memory = self.get(memory_id)
            target = lifecycle.on_outcome(memory.kind, memory.status, outcome)
            args = (outcome, memory.confidence, self.counter)
            self._set_status(
                memory,
                target,
                f"outcome {outcome}",
                outcome=outcome,
                summary=renderings.summary(memory.kind, memory.content, *args),
                micro=renderings.micro(memory.kind, memory.content, *args),
            )
        self._after_write()
        return self.get(memory_id)

    # -- reading --------------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            raise UnknownMemory(memory_id)
        return _memory(row)

    def ids_starting(
        self, prefix: str, project_scope: str, limit: int = 10
    ) -> list[tuple[str, str, str]]:
        """(id, kind, micro) of the memories whose id starts with `prefix` that `project_scope`
        may see (its own, any language's, universal), at most `limit`."""
        escaped = prefix.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._conn.execute(
            "SELECT id, kind, micro FROM memories WHERE id LIKE ? ESCAPE '\\' "
            "AND (scope = ? OR scope NOT LIKE 'project:%') ORDER BY id LIMIT ?",
            (escaped + "%", project_scope, limit),
        ).fetchall()
        return [(str(i), str(kind), str(micro)) for i, kind, micro in rows]

    def local(self, memory_id: str) -> bool:
        """Whether this file holds the memory (a team memory found by a search does not)."""
        row = self._conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return row is not None

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        out: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for row in self._conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE id IN ({marks})", chunk
            ):
                memory = _memory(row)
                out[memory.id] = memory
        if self.team is not None and len(out) < len(ids):
            out.update(self.team.found([i for i in ids if i not in out]))
        return out

    def vector_search(
        self, query: Vector, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top-k (id, cosine) among memories not excluded by their lifecycle state."""
        self._index.sync(self._conn)
        return self._index.search(query, k, scopes)

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of `ids` (those it has), from the in-process index; for rows whose
        vector is still pending, the first `ON_DEMAND` of them (in the order asked: a search asks
        best text match first) are embedded now and kept in memory until theirs is stored, so
        a memory found by text before its vector exists is scored like any other."""
        out = self._index.vectors(ids)
        if len(out) < len(ids):
            out.update(self._early_vectors([i for i in ids if i not in out]))
        if self.team is not None and len(out) < len(ids):
            out.update(self.team.found_vectors([i for i in ids if i not in out]))
        return out

    def candidates(
        self, ids: Sequence[str], half_life: float = HALF_LIFE_DAYS, vectors: bool = True
    ) -> Candidates:
        """The records of `ids` with their vectors (`vectors`: unless not wanted) and their
        usage (decayed over `half_life` days): what a request scores its candidates on."""
        records = self.get_many(ids)
        found = list(records)
        held = self.vectors(found) if vectors else {}
        return Candidates(records, held, self.usage_stats(found, half_life))

    # -- the team outbox (design §13): what waits to be pushed to the team store -------------------

    def queue_team(self, memory_id: str, scope: str, op: str, payload: dict[str, Any]) -> None:
        """Queue a change to a team row this file does not hold (forget or supersede a memory
        someone else shared). A shared row of this file queues its own changes (triggers)."""
        with self.write():
            self._conn.execute(
                "INSERT INTO team_outbox (memory_id, scope, op, payload) VALUES (?, ?, ?, ?)",
                (memory_id, scope, op, json.dumps(payload)),
            )
        self._after_write()

    def team_queued(self, scope: str) -> int:
        """Changes of `scope` waiting to be pushed to the team store."""
        row = self._conn.execute(
            "SELECT count(*) FROM team_outbox WHERE scope = ?", (scope,)
        ).fetchone()
        return int(row[0])

    def _early_vectors(self, ids: list[str]) -> dict[str, Vector]:
        """Vectors of rows the index does not hold yet: stored since it last synced (read from
        the row), or still pending (embedded now, at most `ON_DEMAND`)."""
        out = {i: self._early[i] for i in ids if i in self._early}
        wanted = [i for i in ids if i not in out]
        if not wanted:
            return out
        pending: list[tuple[str, str]] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for memory_id, content, blob, model in self._conn.execute(
                f"SELECT id, content, embedding, embedding_model FROM memories "
                f"WHERE id IN ({marks})",
                chunk,
            ):
                if model == self._embedder.name and len(blob) == 4 * self.dimension:
                    out[memory_id] = np.frombuffer(blob, dtype="<f4")
                else:
                    pending.append((memory_id, content))
        order = {memory_id: n for n, memory_id in enumerate(wanted)}
        pending = sorted(pending, key=lambda r: order[r[0]])[:ON_DEMAND]
        if not pending:
            return out
        if len(self._early) > EARLY_LIMIT:
            self._early.clear()
        for (memory_id, _), vector in zip(
            pending, self._embedder.embed_batch([r[1] for r in pending]), strict=True
        ):
            vector.setflags(write=False)
            self._early[memory_id] = out[memory_id] = vector
        return out

    def vector_count(self) -> int:
        """Vectors of live memories in this process's index."""
        return len(self._index)

    def all_vectors(self) -> npt.NDArray[np.float32]:
        """Every stored vector of the store's model as one (N, d) float32 matrix, read from the
        database (rows whose vector is still pending or another model's are left out)."""
        rows = self._conn.execute(
            "SELECT embedding FROM memories WHERE length(embedding) > 0 AND embedding_model = ?",
            (self._embedder.name,),
        ).fetchall()
        matrix = np.frombuffer(b"".join(r[0] for r in rows), dtype="<f4")
        return matrix.reshape(len(rows), self.dimension).astype(np.float32)

    def backdate(self, stamps: dict[str, str]) -> None:
        """Set created/updated/seen dates (a benchmark's aged memory set): {id: timestamp}."""
        with self.write():
            self._conn.executemany(
                "UPDATE memories SET created_at = ?, updated_at = ?, last_seen_at = ?, "
                "status_changed_at = ? WHERE id = ?",
                [(at, at, at, at, memory_id) for memory_id, at in stamps.items()],
            )

    def set_pinned(self, memory_id: str, pinned: bool = True) -> None:
        """Pin a memory (always in context while live) or unpin it."""
        with self.write():
            self._conn.execute(
                "UPDATE memories SET pinned = ?, change_seq = ? WHERE id = ?",
                (int(pinned), self._next_change(), memory_id),
            )
        self._after_write()

    def text_search(
        self, query: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top-k (id, BM25 score, higher is better) by FTS5 over an OR of the query's words;
        in a store of `PRUNE_FROM` memories or more, the words held by more than `PRUNE_SHARE`
        of them are left out of the query (`fts.prune`)."""
        terms = fts.fts_terms(query)
        if len(terms) > 1 and self._df_total_now() >= PRUNE_FROM:
            frequencies, total = self.document_frequencies(terms)
            terms = fts.prune(terms, frequencies, total, PRUNE_SHARE)
        match = fts.fts_match(terms)
        if not match or k <= 0:
            return []
        where = f"m.status NOT IN ({','.join('?' * len(EXCLUDED_STATUSES))})"
        params: list[Any] = [match, *EXCLUDED_STATUSES]
        if scopes is not None:
            where += f" AND m.scope IN ({','.join('?' * len(scopes))})"
            params += list(scopes)
        rows = self._conn.execute(
            "SELECT m.id, bm25(memories_fts) AS rank FROM memories_fts "
            # the covering index reads no memory rows (they hold the embeddings): ~2x faster
            "JOIN memories m INDEXED BY memories_seq_filter ON m.seq = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND {where} ORDER BY rank LIMIT ?",
            (*params, k),
        ).fetchall()
        return [(memory_id, -float(rank)) for memory_id, rank in rows]

    def turn_neighbours(
        self, ids: Sequence[str], reach: int, scopes: Sequence[str] | None = None
    ) -> dict[str, list[tuple[str, int]]]:
        """{id: [(neighbour id, step)]} for the chat turns among `ids`: the live turns of the
        same session at most `reach` positions away (`memory.turns`), `step` the neighbour's
        index less the turn's (−1: the turn before it)."""
        return self.turn_window(ids, reach, scopes)[0]

    def turn_window(
        self, ids: Sequence[str], reach: int, scopes: Sequence[str] | None = None
    ) -> tuple[dict[str, list[tuple[str, int]]], frozenset[str]]:
        """(`turn_neighbours`, the turns among them and `ids` that end by asking: `turns.asks`,
        read from the rows the neighbours are found with)."""
        wanted: dict[str, list[tuple[str, int]]] = {}
        asking: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for memory_id, source, content in self._conn.execute(
                # `+kind`: by id, not by the kind index (a quarter of the table at 100k)
                f"SELECT id, source, content FROM memories WHERE id IN ({marks}) "
                "AND +kind = 'episode' AND source LIKE 'chat:%'",
                chunk,
            ):
                at = turns.position(source)
                if at is None:
                    continue
                if turns.asks(content):
                    asking.add(memory_id)
                for step in range(-reach, reach + 1):
                    if step:
                        near = turns.source(at[0], at[1] + step)
                        wanted.setdefault(near, []).append((memory_id, step))
        out: dict[str, list[tuple[str, int]]] = {}
        sources = list(wanted)
        where = f"+status NOT IN ({','.join('?' * len(EXCLUDED_STATUSES))})"
        extra: list[Any] = list(EXCLUDED_STATUSES)
        if scopes is not None:
            where += f" AND +scope IN ({','.join('?' * len(scopes))})"
            extra += list(scopes)
        for start in range(0, len(sources), 500):
            chunk = sources[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for near_id, source, content in self._conn.execute(
                # by source (`+`: not by the kind or scope indexes)
                f"SELECT id, source, content FROM memories WHERE source IN ({marks}) "
                f"AND +kind = 'episode' AND {where}",
                (*chunk, *extra),
            ):
                if turns.asks(content):
                    asking.add(near_id)
                for memory_id, step in wanted[source]:
                    if near_id != memory_id:
                        out.setdefault(memory_id, []).append((near_id, step))
        return out, frozenset(asking)

    def session_rows(self, session: str, scope: str) -> list[tuple[str, str, str]]:
        """(id, kind, source) of what a chat session left in `scope`: its turns and the notes
        drawn from them (sources `chat:<session>#<index>`), live or not."""
        prefix = turns.source(session, 0)[:-1]  # "chat:<session>#"
        rows = self._conn.execute(
            # by source: the planner would take the scope index and read half the table
            "SELECT id, kind, source FROM memories INDEXED BY memories_source "
            "WHERE source >= ? AND source < ? AND scope = ?",
            (*prefix_range(prefix), scope),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def recent_notes(self, scope: str, limit: int = 30) -> list[str]:
        """Ids of the live session notes (kind `note`) in `scope`, newest first."""
        rows = self._conn.execute(
            "SELECT id FROM memories WHERE scope = ? AND kind = 'note' "
            "AND status NOT IN ('inactive', 'retired', 'superseded') "
            "ORDER BY created_at DESC, seq DESC LIMIT ?",
            (scope, limit),
        ).fetchall()
        return [r[0] for r in rows]

    def always_on(self, scopes: Sequence[str], limit: int = 40) -> list[str]:
        """Ids of live pinned memories and escalated (blocking) constraints in `scopes`.
        No index serves `pinned = 1 OR status = 'escalated'` (the scope index reads half the
        table): the answer is kept until a memory changes (`change_seq` moves)."""
        change = self._index_change()
        key = (tuple(scopes), limit)
        if self._always_on_seen != change:
            self._always_on.clear()
            self._always_on_seen = change
        if key in self._always_on:
            return list(self._always_on[key])
        marks = ",".join("?" * len(scopes))
        rows = self._conn.execute(
            f"SELECT id FROM memories WHERE scope IN ({marks}) "
            "AND (pinned = 1 OR status = 'escalated') AND status NOT IN ('inactive', 'retired') "
            "ORDER BY importance DESC, updated_at DESC LIMIT ?",
            (*scopes, limit),
        ).fetchall()
        self._always_on[key] = [r[0] for r in rows]
        return list(self._always_on[key])

    def standing_rules(self, scope: str, instructions: bool = False, limit: int = 200) -> list[str]:
        """Ids of the live constraints of `scope` (the censors layer, design §2.7) and, with
        `instructions`, every live rule harvested from its instruction files (a chat start
        carries them): newest first. Kept until a memory changes, like `always_on`."""
        change = self._index_change()
        key = ("standing", scope, instructions, limit)
        if self._always_on_seen != change:
            self._always_on.clear()
            self._always_on_seen = change
        if key not in self._always_on:
            rows = self._conn.execute(
                "SELECT id FROM memories WHERE scope = ? "
                "AND (kind = 'constraint' OR (? AND tags LIKE '%\"instructions\"%')) "
                "AND status NOT IN ('inactive', 'retired', 'superseded') "
                "ORDER BY importance DESC, updated_at DESC LIMIT ?",
                (scope, int(instructions), limit),
            ).fetchall()
            self._always_on[key] = [r[0] for r in rows]
        return list(self._always_on[key])

    def _index_change(self) -> int:
        """The `change_seq` counter: every write to a memory row moves it."""
        row = self._conn.execute("SELECT value FROM counters WHERE name = 'change_seq'").fetchone()
        return int(row[0])

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """({term: live memories whose text holds it}, live memories in all), for the IDF of a
        query's words (FTS5 stems the term the way it stemmed the text). Cached until 64 more
        changes have landed: frequencies drift slowly, and recounting after every write of a
        busy writer would keep readers in long statements that hold checkpoints back."""
        change = self._df_change()
        if self._df_seen < 0 or change - self._df_seen >= DF_STALENESS or change < self._df_seen:
            self._df_cache.clear()
            self._df_seen = change
            self._df_total = int(self._conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        out: dict[str, int] = {}
        for term in terms:
            if term not in self._df_cache:
                quoted = '"' + term.replace('"', "") + '"'
                self._df_cache[term] = int(
                    self._conn.execute(
                        "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (quoted,)
                    ).fetchone()[0]
                )
            out[term] = self._df_cache[term]
        return out, self._df_total

    def _df_total_now(self) -> int:
        """The memory count `document_frequencies` last read (read now if never)."""
        if self._df_seen < 0:
            self.document_frequencies([])
        return self._df_total

    def _df_change(self) -> int:
        row = self._conn.execute("SELECT coalesce(max(change_seq), 0) FROM memories").fetchone()
        return int(row[0])

    def counts(self, scopes: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
        """{kind: {status: n}}, over `scopes` only when given."""
        out: dict[str, dict[str, int]] = {}
        where, args = "", list(scopes or [])
        if scopes is not None:
            where = f"WHERE scope IN ({','.join('?' * len(args))})"
        for kind, status, n in self._conn.execute(
            f"SELECT kind, status, count(*) FROM memories {where} GROUP BY kind, status "
            "ORDER BY kind",
            args,
        ):
            out.setdefault(kind, {})[status] = n
        return out

    def memory_count(self) -> int:
        """Every row, whatever its state or scope."""
        return int(self._conn.execute("SELECT count(*) FROM memories").fetchone()[0])

    def size_bytes(self) -> int:
        files = [self.path, Path(f"{self.path}-wal")]
        return sum(p.stat().st_size for p in files if p.exists())

    def integrity(self) -> str:
        return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])

    # -- editing (the memory browser, design §11) -------------------------------------------------

    def edit(self, memory_id: str, changes: Edit) -> EditResult:
        """Change a memory in place: new content is normalised, redacted, re-rendered and
        re-embedded (unchanged text is not); kind, scope, tags, pin, importance and outcome as
        given; the status only through its kind's legal transitions (`InvalidTransition`)."""
        memory = self.get(memory_id)
        kind = check_kind(changes.kind) if changes.kind is not None else memory.kind
        scope = scopes.check(changes.scope) if changes.scope is not None else memory.scope
        found: list[Redaction] = []
        content = memory.content
        if changes.content is not None:
            content, found = secrets.redact(renderings.normalise(changes.content))
            if not content.strip():
                raise InvalidMemory("content is empty")
        tags = memory.tags
        if changes.tags is not None:
            tags = []
            for tag in changes.tags:
                clean_tag, in_tag = secrets.redact(tag.strip())
                found += in_tag
                if clean_tag:
                    tags.append(clean_tag)
            tags = sorted(set(tags))
        importance = memory.importance
        if changes.importance is not None:
            importance = check_unit("importance", changes.importance)
        outcome = memory.outcome
        if changes.outcome is not None:
            if changes.outcome not in OUTCOMES:
                raise InvalidMemory(
                    f"invalid outcome {changes.outcome!r}: use one of {', '.join(OUTCOMES)}"
                )
            outcome = changes.outcome
        shared = memory.shared if changes.shared is None else changes.shared
        if shared and not scopes.is_project(scope):
            raise InvalidMemory(
                f"shared: only a project's memories go to the team store, not {scope}'s"
            )
        content_hash = renderings.content_hash(content, turns.session_of(memory.source))
        reembed = content_hash != memory.content_hash
        if (scope, content_hash) != (memory.scope, memory.content_hash):
            row = self._conn.execute(
                "SELECT id FROM memories WHERE scope = ? AND content_hash = ? AND id != ?",
                (scope, content_hash, memory_id),
            ).fetchone()
            if row is not None:
                raise InvalidMemory(f"memory {row[0]} already holds this text in {scope}")
        vector = self._embedder.embed(content) if reembed else None
        args = (outcome, memory.confidence, self.counter)
        with self.write():
            current = self.get(memory_id)
            status, reason = _edited_status(current, kind, changes, outcome)
            values: dict[str, Any] = {
                "kind": kind, "scope": scope, "tags": json.dumps(tags), "importance": importance,
                "outcome": outcome,
                "pinned": int(changes.pinned if changes.pinned is not None else current.pinned),
                "shared": int(shared),
            }  # fmt: skip
            if reembed or kind != current.kind or outcome != current.outcome:
                values["summary"] = renderings.summary(kind, content, *args)
                values["micro"] = renderings.micro(kind, content, *args)
            if reembed:
                assert vector is not None
                values.update(
                    content=content, content_hash=content_hash, embedding=_blob(vector),
                    embedding_model=self._embedder.name,
                )  # fmt: skip
            before = current.model_dump()
            stamp = now()
            if status != current.status:
                values["status_changed_at"] = stamp
                self._log_transition(memory_id, current.status, status, stamp, reason)
            values["status"] = status
            sets = ", ".join(f"{k} = ?" for k in values)
            self._conn.execute(
                f"UPDATE memories SET {sets}, updated_at = ?, change_seq = ? WHERE id = ?",
                (*values.values(), stamp, self._next_change(), memory_id),
            )
        self._after_write()
        after = self.get(memory_id)
        changed = [
            k for k, v in after.model_dump().items()
            if k not in ("updated_at", "status_changed_at", "content_hash") and before.get(k) != v
        ]  # fmt: skip
        return EditResult(after, changed, reembed, found)


DF_STALENESS = 64
"""Changes after which cached document frequencies are counted again."""
PRUNE_FROM = 20_000
"""Stores of at least this many memories leave the very common words out of a full-text query
(below it the whole OR-query costs a few milliseconds)."""
PRUNE_SHARE = 0.05
"""A word in more than this share of the memories is left out of the full-text query (unless
every word of it is: then the rarest stays)."""
ON_DEMAND = 16
"""Pending rows a `vectors` call embeds at most (one model batch on the request path)."""
EARLY_LIMIT = 4096


@dataclass(frozen=True)
class Edit:
    """What `MemoryStore.edit` changes; `None` leaves a field as it is."""

    content: str | None = None
    kind: str | None = None
    scope: str | None = None
    tags: list[str] | None = None
    pinned: bool | None = None
    importance: float | None = None
    outcome: str | None = None
    status: str | None = None
    shared: bool | None = None


@dataclass
class EditResult:
    memory: Memory
    changed: list[str]
    """Record fields (snake_case) whose value changed."""
    reembedded: bool
    redactions: list[Redaction] = field(default_factory=list)


def _edited_status(
    memory: Memory, kind: str, changes: Edit, outcome: str | None
) -> tuple[str, str]:
    """The status after an edit and why: a new kind whose machine lacks the current state starts
    over; a logged outcome moves a decision; pinning a fact-like memory makes it `core`; an
    asked-for status must be a legal transition from there."""
    status, reason = memory.status, "edited"
    if kind != memory.kind and status not in lifecycle.machine(kind).edges:
        status, reason = lifecycle.initial(kind), f"kind changed to {kind}"
    if changes.outcome is not None and outcome != memory.outcome:
        status, reason = lifecycle.on_outcome(kind, status, changes.outcome), f"outcome {outcome}"
    if changes.status is not None and changes.status != status:
        if changes.status not in lifecycle.machine(kind).edges:
            states = ", ".join(sorted(lifecycle.machine(kind).edges))
            raise InvalidMemory(
                f"status: {changes.status!r} is not a state {lifecycle.article(kind)} {kind} can "
                f"be in (its states: {states})"
            )
        lifecycle.check(kind, status, changes.status)
        status, reason = changes.status, "set by hand"
    elif changes.status is None and changes.pinned and not memory.pinned:
        m = lifecycle.machine(kind)
        if m is lifecycle.FACTLIKE and m.allows(status, "core"):
            status, reason = "core", "pinned"
    return status, reason


def _blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


_NAMES = tuple(c.strip() for c in _COLUMNS.split(","))


def _memory(row: Sequence[Any]) -> Memory:
    # Rows were validated on the way in; constructing without validation is ~5x faster and
    # a context request builds a few hundred of these.
    data = dict(zip(_NAMES, row, strict=True))
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


if TYPE_CHECKING:  # mypy checks that the SQLite store has every verb of the interface
    from nous.memory.interface import SharedStore, Store
    from nous.memory.teamlink import TeamLink

    _IS_A_STORE: type[Store] = MemoryStore
    _IS_SHARED: type[SharedStore] = MemoryStore
