"""Seed 003's calibration note (design §14, issue 27 item 5): a decision-frame context carries the
accuracy and Brier score of the project's reviewed decisions once five exist; harvested ADRs,
which state no confidence, do not count."""

from __future__ import annotations

import re
from pathlib import Path

from nous import browsing
from nous.context import calibration, chat
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.protocol import ContextParams, UpdateParams
from nous.settings import Settings

QUESTION = "Should we switch the queue to Kafka?"

# (text, stated confidence, outcome); the outcome is logged after the write, as
# `nous edit --outcome` / `nous/update` does, except where noted
DECISIONS = [
    ("Use RabbitMQ for the order queue instead of Redis streams.", 0.9, "success"),
    ("Keep one Postgres database for orders and the outbox.", 0.8, "success"),
    ("Run the consumers on Kubernetes with the KEDA autoscaler.", 0.6, "failure"),
    ("Write the billing worker in Go rather than Python.", 0.7, "partial"),
    ("Adopt OpenTelemetry for tracing the queue consumers.", 0.95, "success"),
    ("Shard the events table by month.", 0.5, "success"),
]

ADR = """# 1. Use Kafka for the event bus

## Status

Accepted

## Decision

We will use Apache Kafka as the event bus between the order service and billing.
"""


def engine(tmp_path: Path, embedder: OnnxEmbedder, adr: bool = False) -> Engine:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    if adr:
        (ws / "docs" / "adr").mkdir(parents=True)
        (ws / "docs" / "adr" / "0001-use-kafka.md").write_text(ADR)
    return Engine(Settings(db=tmp_path / "m.db"), ws, embedder=embedder)


def review(e: Engine, decisions: list[tuple[str, float, str]]) -> None:
    for n, (text, confidence, outcome) in enumerate(decisions):
        if n == 0:  # remembered with its outcome at once (`nous remember --outcome`)
            e.remember(Draft(kind="decision", content=text, confidence=confidence,
                             outcome=outcome))  # fmt: skip
            continue
        memory = e.remember(Draft(kind="decision", content=text, confidence=confidence)).memory
        browsing.update(e, UpdateParams(id=memory.id, outcome=outcome))


def hand_brier(decisions: list[tuple[str, float, str]]) -> float:
    value = {"success": 1.0, "partial": 0.5, "failure": 0.0}
    return sum((c - value[o]) ** 2 for _, c, o in decisions) / len(decisions)


def frame_text(e: Engine) -> str:
    result = chat.context(e, ContextParams(input=QUESTION))
    assert result.frame == "decision"
    assert [s.layer for s in result.sections].count("frame") == 1
    assert "Current Approach: Decision" in result.text
    return result.text


def test_decision_frame_carries_the_note_with_the_hand_computed_brier(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    e = engine(tmp_path, real_embedder)
    review(e, DECISIONS)
    e.remember(Draft(kind="decision", content="Move the cron jobs to Temporal.", confidence=0.3))
    text = frame_text(e)
    # by hand: (0.9-1)² + (0.8-1)² + (0.6-0)² + (0.7-0.5)² + (0.95-1)² + (0.5-1)², over 6
    brier = (0.01 + 0.04 + 0.36 + 0.04 + 0.0025 + 0.25) / 6
    assert abs(brier - hand_brier(DECISIONS)) < 1e-12
    accuracy = (1 + 1 + 0 + 0.5 + 1 + 1) / 6  # 75 %; mean confidence 0.741…: well calibrated
    assert f"Brier: {brier:.3f}." in text  # 0.117
    assert f"Recent accuracy: {accuracy:.0%}." in text
    match = re.search(r"Recent accuracy: (\d+)%\. Brier: (\d\.\d{3})\. (.+?)\n", text)
    assert match is not None
    assert float(match.group(2)) == round(brier, 3)
    assert "Over the last 6 reviewed decisions: 4 succeeded, 1 partial, 1 failed" in text
    # the note sits in the frame layer, within the answer's budget
    assert text.index("Calibration note:") > text.index("## Current Approach: Decision")
    assert "pending" not in match.group(0)


def test_four_reviewed_decisions_give_no_note(tmp_path: Path, real_embedder: OnnxEmbedder) -> None:
    e = engine(tmp_path, real_embedder)
    review(e, DECISIONS[:4])
    e.remember(Draft(kind="decision", content="Move the cron jobs to Temporal.", confidence=0.3))
    text = frame_text(e)
    assert "Brier" not in text and "Calibration note" not in text


def test_harvested_adrs_do_not_count(tmp_path: Path, real_embedder: OnnxEmbedder) -> None:
    e = engine(tmp_path, real_embedder, adr=True)
    e.harvest(git_limit=0)
    scope = e.view().project_scope
    found = e.store.sources.live_from_source("file:docs/adr/", scope)
    adr = next(e.store.get(i) for i, kind, _ in found if kind == "decision")
    assert "adr" in adr.tags and adr.confidence == 1.0  # the harvest states no confidence
    browsing.update(e, UpdateParams(id=adr.id, outcome="failure"))
    review(e, DECISIONS[:4])
    assert e.store.metrics.reviewed_decisions(scope) == [
        (c, o) for _, c, o in reversed(DECISIONS[:4])
    ]
    assert "Brier" not in frame_text(e)  # four of the user's own and one ADR: no note
    review(e, DECISIONS[4:5])
    text = frame_text(e)
    assert f"Brier: {hand_brier(DECISIONS[:5]):.3f}." in text  # the ADR's 1.0 vs failure: not in
    assert "Over the last 5 reviewed decisions" in text


def test_the_verdict_follows_mean_confidence_against_accuracy() -> None:
    under = calibration.measure([(0.7, "success")] * 9 + [(0.7, "failure")])
    assert (under.accuracy, round(under.brier, 3)) == (0.9, 0.13)
    assert calibration.advice(under) == "Underconfident — trust your analysis."
    slightly = calibration.measure([(0.83, "success")] * 9 + [(0.83, "failure")])
    assert calibration.advice(slightly) == "Slightly underconfident — trust your analysis."
    over = calibration.measure([(0.95, "success"), (0.95, "failure")])
    assert calibration.advice(over).startswith("Overconfident")
    assert calibration.advice(calibration.measure([(1.0, "success")])).startswith("Well")
    seed = calibration.render(calibration.measure([(0.9, "success")] * 29 + [(0.9, "partial")]))
    assert seed.startswith("Recent accuracy: 98%. Brier: 0.015. Slightly underconfident")
