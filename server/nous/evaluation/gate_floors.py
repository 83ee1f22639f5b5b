"""Choose the gate's floors leave-one-repository-out through the real pipeline (design §9: every
fitted number is chosen leave-one-repository-out).

The row-level fit (`gate_fit`) knows which candidates hold an answer, but not what the budget does
with them: admitting more items shrinks each item's extract and can cut the answer away. So the
floor and the relative floor are chosen on the pipeline's own strict hits: each tune repository
is harvested once; every (floor, relative) of the grid answers its questions in recall and turn
mode, each repository with the gate model fitted without it (`gate_fit.fold_gates`); per fold, the
setting that maximises the objective on the other five is scored on the sixth. A recall's and a
turn's relative floors are chosen apart (`choose_from`).

    scripts/fit-gate --floors [--from-rows FILE]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nous.engine import Engine
from nous.evaluation import repos
from nous.evaluation.data import TUNE, RepoQuestion, load_repo_questions
from nous.evaluation.harness import progress
from nous.evaluation.repos_metrics import judge
from nous.memory.embedder import Embedder
from nous.settings import Settings

FLOORS = (0.1, 0.15, 0.2, 0.3)
RELATIVES = (0.0, 0.3, 0.5)
SIBLINGS = (0.02, 0.05, 1.0)
"""The floor of a further section of an admitted document (1.0: the floor itself)."""
MODES = ("recall", "turn")
TOKENS = 0.001
"""The objective: mean strict hit over both modes, less TOKENS per retrieved token on a
no-answer question (100 tokens cost 0.1), less PRECISION times the share of wrong items."""
PRECISION = 0.1


def _answers(
    engine: Engine, questions: Sequence[RepoQuestion], gate: dict[str, Any]
) -> list[dict[str, Any]]:
    base = engine.config
    engine.config = base.model_copy(update={"gate": base.gate.model_copy(update=gate)})
    out = []
    try:
        for q in questions:
            for mode in MODES:
                result = repos._ask(engine, mode, q.question)
                items, _ = repos._nous(result)
                j = judge(items, q.expected_files, q.key_phrases)
                out.append({"kind": q.kind, "mode": mode, "strict": j.strict,
                            "precision": j.precision, "tokens": j.tokens})  # fmt: skip
    finally:
        engine.config = base
    return out


def objective(answers: list[dict[str, Any]]) -> dict[str, float]:
    ans = [a for a in answers if a["kind"] == "answerable"]
    none = [a for a in answers if a["kind"] == "no-answer"]
    hit = float(np.mean([a["strict"] for a in ans])) if ans else 0.0
    precision = float(np.mean([a["precision"] for a in ans])) if ans else 0.0
    noise = float(np.mean([a["tokens"] for a in none])) if none else 0.0
    value = hit - TOKENS * noise - PRECISION * (1 - precision)
    return {"hit": round(hit, 4), "precision": round(precision, 4),
            "noAnswerTokens": round(noise, 1), "objective": round(value, 4)}  # fmt: skip


def choose(root: Path, embedder: Embedder, folds: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The floors, chosen per fold with the gate `gate_fit.fold_gates` fitted without the fold's
    repository (passed in: this module is run by gate_fit's command, it imports none of it)."""
    import tempfile

    questions = load_repo_questions(root)
    grid = list(itertools.product(FLOORS, RELATIVES, SIBLINGS))
    answers: Answers = {}
    for repo in TUNE:
        asked = [q for q in questions if q.repo == repo and q.kind != "greeting"]
        with tempfile.TemporaryDirectory(prefix="nous-floors-") as tmp:
            ws = Path(tmp) / repo
            repos.copy_repository(root / repo, ws)
            engine = Engine(Settings(db=Path(tmp) / "m.db"), ws, embedder=embedder)
            try:
                engine.harvest()
                for floor, rel, sib in grid:
                    gate = folds[repo] | settings(floor, rel, rel, sib)
                    answers[(repo, floor, rel, sib)] = _answers(engine, asked, gate)
            finally:
                engine.store.close()
        progress(f"floors: {repo} done ({len(grid)} settings)")
    return choose_from(answers, TUNE)


Answers = dict[tuple[str, float, float, float], list[dict[str, Any]]]
"""(repository, floor, relative, sibling) → its answers in both modes, each mode with that
relative floor."""


def choose_from(answers: Answers, names: Sequence[str]) -> dict[str, Any]:
    """The setting (floor, recall's relative floor, a turn's, sibling) that maximises the
    objective, in sample and per fold on the other repositories. A recall's answers do not read
    `turn_relative` nor a turn's `recall_relative`, so each mode's relative floor is chosen apart
    from the same runs: a recall's budget binds (a further item shrinks the others' extracts),
    a turn's six thousand tokens do not."""
    grid = list(itertools.product(FLOORS, RELATIVES, RELATIVES, SIBLINGS))

    def pooled(repos_: Sequence[str], floor: float, rr: float, tr: float, sib: float
               ) -> dict[str, float]:  # fmt: skip
        return objective([
            a for n in repos_
            for rel, mode in ((rr, "recall"), (tr, "turn"))
            for a in answers[(n, floor, rel, sib)] if a["mode"] == mode
        ])  # fmt: skip

    def best(repos_: Sequence[str]) -> tuple[float, float, float, float]:
        return max(grid, key=lambda s: (pooled(repos_, *s)["objective"], s[0], s[1], s[2], s[3]))

    out_folds: dict[str, dict[str, Any]] = {}
    held: list[dict[str, Any]] = []
    for repo in names:
        floor, rr, tr, sib = best([n for n in names if n != repo])
        out_folds[repo] = settings(floor, rr, tr, sib) | {
            "floor": floor, "relative": rr, "turnRelative": tr,
            "heldOut": pooled([repo], floor, rr, tr, sib),
        }  # fmt: skip
        held += [a for rel, mode in ((rr, "recall"), (tr, "turn"))
                 for a in answers[(repo, floor, rel, sib)] if a["mode"] == mode]  # fmt: skip
    floor, rr, tr, sib = best(names)
    return {
        "grid": {f"{f}/{r}/{t}/{b}": pooled(names, f, r, t, b) for f, r, t, b in grid},
        "folds": out_folds,
        "leaveOneOut": objective(held),
        "chosen": settings(floor, rr, tr, sib)
        | {"floor": floor, "relative": rr, "turnRelative": tr,
           "inSample": pooled(names, floor, rr, tr, sib)},
    }  # fmt: skip


def settings(floor: float, relative: float, turn_relative: float, sibling: float
             ) -> dict[str, float]:  # fmt: skip
    """`[gate]` floors for one point of the grid."""
    return {"startup": floor, "recall": floor, "turn": floor, "recall_relative": relative,
            "turn_relative": turn_relative, "sibling": min(sibling, floor)}  # fmt: skip
