"""What the numbers were measured on: CPU, cores, memory, versions, load, commit (the one copy
`nous bench` and `nous eval` both record)."""

from __future__ import annotations

import os
import platform
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _proc(path: str, key: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def commit() -> str | None:
    if not (ROOT / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def describe() -> dict[str, Any]:
    cpu = _proc("/proc/cpuinfo", "model name") or platform.processor() or "unknown CPU"
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 0
    mem_kb = _proc("/proc/meminfo", "MemTotal")
    mem_gb = round(int(mem_kb.split()[0]) / 1024 / 1024, 1) if mem_kb else None
    info = {
        "date": now(),
        "commit": commit(),
        "cpu": cpu,
        "cores": usable,
        "memoryGb": mem_gb,
        "os": platform.platform(),
        "system": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "onnxruntime": _version("onnxruntime"),
        "numpy": _version("numpy"),
        "tiktoken": _version("tiktoken"),
        "loadAverageAtStart": load(),
    }
    info["summary"] = (
        f"{cpu}, {usable} cores, {mem_gb} GB RAM, {platform.system()} {platform.release()}, "
        f"Python {info['python']}, onnxruntime {info['onnxruntime']}, numpy {info['numpy']}, "
        f"SQLite {info['sqlite']}"
    )
    return info
