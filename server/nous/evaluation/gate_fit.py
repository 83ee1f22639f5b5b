"""Fit the gate model (SPEC §2.5: a relevance floor calibrated on the development sets).

For every question of the repository development set, every candidate the search returns is a
row of `relevance.FEATURES`; its label is 1 when it comes from an expected file and holds a key
phrase. A logistic regression (L2, classes balanced, plain numpy) is fitted on all repositories;
leave-one-repository-out fits report how well the weights carry to a repository they never saw
(ROC AUC, and the share of answerable questions whose best positive outranks every candidate of
the no-answer questions). Prints the TOML line for `defaults.toml [gate] model`.

    scripts/fit-gate [--data DIR] [--out FILE]
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from nous.context import relevance, search
from nous.engine import Engine
from nous.evaluation.data import load_repo_questions, repos_dir
from nous.evaluation.harness import progress
from nous.memory.embedder import Embedder, default_embedder
from nous.settings import Settings

L2 = 0.01


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def rows(root: Path, embedder: Embedder) -> list[dict[str, Any]]:
    """One row per (question, candidate): repo, question id, kind, features, label."""
    out: list[dict[str, Any]] = []
    questions = load_repo_questions(root)
    for repo in sorted({q.repo for q in questions}):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / repo
            shutil.copytree(root / repo, ws, ignore=shutil.ignore_patterns("SOURCE.md"))
            engine = Engine(Settings(db=Path(tmp) / "m.db"), ws, embedder=embedder)
            engine.harvest()
            store = engine.store
            progress(f"fit-gate: {repo} harvested")
            for q in (q for q in questions if q.repo == repo and q.kind != "greeting"):
                vector = store.embed(q.question)
                words = relevance.expand(q.question)
                cosine, lexical = search.signals(store, words, vector, engine.scopes())
                frequencies, total = store.document_frequencies(relevance.query_words(words))
                query = relevance.query(words, frequencies, total)
                unknown = relevance.unknown_share(relevance.query(q.question, frequencies, total))
                for memory_id, memory in store.get_many(list(cosine)).items():
                    path = (memory.source or "").removeprefix("file:").split("#")[0]
                    text = _norm(memory.content)
                    label = (
                        q.kind == "answerable"
                        and path in q.expected_files
                        and any(_norm(k) in text for k in q.key_phrases)
                    )
                    values = relevance.features(query, memory.content, cosine[memory_id],
                                                lexical.get(memory_id, 0.0), unknown)  # fmt: skip
                    out.append({"repo": repo, "id": q.id, "kind": q.kind,
                                "x": values, "y": int(label)})  # fmt: skip
    return out


def fit(x: np.ndarray, y: np.ndarray, steps: int = 4000, rate: float = 0.5) -> np.ndarray:
    """Weights [bias, *features] of an L2 logistic regression with balanced classes."""
    design = np.hstack([np.ones((len(x), 1)), x])
    positive = max(1, int(y.sum()))
    weight = np.where(y == 1, len(y) / (2 * positive), len(y) / (2 * max(1, len(y) - positive)))
    w = np.zeros(design.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(design @ w)))
        grad = design.T @ (weight * (p - y)) / len(y) + L2 * np.r_[0, w[1:]]
        w -= rate * grad
    return w


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    if not n_pos or not n_neg:
        return float("nan")
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def report(data: list[dict[str, Any]]) -> dict[str, Any]:
    x = np.array([r["x"] for r in data])
    y = np.array([r["y"] for r in data])
    repos = sorted({r["repo"] for r in data})
    held: dict[str, Any] = {}
    for repo in repos:
        train = np.array([r["repo"] != repo for r in data])
        w = fit(x[train], y[train])
        test = ~train
        scores = np.hstack([np.ones((test.sum(), 1)), x[test]]) @ w
        held[repo] = {"auc": round(auc(scores, y[test]), 3)}
    w = fit(x, y)
    names = ["bias", *relevance.FEATURES]
    model = {n: round(float(v), 3) for n, v in zip(names, w, strict=True)}
    baseline = {f: round(auc(x[:, i], y), 3) for i, f in enumerate(relevance.FEATURES)}
    return {
        "model": model, "heldOutAuc": held, "featureAuc": baseline, "rows": len(y),
        "positives": int(y.sum()), "questions": separation(data, w),
    }  # fmt: skip


def separation(data: list[dict[str, Any]], w: np.ndarray) -> dict[str, Any]:
    """Per question: the best positive's probability and rank, and each no-answer question's
    top probability (what a floor must refuse)."""
    by_q: dict[str, list[tuple[float, int]]] = {}
    kind: dict[str, str] = {}
    for r in data:
        z = float(w[0] + np.dot(w[1:], r["x"]))
        by_q.setdefault(r["id"], []).append((1 / (1 + np.exp(-z)), r["y"]))
        kind[r["id"]] = r["kind"]
    answer, none = {}, {}
    for qid, scored in by_q.items():
        scored.sort(key=lambda pair: -pair[0])
        if kind[qid] == "no-answer":
            none[qid] = round(scored[0][0], 3)
            continue
        hit = next(((n, p) for n, (p, y) in enumerate(scored, 1) if y), None)
        answer[qid] = {"rank": hit[0], "p": round(hit[1], 3)} if hit else None
    return {"answerable": answer, "noAnswerTop": none}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="fit-gate", description=__doc__)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--rows", type=Path, help="keep the feature rows here (JSON) …")
    parser.add_argument("--from-rows", type=Path, help="… and fit from them again later")
    args = parser.parse_args(argv)
    from nous.evaluation.data import data_dir

    if args.from_rows:
        data = json.loads(args.from_rows.read_text(encoding="utf-8"))
    else:
        data = rows(repos_dir(data_dir(args.data)), default_embedder())
    if args.rows:
        args.rows.write_text(json.dumps(data), encoding="utf-8")
    result = report(data)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    inline = ", ".join(f"{k} = {v}" for k, v in result["model"].items())
    print(f"model = {{ {inline} }}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
