"""Seed 003's calibration note (design §14): how well the confidence of the project's reviewed
decisions matched their outcomes, said in one short paragraph at the end of a decision-frame
context's "Current Approach" layer.

A decision's confidence is its stated probability of success; its outcome is worth 1 (success),
`calibration.partial` (partial, 0.5 by default) or 0 (failure). Over the most recently reviewed
`calibration.recent` decisions of the project (`Store.reviewed_decisions`: harvested
records, which state no confidence, do not count):

- accuracy = mean outcome value (the share that turned out right, a partial counting half);
- Brier = mean of (confidence − outcome value)²;
- mean confidence above accuracy is overconfidence, below it underconfidence.

Fewer than `calibration.min_reviewed` reviewed decisions: no note."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nous.context.config import Config
from nous.context.render import Block
from nous.memory.interface import Store

FRAME_LAYER = "frame"
NOTE_HEADING = "Calibration note:"


@dataclass(frozen=True)
class Calibration:
    count: int
    accuracy: float
    brier: float
    confidence: float
    """Mean stated confidence."""
    outcomes: dict[str, int]


def measure(decisions: Sequence[tuple[float, str]], partial: float = 0.5) -> Calibration:
    """Accuracy, Brier score and mean confidence of (confidence, outcome) pairs (not empty)."""
    values = {"success": 1.0, "partial": partial, "failure": 0.0}
    pairs = [(c, values[o]) for c, o in decisions]
    n = len(pairs)
    outcomes = {o: sum(1 for _, x in decisions if x == o) for o in values}
    return Calibration(
        count=n,
        accuracy=sum(v for _, v in pairs) / n,
        brier=sum((c - v) ** 2 for c, v in pairs) / n,
        confidence=sum(c for c, _ in pairs) / n,
        outcomes=outcomes,
    )


def advice(measured: Calibration, slight: float = 0.05, strong: float = 0.15) -> str:
    """Seed 003's verdict: over- or underconfident (mean confidence vs accuracy), and what to do."""
    gap = measured.confidence - measured.accuracy
    if abs(gap) < slight:
        return "Well calibrated — your confidence matches outcomes."
    verdict = "overconfident" if gap > 0 else "underconfident"
    if abs(gap) < strong:
        verdict = f"slightly {verdict}"
    if gap > 0:
        return f"{verdict.capitalize()} — weigh the alternatives and the risks before committing."
    return f"{verdict.capitalize()} — trust your analysis."


def render(measured: Calibration, slight: float = 0.05, strong: float = 0.15) -> str:
    """The note: seed 003's line, then what it was measured on (about 50 tokens)."""
    counts = measured.outcomes
    return (
        f"Recent accuracy: {measured.accuracy:.0%}. Brier: {measured.brier:.3f}. "
        f"{advice(measured, slight, strong)}\n"
        f"(Over the last {measured.count} reviewed decisions: {counts['success']} succeeded, "
        f"{counts['partial']} partial, {counts['failure']} failed; "
        f"mean stated confidence {measured.confidence:.0%}.)"
    )


def note(store: Store, config: Config, scope: str) -> str | None:
    """The calibration note of the project `scope`, or None with too few reviewed decisions."""
    settings = config.calibration
    decisions = store.metrics.reviewed_decisions(scope, settings.recent)
    if len(decisions) < settings.min_reviewed:
        return None
    measured = measure(decisions, settings.partial)
    return render(measured, settings.slight, settings.strong)


def add_note(blocks: Sequence[Block], store: Store, config: Config, scope: str) -> None:
    """Append the note to the frame layer's text (the "Current Approach" a decision-frame turn
    always carries), when there is one to give."""
    said = note(store, config, scope)
    layer = next((b for b in blocks if b.name == FRAME_LAYER), None)
    if said and layer is not None:
        layer.fixed = f"{layer.fixed}\n\n{NOTE_HEADING}\n{said}" if layer.fixed else said
