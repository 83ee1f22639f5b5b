"""Harvest of the real repositories of the evaluation set (`shared/eval/repos/`), as a daemon
starting in one: each repository's folder (its provenance file left out) is copied into an empty
workspace and harvested into an empty database with the real model, vectors deferred as the daemon
defers them. Timed: the harvest to its acknowledgement, the first answer (a `nous/context` turn
with the repository's first answerable question of questions.json, asked at once, while vectors
are still being computed), and the last vector. design §8: ≤ 5 s to the first answer."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from nous.bench import build
from nous.context import chat
from nous.engine import Engine
from nous.evaluation import data as eval_data
from nous.evaluation import repos
from nous.memory.embedder import Embedder
from nous.protocol import ContextParams
from nous.settings import Settings


def _first_questions() -> tuple[Path, dict[str, str]]:
    """The set's folder and each repository's first answerable question (EvalDataError when the
    set is not there)."""
    folder = eval_data.repos_dir(eval_data.data_dir())
    first: dict[str, str] = {}
    for q in eval_data.load_repo_questions(folder):
        if q.kind == "answerable":
            first.setdefault(q.repo, q.question)
    return folder, first


def check(names: list[str]) -> None:
    """Refuse `--repos` names the set does not have, before any work (nothing to check when
    the set is not there: the part is skipped then)."""
    try:
        _, first = _first_questions()
    except eval_data.EvalDataError:
        return
    unknown = sorted(set(names) - first.keys())
    if unknown:
        raise SystemExit(
            f"nous bench: error: --repos: unknown {', '.join(unknown)} "
            f"(the set has {', '.join(sorted(first))})"
        )


def measure(root: Path, embedder: Embedder, names: list[str] | None = None) -> dict[str, Any]:
    """{"repos": [one row per repository]} or {"skipped": why} when the set is not there."""
    try:
        folder, first = _first_questions()
    except eval_data.EvalDataError as exc:
        return {"skipped": str(exc)}
    check(names or [])
    return {"repos": [_one(root, folder / n, first[n], embedder) for n in names or sorted(first)]}


def _one(root: Path, source: Path, question: str, embedder: Embedder) -> dict[str, Any]:
    ws = root / "repos" / source.name
    shutil.rmtree(ws, ignore_errors=True)
    repos.copy_repository(source, ws)
    db = root / "repos" / f"{source.name}.db"
    build.fresh_database(db)
    started = time.perf_counter()
    engine = Engine(Settings(db=db, capture=False), ws, embedder=embedder)
    engine.defer_vectors = True  # as the daemon harvests
    try:
        harvest = engine.harvest()
        acknowledged = time.perf_counter() - started
        pending = engine.store.pending_vectors()
        answer = chat.context(engine, ContextParams(input=question, mode="turn"))
        first_answer = time.perf_counter() - started
        engine.store.wait_embedded()
        last_vector = time.perf_counter() - started
        memories = engine.store.vector_count()
    finally:
        engine.close()
    return {
        "repo": source.name,
        "files": harvest["files"],
        "created": harvest["created"],
        "errors": harvest["errors"],
        "memories": memories,
        "question": question,
        "harvestSeconds": round(acknowledged, 3),
        "firstAnswerSeconds": round(first_answer, 3),
        "firstAnswerTokens": answer.tokens,
        "pendingAtFirstAnswer": pending,
        "lastVectorSeconds": round(last_vector, 3),
    }
