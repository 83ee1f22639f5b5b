"""The engine's data: `defaults.toml` shipped in the package, deep-merged with a workspace's
`.nous/config.toml`. Every value is validated; a bad override is reported and the defaults stand.
"""

from __future__ import annotations

import logging
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

log = logging.getLogger(__name__)
FRAMES = ("conversation", "question", "task", "decision", "creative", "debug")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Weights(Strict):
    semantic: float = Field(ge=0)
    frame_priority: float = Field(ge=0)
    recency: float = Field(ge=0)
    outcome: float = Field(ge=0)
    usage: float = Field(ge=0)
    confidence: float = Field(ge=0)


class Scoring(Strict):
    recency_half_life_days: float = Field(gt=0)
    usage_half_life_days: float = Field(gt=0)
    superseded_damping: float = Field(ge=0, le=1)
    outcome_values: dict[str, float]
    scope_factors: dict[str, float]
    preferred_kind_boost: float = Field(ge=0)
    semantic_cosine_share: float = Field(ge=0, le=1)
    candidates: int = Field(ge=1, le=10_000)
    window_near: float = Field(ge=0)
    window_far: float = Field(ge=0)
    window_widen: int = Field(ge=0)
    window_answer: float = Field(ge=0)
    window_asking: float = Field(ge=0, le=1)
    dedup_conversation_cosine: float = Field(ge=0, le=1)
    dedup_conversation_jaccard: float = Field(ge=0, le=1)
    paraphrase_containment: float = Field(ge=0, le=1)
    dedup_selected_cosine: float = Field(ge=0, le=1)
    feedback_jaccard: float = Field(ge=0, le=1)
    feedback_containment: float = Field(ge=0, le=1)


class Thresholds(Strict):
    startup: float = Field(ge=0)
    recall: float = Field(ge=0)
    turn: float = Field(ge=0)


class Gate(Strict):
    """design §2.5: the query-relevance floor an item must clear to be admitted, per mode
    (`relevance.probability`, the fitted gate model; calibrated on the development sets), the
    cosine share of that blend, and each item's share of the budget for its extract."""

    startup: float = Field(ge=0, le=1)
    recall: float = Field(ge=0, le=1)
    turn: float = Field(ge=0, le=1)
    recall_relative: float = Field(ge=0, le=1)
    turn_relative: float = Field(ge=0, le=1)
    episode_relative: float = Field(ge=0, le=1)
    sibling: float = Field(ge=0, le=1)
    """The floor of a further section of a document already admitted."""
    short_document: int = Field(ge=0)
    """A document of at most this many tokens comes whole once one of its sections is admitted."""
    recall_censors: int = Field(ge=0)
    """A recall that asks whether it may do a thing carries this many standing constraints."""
    rarity_store_half: float = Field(gt=0)
    """A store of this many memories weighs its own IDF and background rarity equally."""
    kinds: dict[str, float] = Field(default_factory=dict)
    """A floor of its own for a kind (no relative floor), where its
    memories are calibrated apart: conversation episodes on LoCoMo."""
    item_share: float = Field(gt=0, le=1)
    confident: float = Field(ge=0, le=1)
    """An item whose relevance is below this has its extract's room cut in proportion (0: off)."""
    item_min: int = Field(ge=20)
    item_max: int = Field(ge=20)
    startup_item_max: int = Field(ge=20)
    model: dict[str, float]
    """The gate model's weights (`relevance.FEATURES` and `bias`), fitted by scripts/fit-gate."""


class Judge(Strict):
    """design §14: the reference judge (`context/judge.py`), a logistic model over
    `judge.FEATURES` fitted on LoCoMo's development conversations by `nous eval judge`, and the
    score from which an injected item counts as referenced."""

    model: dict[str, float]
    threshold: float = Field(gt=0, lt=1)


class Frames(Strict):
    budgets: dict[str, int]
    windows: dict[str, int]
    priorities: dict[str, dict[str, float]]
    text: dict[str, str]


class Layer(Strict):
    name: str
    title: str
    cap: int = Field(ge=0)
    always: bool = False
    fenced: bool = True
    """Memory lines go inside a data fence; the rules layer (the workspace's own instruction
    files) is rendered as the project's rules instead."""
    kinds: list[str]


class PlanDefaults(Strict):
    dominant_limit: int = Field(ge=0)
    other_limit: int = Field(ge=0)
    default_limit: int = Field(ge=0)
    recall_items_per_1k_tokens: int = Field(ge=0)
    kinds: list[str]


class Startup(Strict):
    universal: int = Field(ge=0)
    language: int = Field(ge=0)
    project: int = Field(ge=0)
    reserve: int = Field(ge=0)
    notes_impl: int = Field(ge=0)
    notes_dec: int = Field(ge=0)
    notes_block_next: int = Field(ge=0)


class Refresh(Strict):
    similarity: float = Field(ge=0, le=1)
    pressure: float = Field(ge=0, le=1)


class Calibration(Strict):
    """Seed 003's calibration note in a decision-frame context (design §14)."""

    min_reviewed: int = Field(default=5, ge=1)
    """Fewer reviewed decisions than this: no note."""
    recent: int = Field(default=50, ge=1)
    """How many of the most recently reviewed decisions the note measures."""
    partial: float = Field(default=0.5, ge=0, le=1)
    """The outcome value of a `partial` decision (success 1, failure 0)."""
    slight: float = Field(default=0.05, ge=0, le=1)
    """|mean confidence − accuracy| below this is well calibrated; from it, slightly off."""
    strong: float = Field(default=0.15, ge=0, le=1)
    """|mean confidence − accuracy| from this on is plainly over- or underconfident."""


class Profile(Strict):
    task_weight: float = Field(ge=0)
    project_weight: float = Field(ge=0)
    global_weight: float = Field(ge=0)
    preferred_kinds: list[str] = Field(default_factory=list)
    excluded_kinds: list[str] = Field(default_factory=list)
    min_importance: float = Field(default=0.0, ge=0, le=1)
    compression: float = Field(default=0.5, ge=0, le=1)
    preserve_head: int = Field(default=0, ge=0)
    preserve_tail: int = Field(default=0, ge=0)
    mode: str | None = None


class Config(Strict):
    weights: Weights
    scoring: Scoring
    thresholds: Thresholds
    gate: Gate
    judge: Judge
    frames: Frames
    layers: list[Layer]
    plan: PlanDefaults
    startup: Startup
    refresh: Refresh
    calibration: Calibration = Calibration()
    profiles: dict[str, Profile]

    def layer_of(self, kind: str) -> str:
        """The layer a kind renders in (the layer listing `*` takes the rest)."""
        fallback = "facts"
        for layer in self.layers:
            if kind in layer.kinds:
                return layer.name
            if "*" in layer.kinds:
                fallback = layer.name
        return fallback


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


@cache
def _defaults_raw() -> dict[str, Any]:
    text = resources.files("nous").joinpath("defaults.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def defaults() -> Config:
    return Config.model_validate(_defaults_raw())


def load(workspace: Path | str | None = None) -> tuple[Config, list[str]]:
    """The config for a workspace and the problems found in its override (if any)."""
    base = defaults()
    if workspace is None:
        return base, []
    path = Path(workspace) / ".nous" / "config.toml"
    if not path.is_file():
        return base, []
    try:
        override = tomllib.loads(path.read_text(encoding="utf-8"))
        return Config.model_validate(_merge(_defaults_raw(), override)), []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        problem = f"{path}: cannot read ({exc}); using the defaults"
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        problem = f"{path}: invalid value at {where}: {first['msg']}; using the defaults"
    log.warning(problem)
    return base, [problem]
