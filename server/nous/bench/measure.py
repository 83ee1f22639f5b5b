"""Warm latency through `Engine` (the code the daemon runs), the floors, and an optional profile.

Requests are made exactly as the daemon makes them: `chat.context(engine, ContextParams)` and
`chat.recall(engine, RecallParams)`, session bookkeeping included. Turn requests share a chat
session per 10 turns (a realistic chat length; turns are not counted against the cap); every
startup and every recall gets a session of its own (startup is counted against the cap and a
session allows two recalls, so reusing one would measure an empty, budget-exhausted answer).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from nous.bench.corpus import Query
from nous.context import chat
from nous.engine import Engine
from nous.protocol import ContextParams, RecallParams
from nous.text import tokens

TURNS_PER_SESSION = 10
WARMUP = 5


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    """p50/p95/p99/mean/max in ms (linear interpolation), and n."""
    if not samples_ms:
        return {"n": 0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "mean": 0.0, "max": 0.0}
    a = np.asarray(samples_ms, dtype=np.float64)
    return {
        "n": len(samples_ms),
        "p50": round(float(np.percentile(a, 50)), 2),
        "p95": round(float(np.percentile(a, 95)), 2),
        "p99": round(float(np.percentile(a, 99)), 2),
        "mean": round(float(a.mean()), 2),
        "max": round(float(a.max()), 2),
    }


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def turn_params(i: int, q: Query) -> ContextParams:
    return ContextParams(
        input=q.text,
        mode="turn",
        session_id=f"bench-turn-{i // TURNS_PER_SESSION}",
        active_file=q.active_file,
    )


def startup_params(i: int, active_file: str) -> ContextParams:
    return ContextParams(mode="startup", session_id=f"bench-startup-{i}", active_file=active_file)


def recall_params(i: int, query: str) -> RecallParams:
    return RecallParams(query=query, session_id=f"bench-recall-{i}")


def warm(
    engine: Engine, turns: list[Query], files: list[str], recalls: list[str]
) -> dict[str, Any]:
    """Latency of each request kind after a warm-up, and what the answers looked like."""
    for i, q in enumerate(turns[:WARMUP]):
        chat.context(engine, turn_params(-1 - i, q))
    turn_ms, startup_ms, recall_ms = [], [], []
    rendered: list[str] = []
    tokens, selected, available = [], [], []
    for i, q in enumerate(turns):
        params = turn_params(i, q)
        started = time.perf_counter()
        result = chat.context(engine, params)
        turn_ms.append(_since(started))
        rendered.append(result.text)
        tokens.append(result.tokens)
        selected.append(int(result.fingerprint.get("selected", 0)))
        available.append(int(result.fingerprint.get("available", 0)))
    for i, f in enumerate(files):
        params = startup_params(i, f)
        started = time.perf_counter()
        chat.context(engine, params)
        startup_ms.append(_since(started))
    for i, r in enumerate(recalls):
        recall = recall_params(i, r)
        started = time.perf_counter()
        chat.recall(engine, recall)
        recall_ms.append(_since(started))
    return {
        "turn": percentiles(turn_ms),
        "startup": percentiles(startup_ms),
        "recall": percentiles(recall_ms),
        "turnAnswers": {
            "meanTokens": round(float(np.mean(tokens)), 1) if tokens else 0.0,
            "meanSelected": round(float(np.mean(selected)), 1) if selected else 0.0,
            "meanAvailable": round(float(np.mean(available)), 1) if available else 0.0,
            "empty": sum(1 for t in rendered if not t.strip()),
        },
        "_rendered": rendered,
    }


def load_matrix(engine: Engine) -> npt.NDArray[np.float32]:
    """Every stored vector as one (N, d) float32 matrix, read from the database."""
    return engine.store.all_vectors()


def floors(engine: Engine, turns: list[Query], rendered: list[str], k: int) -> dict[str, Any]:
    """The irreducible pieces of one turn, each timed alone (median over the query set):
    one query embedding, one numpy top-k over all N vectors, one tiktoken count of the text."""
    store = engine.store
    counter = engine.store.counter
    matrix = load_matrix(engine)
    embed_ms, topk_ms, count_ms = [], [], []
    for q, text in zip(turns, rendered, strict=True):
        started = time.perf_counter()
        vector = store.embed_batch([q.text])[0]  # `embed` may answer from its recent cache
        embed_ms.append(_since(started))
        started = time.perf_counter()
        scores = matrix @ vector
        kk = min(k, len(scores))
        top = np.argpartition(-scores, kk - 1)[:kk]
        top[np.argsort(-scores[top])]
        topk_ms.append(_since(started))
        fresh = tokens.TiktokenCounter(counter.name)  # counts of short texts are cached
        started = time.perf_counter()
        fresh.count(text)
        count_ms.append(_since(started))
    embed, topk, count = percentiles(embed_ms), percentiles(topk_ms), percentiles(count_ms)
    return {
        "embedQuery": embed,
        "topK": topk,
        "countRendered": count,
        "k": k,
        "vectors": int(matrix.shape[0]),
        "sumP50": round(embed["p50"] + topk["p50"] + count["p50"], 3),
    }


def profile(engine: Engine, turns: list[Query], top: int = 25) -> dict[str, Any]:
    """cProfile over the turn requests (a separate pass): the functions where the time goes,
    per request, by own time and by cumulative time."""
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    for i, q in enumerate(turns):
        chat.context(engine, turn_params(10_000 + i, q))
    profiler.disable()
    wall = time.perf_counter() - started
    stats = pstats.Stats(profiler, stream=io.StringIO())
    n = max(1, len(turns))
    rows = []
    for (filename, line, name), (_cc, ncalls, tottime, cumtime, _callers) in (
        stats.stats.items()  # type: ignore[attr-defined]
    ):
        rows.append(
            {
                "function": f"{_short(filename)}:{line}({name})",
                "callsPerRequest": round(ncalls / n, 1),
                "ownMs": round(tottime / n * 1000, 3),
                "cumMs": round(cumtime / n * 1000, 3),
            }
        )
    return {
        "requests": n,
        "wallMsPerRequest": round(wall / n * 1000, 2),
        "byOwn": sorted(rows, key=lambda r: -r["ownMs"])[:top],
        "byCumulative": sorted(rows, key=lambda r: -r["cumMs"])[:top],
    }


def _short(filename: str) -> str:
    for marker in ("/site-packages/", "/server/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename
