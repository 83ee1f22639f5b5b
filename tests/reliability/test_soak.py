"""Soak: four editor windows (four `nous serve` processes on one memory file, one client each)
send mixed requests for a bounded time: no errors, resident memory flat after warm-up, latency
p99 stable from the first half of the run to the second."""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from nous.memory.embedder import default_embedder
from nous.memory.store import MemoryStore
from nous.text import tokens
from tests.reliability.client import Daemon, make_workspace
from tests.reliability.conftest import half_written, integrity, percentile, report, size

pytestmark = pytest.mark.slow
CLIENTS = 4
TOPICS = ["deploy", "cache", "database migration", "logging", "test fixtures", "release"]


def one_request(
    d: Daemon, rng: random.Random, n: int, client: int, ids: list[str]
) -> tuple[str, dict[str, Any]]:
    topic = rng.choice(TOPICS)
    session = f"soak-{client}-{n // 20}"  # a new chat session every 20 requests
    roll = rng.random()
    if roll < 0.30:
        return "context", d.request(
            "nous/context",
            {
                "input": f"how should we handle {topic}?",
                "sessionId": session,
                "mode": rng.choice(["turn", "startup"]),
            },
        )
    if roll < 0.50:
        return "recall", d.request(
            "nous/recall", {"query": f"{topic} decisions", "sessionId": session}
        )
    if roll < 0.75:
        shared = rng.random() < 0.4  # repeats across windows become confirmations
        text = (
            f"{topic} note {rng.randrange(30)}" if shared else f"window {client} {topic} note {n}"
        )
        answer = d.request(
            "nous/remember",
            {"kind": rng.choice(["fact", "decision", "procedure"]), "content": text},
        )
        if "result" in answer:
            ids.append(answer["result"]["id"])
        return "remember", answer
    if roll < 0.85 and ids:
        return "expand", d.request("nous/expand", {"id": rng.choice(ids)})
    if roll < 0.95:
        return "feedback", d.request(
            "nous/feedback", {"sessionId": session, "response": f"We keep {topic} simple."}
        )
    return "status", d.request("nous/status", None)


def test_four_windows_mixed_requests_stay_flat(tmp_path: Path) -> None:
    seconds = size("soak_seconds", 30)
    warmup = min(10.0, seconds / 3)
    db = tmp_path / "memory.db"
    daemons = [
        Daemon(make_workspace(tmp_path, "soak"), db, tmp_path / f"d{n}.log") for n in range(CLIENTS)
    ]
    for d in daemons:
        d.start()
    samples: list[list[tuple[float, float]]] = [[] for _ in daemons]  # (t, ms) per client
    errors: list[str] = []
    rss: dict[str, list[int]] = {"warm": [], "end": []}
    start = time.monotonic()

    def drive(client: int) -> None:
        d, rng, ids = daemons[client], random.Random(client), []
        n = 0
        while time.monotonic() - start < seconds:
            began = time.perf_counter()
            kind, answer = one_request(d, rng, n, client, ids)
            samples[client].append((time.monotonic() - start, (time.perf_counter() - began) * 1000))
            if "error" in answer:
                errors.append(f"{kind}: {answer['error']}")
            n += 1

    threads = [threading.Thread(target=drive, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    time.sleep(warmup)
    rss["warm"] = [d.rss_kb() for d in daemons]
    for t in threads:
        t.join()
    rss["end"] = [d.rss_kb() for d in daemons]
    alive = [d.alive() for d in daemons]
    for d in daemons:
        d.close()

    assert errors == [], errors[:5]
    assert all(alive)
    # a vector still pending when a window closed is no half-written row: the next deferring
    # store to open the file embeds it (memory/backlog.py), and then none is left
    assert integrity(db) == "ok" and half_written(db, pending_ok=True) == []
    reopened = MemoryStore(db, default_embedder(), tokens.counter(), defer_vectors=True)
    try:
        assert reopened.wait_embedded(timeout=120)
    finally:
        reopened.close()
    assert half_written(db) == []
    after = [ms for s in samples for t, ms in s if t >= warmup]
    middle = warmup + (seconds - warmup) / 2
    early = [ms for s in samples for t, ms in s if warmup <= t < middle]
    late = [ms for s in samples for t, ms in s if t >= middle]
    growth = [(end - warm) / warm for warm, end in zip(rss["warm"], rss["end"], strict=True)]
    p99_early, p99_late = percentile(early, 99), percentile(late, 99)
    report(
        "soak", seconds=seconds, clients=CLIENTS, requests=sum(len(s) for s in samples),
        errors=len(errors), warmup_seconds=warmup,
        rss_warm_mb=[round(k / 1024, 1) for k in rss["warm"]],
        rss_end_mb=[round(k / 1024, 1) for k in rss["end"]],
        max_rss_growth_pct=round(100 * max(growth), 2), p50_ms=round(percentile(after, 50), 1),
        p99_first_half_ms=round(p99_early, 1), p99_second_half_ms=round(p99_late, 1),
    )  # fmt: skip
    assert max(growth) <= 0.10
    # Latency under whatever else the machine runs is a figure, not a verdict: the stability
    # bound is asserted by scripts/stress (NOUS_REL_LATENCY_STRICT=1, on a machine it owns); in
    # CI the figures above are reported (a busy clean clone failed this on load alone).
    if os.environ.get("NOUS_REL_LATENCY_STRICT") == "1":
        assert p99_late <= max(2 * p99_early, p99_early + 50)
