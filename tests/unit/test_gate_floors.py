"""`gate_floors.choose_from`: the floors chosen from the pipeline's answers, each mode's relative
floor apart, in sample and per fold without the held-out repository (hand-made answers: the
pure choice; the real runs go through `scripts/fit-gate --floors`)."""

from __future__ import annotations

from typing import Any

from nous.evaluation import gate_floors
from nous.evaluation.gate_floors import FLOORS, RELATIVES, SIBLINGS, choose_from


def _answers(hits: dict[tuple[str, float], bool]) -> gate_floors.Answers:
    """Every grid point of repositories "a", "b" and "c": one answerable question per mode, a
    hit where `hits[(mode, relative)]` says so (any floor, any sibling), and one no-answer
    question per mode with no tokens."""
    out: gate_floors.Answers = {}
    for repo in ("a", "b", "c"):
        for floor in FLOORS:
            for rel in RELATIVES:
                for sib in SIBLINGS:
                    rows: list[dict[str, Any]] = []
                    for mode in ("recall", "turn"):
                        strict = hits.get((mode, rel), False)
                        rows.append({"kind": "answerable", "mode": mode, "strict": strict,
                                     "precision": 1.0, "tokens": 100})  # fmt: skip
                        rows.append({"kind": "no-answer", "mode": mode, "strict": False,
                                     "precision": 0.0, "tokens": 0})  # fmt: skip
                    out[(repo, floor, rel, sib)] = rows
    return out


def test_each_mode_keeps_its_own_relative_floor() -> None:
    # recall hits only at the strictest relative floor, a turn only with none
    answers = _answers({("recall", 0.5): True, ("turn", 0.0): True})
    chosen = choose_from(answers, ["a", "b", "c"])["chosen"]
    assert chosen["recall_relative"] == 0.5
    assert chosen["turn_relative"] == 0.0
    assert chosen["inSample"]["hit"] == 1.0
    # one relative floor for both modes could only get half of the hits
    tied = [v["hit"] for k, v in choose_from(answers, ["a", "b", "c"])["grid"].items()
            if k.split("/")[1] == k.split("/")[2]]  # fmt: skip
    assert max(tied) == 0.5


def test_folds_choose_without_the_held_out_repository() -> None:
    answers = _answers({("recall", 0.5): True, ("turn", 0.3): True})
    # in "c" alone, a turn hits with no relative floor instead
    for floor in FLOORS:
        for rel in RELATIVES:
            for sib in SIBLINGS:
                for row in answers[("c", floor, rel, sib)]:
                    if row["mode"] == "turn" and row["kind"] == "answerable":
                        row["strict"] = rel == 0.0
    result = choose_from(answers, ["a", "b", "c"])
    assert result["folds"]["c"]["turn_relative"] == 0.3  # chosen on "a" and "b"
    assert result["folds"]["c"]["heldOut"]["hit"] == 0.5  # and so it misses c's turn
    # "a" is chosen on "b" and "c", which tie (one turn hit either way): the higher floor
    assert result["folds"]["a"]["turn_relative"] == 0.3
    assert result["leaveOneOut"]["hit"] == round(5 / 6, 4)  # all recalls, and a's and b's turns


def test_ties_keep_the_higher_floors() -> None:
    chosen = choose_from(_answers({}), ["a", "b"])["chosen"]
    assert chosen["floor"] == max(FLOORS)
    assert (chosen["recall_relative"], chosen["turn_relative"]) == (max(RELATIVES),) * 2
    assert chosen["sibling"] == min(max(SIBLINGS), max(FLOORS))
