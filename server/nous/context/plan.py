"""Retrieval plans as data (design §2.3): which kinds, how many of each, recency weight, skips."""

from __future__ import annotations

from pydantic import BaseModel, Field

from nous.context.config import Config
from nous.context.intent import Intent


class Plan(BaseModel):
    """A declarative retrieval plan; the pipeline executes it, tests read it as data."""

    limits: dict[str, int] = Field(default_factory=dict)
    """Kinds to retrieve and how many of each."""
    recency_weight: float = 0.0
    skip: list[str] = Field(default_factory=list)
    budget: int = 0

    @property
    def retrieves(self) -> bool:
        return any(self.limits.values())


def build(intent: Intent, frame: str, config: Config, kinds: list[str] | None = None) -> Plan:
    """A greeting skips all retrieval; a dominant hinted kind gets the larger limit."""
    budget = config.frames.budgets.get(frame, config.frames.budgets["conversation"])
    wanted = kinds or config.plan.kinds
    if intent.greeting:
        return Plan(limits={}, skip=list(wanted), budget=budget)
    dominant = intent.dominant_hint
    limits = {}
    for kind in wanted:
        if dominant is None:
            limits[kind] = config.plan.default_limit
        else:
            limits[kind] = (
                config.plan.dominant_limit if kind == dominant else config.plan.other_limit
            )
    return Plan(limits=limits, recency_weight=intent.temporal_recency, budget=budget)
