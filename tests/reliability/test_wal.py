"""Sustained mixed load on one memory file (writer and reader processes): the WAL stays within
64 MB, and no transaction stays open: a TRUNCATE checkpoint, which completes only once every
transaction holding an older snapshot has ended, always completes while the load goes on.

How long a checkpoint waited is a wall-clock figure: it is reported, and asserted only when
`NOUS_REL_CHECKPOINT_BOUND_S` is set (`scripts/stress` sets 1 s), never in CI, where a busy
machine would fail it for timing alone. The same holds for the WAL's peak size: a checkpoint that
waits for readers lets it pass the 64 MB `journal_size_limit` for a moment on a busy machine
(66 MB was seen on a clean-clone CI run), so CI asserts it stays bounded (twice the limit; the
failure this guards against grew it to 2 GB in 10 s) and `scripts/stress` asserts the limit itself
(`NOUS_REL_WAL_STRICT=1`)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from nous.memory.database import JOURNAL_LIMIT
from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens
from tests.reliability.conftest import half_written, integrity, journal, report, size, spawn

pytestmark = pytest.mark.slow
WRITERS, READERS = 4, 2
PATIENCE_S = 120.0
"""How long one probe keeps retrying its checkpoint. A transaction left open never lets it
complete, so the probe gives up; a busy machine only makes it wait longer."""


def mixed_load(tmp_path: Path, seconds: float, probe: bool) -> dict[str, float]:
    db = tmp_path / "memory.db"
    MemoryStore(db, HashEmbedder(), tokens.counter()).close()
    wal = Path(f"{db}-wal")
    writers = [
        spawn("write", str(db), f"l{n}", "10000000", str(tmp_path / f"l{n}.log"), str(n))
        for n in range(WRITERS)
    ]
    readers = [spawn("read", str(db), str(seconds)) for _ in range(READERS)]
    stats = {
        "max_wal_mb": 0.0, "probes": 0, "gave_up": 0, "over_1s": 0, "max_probe_wait_s": 0.0,
    }  # fmt: skip
    stop = threading.Event()

    def probe_loop() -> None:
        # A TRUNCATE checkpoint waits for every transaction that holds an old snapshot, so it
        # completes only once none of them is open. Another connection's checkpoint in progress
        # makes it return busy at once: retry (for up to PATIENCE_S).
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 1000")
        while not stop.wait(1.0):
            started = time.perf_counter()
            busy = checkpoint_until_done(conn, PATIENCE_S)
            waited = time.perf_counter() - started
            stats["probes"] += 1
            stats["gave_up"] += int(busy)
            stats["over_1s"] += int(waited >= 1.0)
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
    try:
        outputs = [r.communicate(timeout=120) for r in readers]
    finally:  # a reader that failed must not leave the writers running after the test
        for w in writers:
            os.kill(w.pid, signal.SIGTERM)
            w.communicate(timeout=60)
    for out, err in outputs:
        assert out.strip(), f"a reader process failed: {err.decode(errors='replace')[-2000:]}"
    reads = sum(json.loads(out)["reads"] for out, _ in outputs)
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
    assert stats["max_wal_mb"] <= wal_bound_mb(), stats
    report(
        "bounded_wal", seconds=seconds, writer_processes=WRITERS, reader_processes=READERS,
        writes=stats["writes"], reads=stats["reads"], max_wal_mb=round(stats["max_wal_mb"], 1),
        db_mb=round(stats["db_mb"], 1),
    )  # fmt: skip


def wal_bound_mb() -> float:
    """The WAL's peak may pass its limit while a checkpoint waits for readers: twice the limit in
    CI (bounded, not runaway), the limit itself under `scripts/stress` (`NOUS_REL_WAL_STRICT=1`)."""
    limit_mb = JOURNAL_LIMIT / 2**20
    return limit_mb if os.environ.get("NOUS_REL_WAL_STRICT") == "1" else 2 * limit_mb


def checkpoint_until_done(conn: sqlite3.Connection, patience_s: float) -> bool:
    """Retry a TRUNCATE checkpoint until it completes; True if it was still busy after
    `patience_s` (some transaction stayed open all along)."""
    started = time.perf_counter()
    while True:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] != 0
        if not busy or time.perf_counter() - started >= patience_s:
            return busy
        time.sleep(0.01)


def test_the_probe_sees_a_transaction_held_open(tmp_path: Path) -> None:
    """The probe can fail: a read transaction left open keeps the checkpoint from completing
    (however long it retries), and once it ends the checkpoint completes and the WAL is empty."""
    db = tmp_path / "memory.db"
    store = MemoryStore(db, HashEmbedder(), tokens.counter())
    store.remember(Draft(kind="fact", content="first", scope="universal"))
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchone()  # holds its snapshot
    store.remember(Draft(kind="fact", content="second", scope="universal"))
    probe = sqlite3.connect(db, isolation_level=None)
    probe.execute("PRAGMA busy_timeout = 50")
    assert checkpoint_until_done(probe, 0.5) is True
    reader.execute("COMMIT")
    assert checkpoint_until_done(probe, 0.5) is False
    assert Path(f"{db}-wal").stat().st_size == 0
    for conn in (reader, probe):
        conn.close()
    store.close()


def test_no_transaction_keeps_a_checkpoint_from_completing(tmp_path: Path) -> None:
    seconds = size("wal_seconds", 15)
    bound = size("checkpoint_bound_s", 0)  # wall clock: scripts/stress only
    stats = mixed_load(tmp_path, seconds, probe=True)
    report(
        "read_transactions", seconds=seconds, probes=stats["probes"],
        probes_gave_up=stats["gave_up"], probes_over_1s=stats["over_1s"],
        max_checkpoint_wait_ms=round(stats["max_probe_wait_s"] * 1000, 1),
        max_wal_mb=round(stats["max_wal_mb"], 1), writes=stats["writes"], reads=stats["reads"],
        bound_s=bound or None,
    )  # fmt: skip
    assert stats["probes"] >= 1
    assert stats["gave_up"] == 0  # every checkpoint completed: no transaction stayed open
    assert stats["max_wal_mb"] <= wal_bound_mb(), stats
    if bound:
        assert stats["max_probe_wait_s"] < bound, stats
