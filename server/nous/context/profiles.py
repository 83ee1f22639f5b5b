"""Profiles (design §5): what context an agent role prefers, and the task-mode adjustment."""

from __future__ import annotations

from nous.context.config import Config, Profile
from nous.errors import NousError

IMPLEMENT_TASKS = frozenset({"coding", "debugging", "testing"})
ANALYSIS_TASKS = frozenset({"architecture", "review", "documentation"})


class UnknownProfile(NousError, ValueError):
    """No built-in or configured profile has that name (a client error, -32602 on the wire)."""


def get(config: Config, name: str | None) -> tuple[str, Profile]:
    key = name or "default"
    if key not in config.profiles:
        raise UnknownProfile(
            f"unknown profile {key!r} (known: {', '.join(sorted(config.profiles))})"
        )
    return key, config.profiles[key]


def tier_weights(profile: Profile, task: str | None) -> dict[str, float]:
    """Task / project / global weights after the task-mode adjustment, normalised to sum 1."""
    weights = {
        "task": profile.task_weight,
        "project": profile.project_weight,
        "global": profile.global_weight,
    }
    mode = profile.mode or (
        "implement" if task in IMPLEMENT_TASKS else "analysis" if task in ANALYSIS_TASKS else None
    )
    if mode == "implement":
        weights["task"] *= 1.2
        weights["project"] *= 0.9
    elif mode == "analysis":
        weights["task"] *= 0.9
        weights["project"] *= 1.2
    total = sum(weights.values()) or 1.0
    return {k: v / total for k, v in weights.items()}


def tier(kind: str, scope: str) -> str:
    """Session notes are the task tier; project memories the project tier; the rest global."""
    if kind == "note":
        return "task"
    return "project" if scope.startswith("project:") else "global"


def tier_factor(weights: dict[str, float], kind: str, scope: str) -> float:
    """Weight relative to an even split (1.0 when all tiers weigh the same)."""
    return weights[tier(kind, scope)] * len(weights)
