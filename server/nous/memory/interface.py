"""`Store`: what the rest of Nous may ask of a memory store, as a `typing.Protocol`.

`MemoryStore` (SQLite, this package) implements all of it. `SharedStore` is the part a store
shared by a team offers with the same signatures — search by vector and by words, read records
and vectors, forget and supersede — and `TeamStore` (PostgreSQL + pgvector, `memory/team.py`)
implements it; new memories reach it through the local store's outbox (`memory/teamlink.py`),
so a write never waits for the network. Callers hold a store, use its verbs (and those of its
row objects: `store.usage`, `store.sources`, `store.projects`, `store.metrics`) and pass vectors
they already computed; none of them sees a connection, a cursor or SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from nous.memory.embedder import Vector
from nous.memory.metrics import Metrics
from nous.memory.model import Draft, Memory
from nous.memory.projects import Projects
from nous.memory.sources import Sources
from nous.memory.usage import Usage, UsageStats
from nous.memory.writes import WriteResult
from nous.text.tokens import TokenCounter

if TYPE_CHECKING:
    from nous.memory.teamlink import TeamLink


@dataclass(frozen=True)
class Candidates:
    """What a request scores its candidates on, read in one call (`Store.candidates`): their
    records, their stored vectors and their usage."""

    records: dict[str, Memory]
    """The memories found (in the store's order), local or the team's."""
    vectors: dict[str, Vector] = field(default_factory=dict)
    """The vectors of `records` that are held (or embedded on demand), when asked for."""
    usage: dict[str, UsageStats] = field(default_factory=dict)
    """Usage stats of `records` that were ever injected (the others are neutral)."""


@runtime_checkable
class SharedStore(Protocol):
    """The verbs of `Store` a team's shared store offers (same names, same signatures)."""

    def get(self, memory_id: str) -> Memory: ...
    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]: ...
    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]: ...
    def vector_search(
        self, query: Vector, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]: ...
    def text_search(
        self, query: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[tuple[str, float]]: ...
    def forget(self, memory_id: str, purge: bool = False) -> Memory: ...
    def supersede(self, old_id: str, new_id: str) -> Memory: ...
    def close(self) -> None: ...


@runtime_checkable
class Store(SharedStore, Protocol):
    """The verbs of a memory store (those of `SharedStore` and the local ones below). One
    instance is used from one thread."""

    path: Path
    counter: TokenCounter
    team: TeamLink | None
    """The team store's link, when one is attached: a search asks it too (design §13)."""
    usage: Usage
    """Usage records, chat sessions and fingerprints (`memory.usage`)."""
    sources: Sources
    """The harvest ledger and the rows drawn from a source (`memory.sources`)."""
    projects: Projects
    """Claiming an older project scope's rows (`memory.projects`)."""
    metrics: Metrics
    """What the metrics and the calibration note read (`memory.metrics`)."""

    def ids_starting(
        self, prefix: str, project_scope: str, limit: int = 10
    ) -> list[tuple[str, str, str]]: ...

    # -- the model: vectors are computed once by the caller and handed back in ----------------
    @property
    def model_name(self) -> str: ...
    @property
    def dimension(self) -> int: ...
    def embed(self, text: str) -> Vector: ...
    def embed_many(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...
    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...

    # -- memories ------------------------------------------------------------------------------
    def remember(self, draft: Draft, embedded: tuple[str, Vector] | None = None) -> WriteResult: ...
    def remember_many(
        self, drafts: Sequence[Draft], embedded: tuple[str, Vector] | None = None
    ) -> list[WriteResult]: ...
    def transition(self, memory_id: str, target: str, reason: str) -> Memory: ...
    def link_successor(self, old_id: str, new_id: str) -> None: ...
    def set_outcome(self, memory_id: str, outcome: str) -> Memory: ...
    def set_pinned(self, memory_id: str, pinned: bool = True) -> None: ...

    # -- search (vector_search, text_search, vectors: `SharedStore`) -------------------------
    def recent_notes(self, scope: str, limit: int = 30) -> list[str]: ...
    def session_rows(self, session: str, scope: str) -> list[tuple[str, str, str]]: ...
    def turn_neighbours(
        self, ids: Sequence[str], reach: int, scopes: Sequence[str] | None = None
    ) -> dict[str, list[tuple[str, int]]]: ...
    def turn_window(
        self, ids: Sequence[str], reach: int, scopes: Sequence[str] | None = None
    ) -> tuple[dict[str, list[tuple[str, int]]], frozenset[str]]: ...
    def always_on(self, scopes: Sequence[str], limit: int = 40) -> list[str]: ...
    def standing_rules(
        self, scope: str, instructions: bool = False, limit: int = 200
    ) -> list[str]: ...
    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]: ...
    def candidates(
        self, ids: Sequence[str], half_life: float = ..., vectors: bool = True
    ) -> Candidates: ...

    # -- the database as a whole -------------------------------------------------------------
    def counts(self, scopes: Sequence[str] | None = None) -> dict[str, dict[str, int]]: ...
    def memory_count(self) -> int: ...
    def vector_count(self) -> int: ...
    def wait_embedded(self, timeout: float | None = None) -> bool: ...
    def pending_vectors(self) -> int: ...
    def size_bytes(self) -> int: ...
    def checkpoint(self, wait_ms: int = ...) -> bool: ...


if TYPE_CHECKING:  # mypy checks that the team store has the shared verbs (`memory.team`)
    from nous.memory.team import TeamStore

    _IS_SHARED: type[SharedStore] = TeamStore
