"""The memory store: one SQLite file (WAL) with the memories, their full-text index and vectors.

`MemoryStore` is what the rest of Nous holds (`nous.memory.interface.Store` is its shape): it
writes and reads memories, and it is made of objects over the same database (`memory.database`)
rather than of mixins: the request path's reads (`memory.reads`), the vectors (`memory.embeddings`),
the write path's rows (`memory.writes`), edits (`memory.edits`), and the row objects callers reach
by name: `usage` (usage, sessions, fingerprints), `sources` (the harvest ledger, rows by source),
`projects` (project claims), `metrics` (the metrics' reads), `browse` (the memory browser) and
`outbox` (what waits for the team store).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import platformdirs

from nous.errors import InvalidMemory, UnknownMemory
from nous.memory import lifecycle, renderings, seals, writes
from nous.memory.browse import Browser
from nous.memory.database import CHECKPOINT_WAIT_MS, Database
from nous.memory.edits import Edit, Editor, EditResult
from nous.memory.embedder import Embedder, Vector
from nous.memory.embeddings import Embeddings
from nous.memory.interface import Candidates
from nous.memory.metrics import Metrics
from nous.memory.model import OUTCOMES, Draft, Memory
from nous.memory.outbox import Queue
from nous.memory.projects import Projects
from nous.memory.reads import Reads
from nous.memory.rows import READ, decode, read
from nous.memory.sources import Sources
from nous.memory.usage import HALF_LIFE_DAYS, Usage
from nous.memory.writes import WriteResult
from nous.text.tokens import TokenCounter

if TYPE_CHECKING:
    from nous.memory.teamlink import TeamLink


def default_path() -> Path:
    """`<user data dir>/nous/memory.db`: the database when no setting names one (`--db`,
    `nous.db`, `NOUS_DB`: `Settings.db`); never inside a workspace."""
    return Path(platformdirs.user_data_dir("nous")) / "memory.db"


class MemoryStore:
    """All reads and writes of one memory database; use from one thread.

    The only holder of the connection and of SQL (with the objects it is made of): callers use
    its verbs and its row objects' and pass the vectors they already computed.
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
        self._db = Database(path)
        self.path = self._db.path
        self._conn = self._db.conn
        self._embedder = embedder
        self.counter = counter
        self.team: TeamLink | None = None
        """The team store (design §13), attached by the engine when one is configured: its search
        adds candidates, and the team memories it found answer `get_many` and `vectors` too."""
        self._vectors = Embeddings(self._db, embedder, defer_vectors)
        self._reads = Reads(self._db)
        self._editor = Editor(self._db, embedder, counter, self._after_write)
        self.usage = Usage(self._db)
        self.sources = Sources(self._db)
        self.projects = Projects(self._db, self._vectors.index)
        self.metrics = Metrics(self._db)
        self.browse = Browser(self._db)
        self.outbox = Queue(self._db, self._after_write)
        """Changes to team rows this file does not hold, waiting to be pushed (design §13)."""

    def close(self) -> None:
        """Close. Deferred vectors still pending are finished by the backlog's own thread and
        connection in the background, or, if the process ends first, by the next deferring
        store to open the file; `wait_embedded` first to have them all before returning."""
        if self.team is not None:
            self.team.close()
        self._vectors.close()
        self._db.close()

    def save_snapshot(self) -> None:
        """Keep a large vector index beside the file for the next process to open
        (`memory.snapshot`; only when it moved on since the last one). Never raises."""
        self._vectors.save_snapshot()

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """Block until the vectors this store deferred are stored and in its index (at once
        when it defers none); False on timeout. A harness that searches right after writing
        calls it."""
        return self._vectors.wait(timeout)

    @contextmanager
    def vectors_held(self) -> Iterator[None]:
        """Deferred vectors wait until the block ends (`Backlog.held`); nothing when the store
        embeds as it writes."""
        with self._vectors.held():
            yield

    def pending_vectors(self) -> int:
        """Rows this store's backlog has yet to embed."""
        return self._vectors.pending()

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

    def _after_write(self) -> None:
        self._vectors.index.pull(self._conn)
        self._db.bound_wal()
        if self.team is not None:
            self.team.poke()  # a shared row's change is in the outbox: push it

    def checkpoint(self, wait_ms: int = CHECKPOINT_WAIT_MS) -> bool:
        """A TRUNCATE checkpoint (call when idle too); False when other connections kept it
        from completing within `wait_ms`."""
        return self._db.checkpoint(wait_ms)

    # -- writing --------------------------------------------------------------------------------

    def remember(self, draft: Draft, embedded: tuple[str, Vector] | None = None) -> WriteResult:
        """Store one memory, or confirm the existing one with the same text in the same scope.
        `embedded` is (text, its vector) the caller already has: used when the stored content
        is exactly that text (nothing redacted, nothing normalised away)."""
        return self.remember_many([draft], embedded)[0]

    def remember_many(
        self, drafts: Sequence[Draft], embedded: tuple[str, Vector] | None = None
    ) -> list[WriteResult]:
        """Store a batch: embedded together first, then written in one short transaction."""
        results, deferred = writes.write_batch(
            self._db, self._vectors, self.counter, drafts, embedded
        )
        self._after_write()
        # this write's rows only: another writer's pending rows are its own backlog's (or, if it
        # stopped, the next deferring store's to open the file)
        self._vectors.defer(deferred)
        return results

    def transition(self, memory_id: str, target: str, reason: str) -> Memory:
        """Move a memory to `target` if its kind allows it, else `InvalidTransition`. One that
        is already there (another process moved it first: two windows judging the same reply)
        stays, unchanged."""
        with self._db.write():
            memory = self.get(memory_id)
            if memory.status == target:
                return memory
            lifecycle.check(memory.kind, memory.status, target)
            writes.set_status(self._db, memory, target, reason)
        self._after_write()
        return self.get(memory_id)

    def forget(self, memory_id: str, purge: bool = False) -> Memory:
        """Mark inactive (kept, excluded from context); `purge` deletes the row for good."""
        with self._db.write():
            memory = self.get(memory_id)
            if purge:
                if memory.kind == "decision":
                    raise InvalidMemory("decisions are never deleted; forget marks them inactive")
                self._db.next_change()
                self._conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
                self._conn.execute("DELETE FROM usage WHERE memory_id = ?", (memory_id,))
                self._vectors.drop_snapshot()  # it may hold this row's vector: made again later
            else:
                target = lifecycle.on_forget(memory.kind, memory.status)
                writes.set_status(self._db, memory, target, "forgotten")
        self._after_write()
        return memory if purge else self.get(memory_id)

    def supersede(self, old_id: str, new_id: str) -> Memory:
        """Mark `old_id` superseded by `new_id` (still searchable, ranked lower)."""
        if old_id == new_id:
            raise InvalidMemory("a memory cannot supersede itself")
        if new_id not in self.get_many([new_id]):  # a team memory a search found counts
            raise UnknownMemory(new_id)
        with self._db.write():
            old = self.get(old_id)
            target = lifecycle.on_supersede(old.kind, old.status)
            reason = f"superseded by {new_id}"
            writes.set_status(self._db, old, target, reason, superseded_by=new_id)
        self._after_write()
        return self.get(old_id)

    def link_successor(self, old_id: str, new_id: str) -> None:
        """Record that `new_id` replaces `old_id` (the old one's state is set separately)."""
        self._update(old_id, superseded_by=new_id)

    def set_pinned(self, memory_id: str, pinned: bool = True) -> None:
        """Pin a memory (always in context while live) or unpin it."""
        self._update(memory_id, pinned=int(pinned))

    def _update(self, memory_id: str, **values: Any) -> None:
        """Set columns of one row as one change (no state transition)."""
        sets = ", ".join(f"{k} = ?" for k in values)
        with self._db.write():
            self._conn.execute(
                f"UPDATE memories SET {sets}, change_seq = ? WHERE id = ?",
                (*values.values(), self._db.next_change(), memory_id),
            )
        self._after_write()

    def set_outcome(self, memory_id: str, outcome: str) -> Memory:
        """Log a decision's or procedure's outcome (a decision becomes `reviewed`)."""
        if outcome not in OUTCOMES:
            raise InvalidMemory(f"invalid outcome {outcome!r}: use one of {', '.join(OUTCOMES)}")
        with self._db.write():
            memory = self.get(memory_id)
            target = lifecycle.on_outcome(memory.kind, memory.status, outcome)
            args = (outcome, memory.confidence, self.counter)
            writes.set_status(
                self._db,
                memory,
                target,
                f"outcome {outcome}",
                outcome=outcome,
                summary=renderings.summary(memory.kind, memory.content, *args),
                micro=renderings.micro(memory.kind, memory.content, *args),
                redaction=None,  # new renderings: scanned again by `reseal`
            )
        self._after_write()
        return self.get(memory_id)

    def edit(self, memory_id: str, changes: Edit) -> EditResult:
        """Change a memory in place (the memory browser, design §11): `Editor.edit`."""
        return self._editor.edit(memory_id, changes)

    def reseal(self, limit: int = seals.BATCH) -> int:
        """Scan and stamp up to `limit` rows the secret rules in force have not (`memory.seals`);
        how many it stamped (0: done)."""
        return seals.reseal(self._db, limit)

    def backdate(self, stamps: dict[str, str]) -> None:
        """Set created/updated/seen dates (a benchmark's aged memory set): {id: timestamp}."""
        with self._db.write():
            self._conn.executemany(
                "UPDATE memories SET created_at = ?, updated_at = ?, last_seen_at = ?, "
                "status_changed_at = ? WHERE id = ?",
                [(at, at, at, at, memory_id) for memory_id, at in stamps.items()],
            )

    # -- reading --------------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        return read(self._conn, memory_id)

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        out: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for row in self._conn.execute(
                f"SELECT {READ} FROM memories WHERE id IN ({marks})", chunk
            ):
                memory = decode(row)
                out[memory.id] = memory
        if self.team is not None and len(out) < len(ids):
            out.update(self.team.found([i for i in ids if i not in out]))
        return out

    def vector_search(
        self, query: Vector, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top-k (id, cosine) among memories not excluded by their lifecycle state."""
        return self._vectors.search(query, k, scopes)

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of `ids` (those it has), from the in-process index; for rows whose
        vector is still pending, the first `ON_DEMAND` of them (in the order asked: a search asks
        best text match first) are embedded now and kept in memory until theirs is stored, so
        a memory found by text before its vector exists is scored like any other."""
        out = self._vectors.stored(ids)
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
        return Candidates(records, held, self.usage.stats(found, half_life))

    def vector_count(self) -> int:
        """Vectors of live memories in this process's index."""
        return len(self._vectors.index)

    def all_vectors(self) -> npt.NDArray[np.float32]:
        """Every stored vector of the store's model, one (N, d) matrix (`Embeddings.all`)."""
        return self._vectors.all()

    # -- the request path's reads (`memory.reads`) ------------------------------------------------

    def text_search(
        self, query: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        return self._reads.text_search(query, k, scopes)

    def turn_neighbours(
        self, ids: Sequence[str], reach: int, scopes: Sequence[str] | None = None
    ) -> dict[str, list[tuple[str, int]]]:
        """{id: [(neighbour id, step)]}: the first half of `turn_window`."""
        return self._reads.turn_window(ids, reach, scopes)[0]

    def turn_window(
        self, ids: Sequence[str], reach: int, scopes: Sequence[str] | None = None
    ) -> tuple[dict[str, list[tuple[str, int]]], frozenset[str]]:
        return self._reads.turn_window(ids, reach, scopes)

    def session_rows(self, session: str, scope: str) -> list[tuple[str, str, str]]:
        return self._reads.session_rows(session, scope)

    def recent_notes(self, scope: str, limit: int = 30) -> list[str]:
        return self._reads.recent_notes(scope, limit)

    def always_on(self, scopes: Sequence[str], limit: int = 40) -> list[str]:
        return self._reads.always_on(scopes, limit)

    def standing_rules(self, scope: str, instructions: bool = False, limit: int = 200) -> list[str]:
        return self._reads.standing_rules(scope, instructions, limit)

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        return self._reads.document_frequencies(terms)

    def ids_starting(
        self, prefix: str, project_scope: str, limit: int = 10
    ) -> list[tuple[str, str, str]]:
        return self._reads.ids_starting(prefix, project_scope, limit)

    def counts(self, scopes: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
        return self._reads.counts(scopes)

    def memory_count(self) -> int:
        return self._reads.memory_count()

    def size_bytes(self) -> int:
        return self._db.size_bytes()

    def integrity(self) -> str:
        return self._db.integrity()


if TYPE_CHECKING:  # mypy checks that the SQLite store has every verb of the interface
    from nous.memory.interface import SharedStore, Store

    _IS_A_STORE: type[Store] = MemoryStore
    _IS_SHARED: type[SharedStore] = MemoryStore
