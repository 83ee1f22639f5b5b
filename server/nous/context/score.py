"""The composite score (design §2.5): six weighted terms in 0..1, times the usage boost, the scope
factor and (for superseded memories) the damping; plus the profile's tier and kind factors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nous.context.config import Config
from nous.memory.model import Memory, parse_time
from nous.memory.usage import NEUTRAL, UsageStats

SUPERSEDED = frozenset({"superseded"})


@dataclass
class Scored:
    """A candidate with its score and the terms that made it."""

    memory: Memory
    score: float
    terms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Scope:
    """What the reader is looking from: the project scope and its languages."""

    project: str
    languages: tuple[str, ...]


def scope_factor(config: Config, scope: str, where: Scope) -> float:
    factors = config.scoring.scope_factors
    if scope == where.project:
        return factors["project"]
    if scope.startswith("language:"):
        matches = scope.removeprefix("language:") in where.languages
        return factors["language"] if matches else factors["other_language"]
    if scope == "universal":
        return factors["universal"]
    return 0.0  # another project: never shown (filtered before scoring too)


def recency(memory: Memory, now_ts: float, half_life_days: float) -> float:
    stamp = max(memory.updated_at, memory.last_seen_at)
    age = (now_ts - parse_time(stamp).timestamp()) / 86400
    return math.exp(-math.log(2) * max(0.0, age) / half_life_days)


def composite(
    config: Config,
    memory: Memory,
    semantic: float,
    frame: str,
    where: Scope,
    now_ts: float,
    recency_weight: float = 0.0,
    usage: UsageStats = NEUTRAL,
    extra: float = 1.0,
    asked: bool = False,
) -> Scored:
    """Score one memory. `recency_weight` (0..1, from temporal words in the input) shortens the
    recency half-life down to a tenth, so "today" favours what changed today. A memory of the
    kind the input asks for (`asked`: a decision for "should we…?") has the frame's top
    priority, whatever the frame."""
    w = config.weights
    s = config.scoring
    half_life = s.recency_half_life_days * (1.0 - 0.9 * recency_weight)
    outcome_key = memory.outcome or "none"
    terms = {
        "semantic": max(0.0, min(1.0, semantic)),
        "framePriority": 1.0
        if asked
        else config.frames.priorities.get(frame, {}).get(memory.kind, 0.5),
        "recency": recency(memory, now_ts, half_life),
        "outcome": s.outcome_values.get(outcome_key, s.outcome_values["none"]),
        "usage": 1.0 - math.exp(-usage.score),
        "confidence": memory.confidence,
    }
    base = (
        w.semantic * terms["semantic"]
        + w.frame_priority * terms["framePriority"]
        + w.recency * terms["recency"]
        + w.outcome * terms["outcome"]
        + w.usage * terms["usage"]
        + w.confidence * terms["confidence"]
    )
    terms["usageBoost"] = usage.boost
    terms["scopeFactor"] = scope_factor(config, memory.scope, where)
    terms["damping"] = s.superseded_damping if memory.status in SUPERSEDED else 1.0
    terms["profileFactor"] = extra
    score = base * terms["usageBoost"] * terms["scopeFactor"] * terms["damping"] * extra
    return Scored(memory, score, {k: round(v, 4) for k, v in terms.items()})
