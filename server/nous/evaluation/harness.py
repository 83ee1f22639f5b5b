"""What every dataset run shares: the query-caching embedder, the three systems over one store,
and the greedy packing of a ranking into a token budget (the baselines' budget figure)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from nous.context import search
from nous.context.render import item_line
from nous.memory.embedder import Embedder, Vector
from nous.memory.store import MemoryStore

SYSTEMS = ("nous", "dense", "bm25")
DEPTH = 100
"""Every system returns its top 100 (R@k for k ≤ 100 reads prefixes of the same list)."""


class CachingEmbedder(Embedder):
    """Wraps the real embedder, times it, and keeps every query's embedding (`Embedder.embed`
    with a large `recent_limit`), so the pipeline's own `embed(query)` inside `recall()` costs
    nothing after the harness's."""

    def __init__(self, inner: Embedder, limit: int = 20_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.recent_limit = limit
        self.seconds = 0.0
        self.texts = 0

    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        start = time.perf_counter()
        out = self.inner.embed_batch(texts)
        self.seconds += time.perf_counter() - start
        self.texts += len(texts)
        return out


def rank(
    system: str,
    store: MemoryStore,
    query: str,
    vector: Vector,
    scopes: Sequence[str] | None,
    depth: int = DEPTH,
) -> list[str]:
    """Memory ids, best first, for one system."""
    if system == "dense":
        return [i for i, _ in store.vector_search(vector, depth, scopes)]
    if system == "bm25":
        return [i for i, _ in store.text_search(query, depth, scopes)]
    if system == "nous":
        return [i for i, _ in search.ranked(store, query, scopes, depth, vector=vector)]
    raise ValueError(f"unknown system {system!r}")


class Packer:
    """A baseline's budget figure: its ranking rendered the way the pipeline renders a layer
    (one heading, `- text` lines from the memory's summary), items added best first while they
    fit, counted with the same token counter."""

    HEADING = "## Retrieved\n"

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._lines: dict[str, tuple[str, int]] = {}

    def _line(self, memory_id: str) -> tuple[str, int]:
        cached = self._lines.get(memory_id)
        if cached is None:
            memory = self.store.get(memory_id)
            line = item_line(memory.kind, memory.summary, [memory.kind])
            cached = (line, self.store.counter.count(line) + 1)
            self._lines[memory_id] = cached
        return cached

    def pack(self, ranking: Sequence[str], budget: int) -> tuple[list[str], int]:
        """(ids that fit, tokens used)."""
        used = self.store.counter.count(self.HEADING)
        chosen: list[str] = []
        for memory_id in ranking:
            _, cost = self._line(memory_id)
            if used + cost <= budget:
                chosen.append(memory_id)
                used += cost
        return chosen, used if chosen else 0


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def rounded(value: Any, digits: int = 4) -> Any:
    """Floats rounded for the JSON (recursively)."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    return value
