"""Recall for callers that hold a store and a list of scopes (the evaluation harness): the
`recall` mode of the pipeline, flattened to a ranked list of items."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from nous.context import config as configs
from nous.context import pipeline
from nous.memory.store import MemoryStore


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
    config: configs.Config | None = None,
) -> RecallResult:
    """The best memories for `query` in `scopes` whose rendered text fits in `budget` tokens."""
    project = next((s for s in scopes if s.startswith("project:")), "project:-")
    view = pipeline.View(
        project=project.removeprefix("project:"),
        project_scope=project,
        languages=[s.removeprefix("language:") for s in scopes if s.startswith("language:")],
    )
    result = pipeline.assemble(
        store,
        config or configs.defaults(),
        view,
        pipeline.Request(
            input=query, mode="recall", budget=budget, kinds=list(kinds or []) or None
        ),
    )
    items = sorted(
        (i for section in result.sections for i in section.items), key=lambda i: -i.score
    )
    return RecallResult(
        query=query, text=result.text, tokens=result.tokens, budget=budget,
        items=[Item(id=i.id, kind=i.kind, scope=i.scope, detail=i.detail, tokens=i.tokens,
                    score=i.score, text=i.text) for i in items],
        dropped=[Dropped(id=d.id, kind=d.kind, reason=d.reason) for d in result.dropped],
    )  # fmt: skip
