"""Several processes writing one memory file: concurrent writers lose and duplicate nothing, and
`kill -9` at random moments leaves a consistent file where a retried write is a confirmation."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens
from tests.reliability.conftest import (
    half_written,
    integrity,
    journal,
    percentile,
    report,
    size,
    spawn,
)
from tests.reliability.workers import SCOPE

pytestmark = pytest.mark.slow
WRITERS = 8


def rows_by_content(db: Path) -> dict[str, tuple[int, int]]:
    """content → (rows with that content, confirmations)."""
    conn = sqlite3.connect(db)
    try:
        out: dict[str, tuple[int, int]] = {}
        for content, count, confirmations in conn.execute(
            "SELECT content, count(*), sum(confirmations) FROM memories GROUP BY content"
        ):
            out[content] = (count, confirmations)
        return out
    finally:
        conn.close()


def test_eight_writer_processes_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    count = int(size("writes", 120))
    db = tmp_path / "memory.db"
    MemoryStore(db, HashEmbedder(), tokens.counter()).close()  # schema in place before the race
    started = time.perf_counter()
    procs = [
        spawn("write", str(db), f"w{n}", str(count), str(tmp_path / f"w{n}.log"), str(n))
        for n in range(WRITERS)
    ]
    outputs = [proc.communicate(timeout=600) for proc in procs]
    elapsed = time.perf_counter() - started
    assert [proc.returncode for proc in procs] == [0] * WRITERS, outputs[0][1].decode()[-2000:]
    latencies = [ms for out, _ in outputs for ms in json.loads(out)["latencies_ms"]]
    entries = [e for n in range(WRITERS) for e in journal(tmp_path / f"w{n}.log")]
    errors = [e[1] for e in entries if e[0] == "err"]
    attempts = Counter(e[1] for e in entries if e[0] == "try")
    acks = [e for e in entries if e[0] == "ack"]
    stored = rows_by_content(db)

    assert errors == [], errors[:5]
    assert len(acks) == WRITERS * count
    lost = [c for c in attempts if c not in stored]
    duplicated = [c for c, (rows, _) in stored.items() if rows != 1]
    miscounted = [c for c, n in attempts.items() if c in stored and stored[c][1] != n - 1]
    assert lost == [] and duplicated == [] and miscounted == []
    assert set(stored) == set(attempts)
    assert Counter(e[1] for e in acks) == {
        "created": len(attempts),
        "confirmed": WRITERS * count - len(attempts),
    }
    assert integrity(db) == "ok"
    assert half_written(db) == []
    report(
        "concurrent_writers",
        processes=WRITERS, writes_per_process=count, writes=len(acks), distinct=len(attempts),
        confirmations=WRITERS * count - len(attempts), lost=len(lost), duplicated=len(duplicated),
        locked_errors=len(errors), integrity="ok", seconds=round(elapsed, 2),
        p50_ms=round(percentile(latencies, 50), 1), p99_ms=round(percentile(latencies, 99), 1),
        max_ms=round(max(latencies), 1),
    )  # fmt: skip


WRITER_CAP = 200


def reap(proc: subprocess.Popen[bytes]) -> None:
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def test_kill_minus_nine_at_random_moments_loses_and_tears_nothing(tmp_path: Path) -> None:
    kills = int(size("kills", 15))
    rng = random.Random(int(size("seed", 8)))
    db = tmp_path / "memory.db"
    store = MemoryStore(db, HashEmbedder(), tokens.counter())
    logs: list[Path] = []
    running: dict[int, tuple[subprocess.Popen[bytes], Path]] = {}

    def start(slot: int) -> None:
        log = tmp_path / f"k{len(logs)}.log"
        logs.append(log)
        # Capped so the file stays small: uncapped writers keep writing through every check, the
        # file grows and each integrity check gets slower (the first 100-kill run hit its timeout).
        proc = spawn("write", str(db), f"k{len(logs)}", str(WRITER_CAP), str(log), str(len(logs)))
        running[slot] = (proc, log)

    for slot in range(3):
        start(slot)
    retried = {"created": 0, "confirmed": 0}
    killed_mid_write = 0
    for _ in range(kills):
        slot = rng.randrange(3)
        if running[slot][0].poll() is not None:
            reap(running[slot][0])  # finished its writes: a fresh writer takes the slot
            start(slot)
        proc, log = running[slot]
        while len(journal(log)) < 2:  # past start-up, inside its write loop
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        reap(proc)

        assert integrity(db) == "ok"
        assert half_written(db) == []
        entries = journal(log)
        # acknowledgements first, then the rows: the other writers keep writing in between
        acked = [e[3] for n in range(len(logs)) for e in journal(logs[n]) if e[0] == "ack"]
        stored = rows_by_content(db)
        assert [c for c in acked if c not in stored] == [], "an acknowledged memory was lost"
        assert [e for n in range(len(logs)) for e in journal(logs[n]) if e[0] == "err"] == []
        if entries[-1][0] == "try":  # killed inside a write: the client retries it
            killed_mid_write += 1
            content = entries[-1][1]
            before = stored.get(content, (0, 0))[0]
            result = store.remember(Draft(kind="fact", content=content, scope=SCOPE))
            retried[result.status] += 1
            assert result.status == ("confirmed" if before else "created")
            assert rows_by_content(db)[content][0] == 1
        start(slot)
    for proc, _ in running.values():
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        reap(proc)
    assert integrity(db) == "ok" and half_written(db) == []
    duplicated = [c for c, (rows, _) in rows_by_content(db).items() if rows != 1]
    assert duplicated == []
    store.close()
    report(
        "kill_minus_nine",
        kills=kills, killed_mid_write=killed_mid_write, retried_confirmed=retried["confirmed"],
        retried_created=retried["created"], integrity_ok_after_every_kill=True, lost=0,
        half_written=0, duplicated=0, memories=len(rows_by_content(db)),
    )  # fmt: skip


def test_kill_minus_nine_with_vectors_pending_loses_nothing(tmp_path: Path) -> None:
    """A writer that defers vectors is killed before any of them landed: every acknowledged
    write is in the file, found by text, and the next deferring store embeds all of them."""
    db = tmp_path / "memory.db"
    MemoryStore(db, HashEmbedder(), tokens.counter()).close()
    log = tmp_path / "d.log"
    proc = spawn("write-deferred", str(db), "d", str(WRITER_CAP), str(log), "3")
    while sum(e[0] == "ack" for e in journal(log)) < 30:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    reap(proc)
    acked = {e[3]: e[2] for e in journal(log) if e[0] == "ack"}
    assert integrity(db) == "ok"
    assert half_written(db, pending_ok=True) == []
    conn = sqlite3.connect(db)
    try:
        pending = conn.execute("SELECT id FROM memories WHERE length(embedding) = 0")
        assert set(acked.values()) <= {r[0] for r in pending}  # the model never answered
    finally:
        conn.close()

    store = MemoryStore(db, HashEmbedder(), tokens.counter(), defer_vectors=True)
    try:
        for content, memory_id in acked.items():
            assert store.get(memory_id).content == content
            assert memory_id in dict(store.text_search(content, 50, [SCOPE]))
        assert store.wait_embedded(timeout=120)
        vectors = store.vectors(list(acked.values()))
        assert set(vectors) == set(acked.values())
        for content, memory_id in acked.items():
            assert float(vectors[memory_id] @ HashEmbedder().embed(content)) > 0.999
    finally:
        store.close()
    assert half_written(db) == []
    assert integrity(db) == "ok"
