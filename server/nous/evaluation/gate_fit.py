"""Fit the gate (design §2.5: a relevance floor that means the same thing in every store), and
choose every fitted number leave-one-repository-out.

For every question of the repository development set's **tune** split, in each repository and
in its **mini** variant (tens of memories: the features must not collapse on small stores), every
candidate the search returns is a row of `relevance.FEATURES`; its label is 1 when it comes from
an expected file and holds a key phrase. A logistic regression (L2, plain numpy, classes *not*
re-weighted, so its output is a calibrated probability) is fitted six times on five repositories
and scored on the sixth. The held-out predictions give the reliability table and the floors:
per fold, the floor and the relative floor (a share of the question's best candidate) that
maximise hits less noise on the five are chosen and scored on the sixth. The **check** split is
scored with the fit on all six. Prints the TOML for `defaults.toml [gate]`.

    scripts/fit-gate [--data DIR] [--out FILE] [--rows FILE | --from-rows FILE]
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from nous.context import intent as intents
from nous.context import relevance, search
from nous.engine import Engine
from nous.evaluation.data import CHECK, TUNE, RepoQuestion, load_repo_questions, repos_dir
from nous.evaluation.harness import progress
from nous.memory.embedder import Embedder, default_embedder
from nous.settings import Settings

L2 = 3e-5
"""The L2 penalty per row, chosen from `L2_GRID` by leave-one-repository-out log loss (the
report's `l2` section; at the fit of docs/benchmarks.md: 3e-4 0.0255, 1e-4 0.0241, 3e-5 0.0238,
1e-5 0.0238)."""
L2_GRID = (3e-4, 1e-4, 3e-5, 1e-5)
VARIANTS = ("full", "mini")
FLOORS = tuple(round(0.02 * i, 2) for i in range(1, 46))
RELATIVES = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
NOISE = 0.15
"""The objective a floor maximises: the hit share of answerable questions, less NOISE per item
admitted on a no-answer question, less NEGATIVE per wrong item on an answerable one."""
NEGATIVE = 0.02


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


@contextmanager
def workspace(
    root: Path, repo: str, variant: str, questions: Sequence[RepoQuestion]
) -> Iterator[Path]:
    """A temp copy of `repo` (`full`, or its `mini` variant) without SOURCE.md."""
    from nous.evaluation.repos import copy_mini, copy_repository

    with tempfile.TemporaryDirectory(prefix=f"nous-gate-{variant}-") as tmp:
        ws = Path(tmp) / repo
        if variant == "mini":
            copy_mini(root / repo, ws, questions)
        else:
            copy_repository(root / repo, ws)
        yield ws


def rows(
    root: Path, embedder: Embedder, repos: Sequence[str] = (*TUNE, *CHECK),
    variants: Sequence[str] = VARIANTS, store_half: float = relevance.STORE_HALF,
) -> list[dict[str, Any]]:  # fmt: skip
    """One row per (question, candidate): repo, variant, question id, kind, features, label."""
    out: list[dict[str, Any]] = []
    questions = load_repo_questions(root)
    for repo in repos:
        for variant in variants:
            with workspace(root, repo, variant, questions) as ws:
                engine = Engine(Settings(db=ws.parent / "m.db"), ws, embedder=embedder)
                try:
                    engine.harvest()
                    out += _question_rows(engine, repo, variant, questions, store_half)
                finally:
                    engine.store.close()
            progress(f"fit-gate: {repo} ({variant}) done")
    return out


def _question_rows(
    engine: Engine, repo: str, variant: str, questions: Sequence[RepoQuestion], store_half: float
) -> list[dict[str, Any]]:
    store = engine.store
    out = []
    for q in (q for q in questions if q.repo == repo and q.kind != "greeting"):
        vector = store.embed(q.question)
        words = relevance.expand(q.question)
        cosine, lexical = search.signals(store, words, vector, engine.scopes())
        frequencies, total = store.document_frequencies(relevance.query_words(words))
        query = relevance.query(words, frequencies, total, store_half)
        best = max(cosine.values(), default=0.0)
        intent = intents.signals(q.question)
        asked = relevance.asked_kinds(intent.dominant_hint, intent.permission)
        for memory_id, memory in store.get_many(list(cosine)).items():
            path = (memory.source or "").removeprefix("file:").split("#")[0]
            text = _norm(memory.content)
            label = (
                q.kind == "answerable"
                and path in q.expected_files
                and any(_norm(k) in text for k in q.key_phrases)
            )
            values = relevance.features(query, memory.content, cosine[memory_id],
                                        lexical.get(memory_id, 0.0), best,
                                        memory.kind in asked)  # fmt: skip
            out.append({"repo": repo, "variant": variant, "id": q.id, "kind": q.kind,
                        "x": values, "y": int(label)})  # fmt: skip
    return out


def fit(x: np.ndarray, y: np.ndarray, iterations: int = 50, l2: float | None = None) -> np.ndarray:
    """Weights [bias, *features] of an L2 logistic regression (Newton steps; every row weighs
    the same, so the output is a probability, not a balanced score)."""
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(design.shape[1])
    penalty = (L2 if l2 is None else l2) * len(y) * np.diag([0.0, *([1.0] * x.shape[1])])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(design @ w, -30, 30)))
        grad = design.T @ (p - y) + penalty @ w
        hess = (design * (p * (1 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hess + 1e-9 * np.eye(len(w)), grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1 / (1 + np.exp(-np.clip(w[0] + x @ w[1:], -30, 30)))
    return out


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    if not n_pos or not n_neg:
        return float("nan")
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _groups(data: list[dict[str, Any]], p: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray]]:
    by: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(data):
        by.setdefault((r["variant"], r["id"]), []).append(i)
    y = np.array([r["y"] for r in data])
    return [(data[ix[0]]["kind"], p[ix], y[ix]) for ix in map(np.array, by.values())]


def gate_outcome(
    groups: list[tuple[str, np.ndarray, np.ndarray]], floor: float, relative: float
) -> dict[str, float]:
    """What a floor does to each question: hit share (answerable), items admitted on no-answer
    questions, wrong items admitted on answerable ones, and the objective."""
    hits, wrong, noise, answerable, none = 0, 0, 0, 0, 0
    for kind, p, y in groups:
        if not len(p):
            continue
        admitted = p >= max(floor, relative * float(p.max()))
        if kind == "answerable":
            answerable += 1
            hits += bool((admitted & (y == 1)).any())
            wrong += int((admitted & (y == 0)).sum())
        else:
            none += 1
            noise += int(admitted.sum())
    hit = hits / max(1, answerable)
    noise_rate, wrong_rate = noise / max(1, none), wrong / max(1, answerable)
    return {"hit": round(hit, 4), "noise": round(noise_rate, 3), "wrong": round(wrong_rate, 3),
            "objective": round(hit - NOISE * noise_rate - NEGATIVE * wrong_rate, 4)}  # fmt: skip


def choose_floor(groups: list[tuple[str, np.ndarray, np.ndarray]]) -> tuple[float, float]:
    best = max(
        ((f, r) for f in FLOORS for r in RELATIVES),
        key=lambda fr: (gate_outcome(groups, *fr)["objective"], fr[0]),
    )
    return best


def reliability(p: np.ndarray, y: np.ndarray) -> list[dict[str, Any]]:
    """Predicted against observed, in bins of predicted probability."""
    edges = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0001]
    out = []
    for lo, hi in pairwise(edges):
        ix = (p >= lo) & (p < hi)
        if ix.sum():
            out.append({"bin": f"{lo:.2f}–{min(hi, 1):.2f}", "rows": int(ix.sum()),
                        "predicted": round(float(p[ix].mean()), 3),
                        "observed": round(float(y[ix].mean()), 3)})  # fmt: skip
    return out


def log_loss_by_l2(x: np.ndarray, y: np.ndarray, repos: list[str]) -> dict[str, float]:
    """Leave-one-repository-out log loss per row for each penalty of `L2_GRID`."""
    out = {}
    for l2 in L2_GRID:
        total = 0.0
        for repo in TUNE:
            test = np.array([r == repo for r in repos])
            if not test.any() or test.all():
                continue
            p = np.clip(predict(fit(x[~test], y[~test], l2=l2), x[test]), 1e-6, 1 - 1e-6)
            total -= float((y[test] * np.log(p) + (1 - y[test]) * np.log(1 - p)).sum())
        out[f"{l2:g}"] = round(total / max(1, len(y)), 5)
    return out


def report(data: list[dict[str, Any]]) -> dict[str, Any]:
    tune = [r for r in data if r["repo"] in TUNE]
    check = [r for r in data if r["repo"] in CHECK]
    x = np.array([r["x"] for r in tune])
    y = np.array([r["y"] for r in tune])
    l2 = log_loss_by_l2(x, y, [r["repo"] for r in tune])
    held_p = np.zeros(len(tune))
    folds: dict[str, Any] = {}
    for repo in TUNE:
        train = np.array([r["repo"] != repo for r in tune])
        if train.all():
            continue
        w = fit(x[train], y[train])
        train_rows = [r for r, t in zip(tune, train, strict=True) if t]
        floor, rel = choose_floor(_groups(train_rows, predict(w, x[train])))
        held_p[~train] = predict(w, x[~train])
        test_rows = [r for r, t in zip(tune, train, strict=True) if not t]
        held_groups = _groups(test_rows, held_p[~train])
        folds[repo] = {
            "auc": round(auc(held_p[~train], y[~train]), 3), "floor": floor, "relative": rel,
            "heldOut": gate_outcome(held_groups, floor, rel),
            "inSample": gate_outcome(_groups(test_rows, predict(fit(x, y), x[~train])),
                                     *choose_floor(_groups(tune, predict(fit(x, y), x)))),
        }  # fmt: skip
    w = fit(x, y)
    floor, rel = choose_floor(_groups(tune, predict(w, x)))
    names = ["bias", *relevance.FEATURES]
    out: dict[str, Any] = {
        "model": {n: round(float(v), 3) for n, v in zip(names, w, strict=True)},
        "floor": floor, "relative": rel, "rows": len(y), "positives": int(y.sum()),
        "l2": {"chosen": L2, "leaveOneOutLogLoss": l2},
        "folds": folds,
        "leaveOneOut": gate_outcome(_groups(tune, held_p), 0, 0) | {
            "auc": round(auc(held_p, y), 3),
            "mean": {k: round(float(np.mean([f["heldOut"][k] for f in folds.values()])), 4)
                     for k in ("hit", "noise", "wrong")},
        },
        "tuneInSample": gate_outcome(_groups(tune, predict(w, x)), floor, rel),
        "reliabilityLeaveOneOut": reliability(held_p, y),
        "featureAuc": {f: round(auc(x[:, i], y), 3) for i, f in enumerate(relevance.FEATURES)},
    }  # fmt: skip
    if check:
        cx = np.array([r["x"] for r in check])
        cy = np.array([r["y"] for r in check])
        cp = predict(w, cx)
        out["check"] = gate_outcome(_groups(check, cp), floor, rel) | {"auc": round(auc(cp, cy), 3)}
        out["reliabilityCheck"] = reliability(cp, cy)
        for variant in VARIANTS:
            part = [i for i, r in enumerate(check) if r["variant"] == variant]
            if part:
                groups = _groups([check[i] for i in part], cp[part])
                out[f"check_{variant}"] = gate_outcome(groups, floor, rel)
    return out


def gate_settings(w: np.ndarray, floor: float, relative: float) -> dict[str, Any]:
    """`[gate]` settings for a fit: the model's weights, one floor for every mode, and the
    relative floor of recall and turn."""
    names = ["bias", *relevance.FEATURES]
    return {
        "model": {n: round(float(v), 3) for n, v in zip(names, w, strict=True)},
        "startup": floor, "recall": floor, "turn": floor,
        "recall_relative": relative, "turn_relative": relative,
    }  # fmt: skip


def fold_gates(data: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{tune repository: the gate fitted, and its floors chosen, on the other five}."""
    tune = [r for r in data if r["repo"] in TUNE]
    out = {}
    for repo in TUNE:
        train = [r for r in tune if r["repo"] != repo]
        if len(train) == len(tune):
            continue
        x = np.array([r["x"] for r in train])
        w = fit(x, np.array([r["y"] for r in train]))
        out[repo] = gate_settings(w, *choose_floor(_groups(train, predict(w, x))))
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="fit-gate", description=__doc__)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--rows", type=Path, help="keep the feature rows here (JSON) …")
    parser.add_argument("--from-rows", type=Path, help="… and fit from them again later")
    parser.add_argument("--store-half", type=float, default=relevance.STORE_HALF)
    parser.add_argument(
        "--floors", action="store_true",
        help="also choose the floors leave-one-repository-out through the pipeline (gate_floors)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    from nous import settings
    from nous.evaluation.data import data_dir

    loaded, _ = settings.load(env=settings.environment())  # the one read
    settings.install(loaded)
    args.data = args.data or loaded.eval_data

    if args.from_rows:
        data = json.loads(args.from_rows.read_text(encoding="utf-8"))
    else:
        data = rows(repos_dir(data_dir(args.data)), default_embedder(), store_half=args.store_half)
    if args.rows:
        args.rows.write_text(json.dumps(data), encoding="utf-8")
    result = report(data)
    if args.floors:
        from nous.evaluation import gate_floors

        result["floors"] = gate_floors.choose(
            repos_dir(data_dir(args.data)), default_embedder(), fold_gates(data)
        )
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    inline = ", ".join(f"{k} = {v}" for k, v in result["model"].items())
    print(f"model = {{ {inline} }}")
    print(f"row-level floor = {result['floor']}, relative = {result['relative']}")
    if args.floors:
        chosen = result["floors"]["chosen"]
        print(f"pipeline floor (startup, recall, turn) = {chosen['floor']}, "
              f"relative = {chosen['relative']} (recall), {chosen['turnRelative']} (turn), "
              f"sibling = {chosen['sibling']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
