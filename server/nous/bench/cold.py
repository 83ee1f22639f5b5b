"""Cold start in fresh processes: `nous context --json` wall time (process launch → first context
printed) on a prepared database, and the probe's breakdown and resident memory."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

COLD_INPUT = "why do we use PostgreSQL for the order service?"


def child_env() -> dict[str, str]:
    """This environment, with the package importable even without an installed entry point."""
    server = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": f"{server}{os.pathsep}{path}" if path else server}


def cli_cold(db: Path, workspace: Path, runs: int, timeout: float = 120.0) -> dict[str, Any]:
    """`python -m nous --db DB --workspace WS --json context INPUT`, `runs` times."""
    command = [
        sys.executable,
        "-m",
        "nous",
        "--db",
        str(db),
        "--workspace",
        str(workspace),
        "--json",
        "context",
        COLD_INPUT,
    ]
    seconds: list[float] = []
    errors: list[str] = []
    tokens = 0
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=child_env(), check=False
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            errors.append(done.stderr.strip()[-500:])
            continue
        try:
            tokens = int(json.loads(done.stdout)["tokens"])
        except (ValueError, KeyError, TypeError) as exc:
            errors.append(f"unreadable output: {exc}")
            continue
        seconds.append(elapsed)
    return {
        "command": "nous --db DB --workspace WS --json context " + json.dumps(COLD_INPUT),
        "runs": len(seconds),
        "seconds": [round(s, 3) for s in seconds],
        "median": round(statistics.median(seconds), 3) if seconds else None,
        "min": round(min(seconds), 3) if seconds else None,
        "tokens": tokens,
        "errors": errors,
    }


def probe(db: Path, workspace: Path, queries: int, timeout: float = 300.0) -> dict[str, Any]:
    """Run `python -m nous.bench.probe` in a fresh process; its JSON, plus the wall time."""
    command = [
        sys.executable,
        "-m",
        "nous.bench.probe",
        "--db",
        str(db),
        "--workspace",
        str(workspace),
        "--queries",
        str(queries),
        "--input",
        COLD_INPUT,
    ]
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=child_env(), check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-800:]}
    try:
        data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        return {"error": f"unreadable probe output: {exc}"}
    data["wallSeconds"] = round(elapsed, 3)
    return data
