"""The reference judge on labelled data nobody on the team wrote (design §14): LoCoMo's QA.

For each question (categories 1–4: the adversarial ones have no answer), the **reply** is its
gold answer. The **injected items** are the question's evidence turns (the answer used them:
referenced) and the `NEGATIVES` other turns of the same conversation closest to the question by
the same model (retrieved beside them, not used: not referenced), each as Nous stores a turn
(`locomo.DEFAULT_FORMAT`). Every item is a row of `judge.FEATURES`.

The judge is fitted and reported on the answers of at least `MIN_WORDS` content words ("Adoption
agencies" is two; "7 May 2023", "Yes" and "Sweden" judge nothing); all answers are reported too.
The question is not put into the reply: the hard negatives were retrieved *by* the question, so
a reply that says it again matches them best, and the model learns that meaning counts against
a reference (a fit on "question + answer" gave the cosine a weight of −5.6).

`fitted` fits the logistic model on the development conversations (L2, the gate's Newton steps)
and picks the threshold that maximises F1 there; `run` reports precision, recall and F1 of the
configured judge (`[judge]` in defaults.toml) beside the old word-overlap judge (Jaccard ≥
`scoring.feedback_jaccard` or containment ≥ `scoring.feedback_containment`), on either split.

    nous eval judge [--split dev|test] [--limit N] [--json] [--out FILE] [--docs FILE]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from nous.context import dedup, judge
from nous.context.config import Config
from nous.evaluation import locomo
from nous.evaluation.data import LOCOMO_SPLITS, Conversation
from nous.evaluation.gate_fit import auc, fit, predict
from nous.evaluation.harness import progress
from nous.memory.embedder import Embedder
from nous.text import words

NEGATIVES = 5
"""Non-evidence turns injected beside the evidence: the question's nearest by cosine."""
L2 = 1e-3
THRESHOLDS = tuple(round(0.01 * i, 2) for i in range(1, 100))
MIN_WORDS = 3
"""The fitted and headline set: answers of at least this many content words."""


def rows(
    conversations: Sequence[Conversation],
    split: str,
    embedder: Embedder,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """One row per (question, injected turn): features, label and the old judge's overlap
    figures (Jaccard, containment)."""
    out: list[dict[str, Any]] = []
    render = locomo.FORMATS[locomo.DEFAULT_FORMAT]
    started = time.perf_counter()
    left = limit
    for conv in (c for c in conversations if c.index in LOCOMO_SPLITS[split]):
        questions = [q for q in conv.questions if q.category != 5 and q.answer.strip()]
        if left is not None:
            questions, left = questions[:left], left - len(questions[:left])
        if not questions:
            continue
        texts = [render(t) for t in conv.turns]
        index = {t.dia_id: i for i, t in enumerate(conv.turns)}
        turn_vectors = embedder.embed_many(texts)
        asked = embedder.embed_many([q.question for q in questions])
        for q, qv in zip(questions, asked, strict=True):
            evidence = [index[e] for e in dict.fromkeys(q.evidence) if e in index]
            if not evidence:
                continue
            near = np.argsort(-(turn_vectors @ qv))
            negatives = [int(i) for i in near if int(i) not in evidence][:NEGATIVES]
            chosen = evidence + negatives
            reply = q.answer
            parts = judge.sentences(reply)
            reply_vectors = embedder.embed_many(parts)
            items = [texts[i] for i in chosen]
            feats = judge.features(reply, items, reply_vectors, turn_vectors[chosen], parts)
            said = dedup.words(reply)
            for i, (turn, values) in enumerate(zip(chosen, feats, strict=True)):
                mine = dedup.words(texts[turn])
                out.append({
                    "conversation": conv.sample_id, "question": q.question,
                    "category": q.category, "turn": conv.turns[turn].dia_id,
                    "y": int(i < len(evidence)), "x": list(values),
                    "words": len(words.content_words(reply)),
                    "jaccard": dedup.jaccard(mine, said),
                    "containment": dedup.containment(mine, said),
                })  # fmt: skip
        progress(f"judge {conv.sample_id}: {len(questions)} questions, "
                 f"{time.perf_counter() - started:.0f}s")  # fmt: skip
    return out


def scores(predicted: Sequence[bool], y: Sequence[int]) -> dict[str, float]:
    tp = sum(1 for p, t in zip(predicted, y, strict=True) if p and t)
    fp = sum(1 for p, t in zip(predicted, y, strict=True) if p and not t)
    fn = sum(1 for p, t in zip(predicted, y, strict=True) if not p and t)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def old_judge(data: Sequence[dict[str, Any]], config: Config) -> list[bool]:
    s = config.scoring
    return [
        r["jaccard"] >= s.feedback_jaccard or r["containment"] >= s.feedback_containment
        for r in data
    ]


def fitted(data: Sequence[dict[str, Any]], l2: float = L2) -> dict[str, Any]:
    """The model (weights by feature name, and `bias`) fitted on `data`, and the threshold
    that maximises its F1 there."""
    x = np.array([r["x"] for r in data], dtype=float)
    y = np.array([r["y"] for r in data], dtype=float)
    w = fit(x, y, l2=l2)
    p = predict(w, x)
    best = max(THRESHOLDS, key=lambda t: (scores(list(p >= t), list(y))["f1"], -abs(t - 0.5)))
    model = {"bias": float(w[0])} | {
        n: float(v) for n, v in zip(judge.FEATURES, w[1:], strict=True)
    }
    return {"model": {k: round(v, 3) for k, v in model.items()}, "threshold": best,
            "auc": auc(p, y)}  # fmt: skip


def _judges(data: Sequence[dict[str, Any]], config: Config) -> dict[str, Any]:
    y = [r["y"] for r in data]
    model, threshold = config.judge.model, config.judge.threshold
    p = [judge.probability(r["x"], model) for r in data]
    return {
        "items": len(data),
        "questions": len({(r["conversation"], r["question"]) for r in data}),
        "referenced": sum(y),
        "new": scores([v >= threshold for v in p], y) | {"auc": auc(np.array(p), np.array(y))},
        "old": scores(old_judge(data, config), y)
        | {"auc": auc(np.array([r["jaccard"] for r in data]), np.array(y))},
    }


def run(
    conversations: Sequence[Conversation],
    split: str,
    embedder: Embedder,
    config: Config,
    limit: int | None = None,
) -> dict[str, Any]:
    """The configured judge and the old one on `split` (answers of `MIN_WORDS`+ content words,
    and all); on dev also a fresh fit (what defaults.toml `[judge]` was set from)."""
    started = time.perf_counter()
    data = rows(conversations, split, embedder, limit)
    long = [r for r in data if r["words"] >= MIN_WORDS]
    out: dict[str, Any] = {
        "dataset": "judge",
        "split": split,
        "negatives": NEGATIVES,
        "minWords": MIN_WORDS,
        "sets": {
            f"answers of {MIN_WORDS}+ content words": _judges(long, config),
            "all answers": _judges(data, config),
        },
        "model": dict(config.judge.model),
        "threshold": config.judge.threshold,
        "features": list(judge.FEATURES),
    }
    if split == "dev" and long:
        out["fit"] = fitted(long)
    out["timing"] = {"seconds": time.perf_counter() - started}
    return out
