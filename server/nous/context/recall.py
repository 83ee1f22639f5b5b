"""On-demand recall: hybrid search (vectors + BM25, fused by reciprocal rank) rendered inside a
token budget, with a manifest of what was chosen and what was left out and why."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from nous.context import search
from nous.memory.store import MemoryStore

HEADING = "## Recalled memories"


class Item(BaseModel):
    id: str
    kind: str
    scope: str
    detail: str
    tokens: int
    score: float
    text: str


class Dropped(BaseModel):
    id: str
    kind: str
    reason: str


class RecallResult(BaseModel):
    query: str
    text: str
    tokens: int
    budget: int
    items: list[Item] = Field(default_factory=list)
    dropped: list[Dropped] = Field(default_factory=list)


def recall(
    store: MemoryStore,
    query: str,
    scopes: Sequence[str],
    budget: int = 500,
    kinds: Sequence[str] | None = None,
    depth: int = 50,
) -> RecallResult:
    """The best memories for `query` in `scopes` whose rendered text fits in `budget` tokens."""
    wide = depth * 4 if kinds else depth
    ranked = search.ranked(store, query, scopes, wide)
    memories = store.get_many([memory_id for memory_id, _ in ranked])
    result = RecallResult(query=query, text="", tokens=0, budget=budget)
    lines: list[str] = []
    count = store.counter.count
    for memory_id, score in ranked:
        memory = memories[memory_id]
        if kinds and memory.kind not in kinds:
            continue
        placed = False
        for detail, body in (("summary", memory.summary), ("micro", memory.micro)):
            line = f"- {body}"
            text = "\n".join([HEADING, *lines, line])
            if count(text) <= budget:
                lines.append(line)
                result.items.append(
                    Item(
                        id=memory.id, kind=memory.kind, scope=memory.scope, detail=detail,
                        tokens=count(line), score=round(score, 6), text=body,
                    )
                )  # fmt: skip
                placed = True
                break
        if not placed:
            result.dropped.append(Dropped(id=memory.id, kind=memory.kind, reason="budget"))
    result.text = "\n".join([HEADING, *lines]) if lines else ""
    result.tokens = count(result.text) if result.text else 0
    return result
