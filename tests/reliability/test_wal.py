"""Sustained mixed load on one memory file (writer and reader processes): the WAL stays within
64 MB, and no transaction holds a snapshot long enough to block a checkpoint for more than 1 s."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from nous.memory import tokens
from nous.memory.embedder import HashEmbedder
from nous.memory.store import JOURNAL_LIMIT, MemoryStore
from tests.reliability.conftest import half_written, integrity, journal, report, size, spawn

pytestmark = pytest.mark.slow
WRITERS, READERS = 4, 2


def mixed_load(tmp_path: Path, seconds: float, probe: bool) -> dict[str, float]:
    db = tmp_path / "memory.db"
    MemoryStore(db, HashEmbedder(), tokens.counter()).close()
    wal = Path(f"{db}-wal")
    writers = [
        spawn("write", str(db), f"l{n}", "10000000", str(tmp_path / f"l{n}.log"), str(n))
        for n in range(WRITERS)
    ]
    readers = [spawn("read", str(db), str(seconds)) for _ in range(READERS)]
    stats = {"max_wal_mb": 0.0, "probes": 0, "blocked_probes": 0, "max_probe_wait_s": 0.0}
    stop = threading.Event()

    def probe_loop() -> None:
        # A TRUNCATE checkpoint waits for every transaction that holds an old snapshot, so it
        # completes within 1 s only if none of them stays open longer than that. Another
        # connection's checkpoint in progress makes it return busy at once: retry until 1 s.
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 1000")
        while not stop.wait(1.0):
            started = time.perf_counter()
            busy = 1
            while busy and time.perf_counter() - started < 1.0:
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                if busy:
                    time.sleep(0.01)
            waited = time.perf_counter() - started
            stats["probes"] += 1
            stats["blocked_probes"] += int(busy != 0)
            stats["max_probe_wait_s"] = max(stats["max_probe_wait_s"], waited)
        conn.close()

    prober = threading.Thread(target=probe_loop) if probe else None
    if prober:
        prober.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if wal.exists():
            stats["max_wal_mb"] = max(stats["max_wal_mb"], wal.stat().st_size / 2**20)
        time.sleep(0.05)
    stop.set()
    if prober:
        prober.join()
    reads = sum(json.loads(r.communicate(timeout=120)[0])["reads"] for r in readers)
    for w in writers:
        os.kill(w.pid, signal.SIGTERM)
        w.communicate(timeout=60)
    entries = [e for n in range(WRITERS) for e in journal(tmp_path / f"l{n}.log")]
    assert [e for e in entries if e[0] == "err"] == []
    assert all(r.returncode == 0 for r in readers)
    assert integrity(db) == "ok" and half_written(db) == []
    stats["writes"] = sum(1 for e in entries if e[0] == "ack")
    stats["reads"] = reads
    stats["db_mb"] = db.stat().st_size / 2**20
    return stats


def test_wal_stays_bounded_under_sustained_mixed_load(tmp_path: Path) -> None:
    seconds = size("wal_seconds", 15)
    stats = mixed_load(tmp_path, seconds, probe=False)
    assert stats["max_wal_mb"] <= JOURNAL_LIMIT / 2**20
    report(
        "bounded_wal", seconds=seconds, writer_processes=WRITERS, reader_processes=READERS,
        writes=stats["writes"], reads=stats["reads"], max_wal_mb=round(stats["max_wal_mb"], 1),
        db_mb=round(stats["db_mb"], 1),
    )  # fmt: skip


def test_no_transaction_blocks_a_checkpoint_for_a_second(tmp_path: Path) -> None:
    seconds = size("wal_seconds", 15)
    stats = mixed_load(tmp_path, seconds, probe=True)
    assert stats["probes"] >= seconds // 2
    assert stats["blocked_probes"] == 0
    assert stats["max_probe_wait_s"] < 1.0
    report(
        "read_transactions", seconds=seconds, probes=stats["probes"],
        blocked_probes=stats["blocked_probes"],
        max_checkpoint_wait_ms=round(stats["max_probe_wait_s"] * 1000, 1),
        max_wal_mb=round(stats["max_wal_mb"], 1), writes=stats["writes"], reads=stats["reads"],
    )  # fmt: skip
