"""Sizes of the reliability tests (CI-sized by default; `scripts/stress` raises them through
`NOUS_REL_*` variables) and the figures they report.

Every test reports its measured figures with `report(name, **figures)`: printed (see them with
`-s`) and, when `NOUS_REL_REPORT` names a file, appended to it as JSON lines.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def size(name: str, ci: float) -> float:
    """The size `name` from `NOUS_REL_<NAME>`, else the CI default."""
    value = os.environ.get(f"NOUS_REL_{name.upper()}")
    return float(value) if value else ci


def report(test: str, **figures: Any) -> None:
    line = json.dumps({"test": test, **figures})
    print(f"\nFIGURES {line}")
    target = os.environ.get("NOUS_REL_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'server'}"}


def spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.workers", *args],
        cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db, timeout=30)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def half_written(db: Path, dimension: int = 384, pending_ok: bool = False) -> list[str]:
    """Memory rows missing their embedding or their full-text entry, and FTS index problems.
    `pending_ok`: an empty embedding (a deferred vector not computed yet) is not one."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        problems = [
            f"{memory_id}: embedding of {size} bytes"
            for memory_id, size in conn.execute(
                "SELECT id, length(embedding) FROM memories WHERE embedding IS NULL "
                "OR (length(embedding) != ? AND NOT (? AND length(embedding) = 0))",
                (dimension * 4, pending_ok),
            )
        ]
        try:  # the external-content FTS index must hold exactly the memories' rows
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as exc:
            problems.append(f"fts integrity-check: {exc}")
        indexed = conn.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        if indexed != rows:
            problems.append(f"{rows} memories but {indexed} full-text entries")
        return problems
    finally:
        conn.close()


def journal(path: Path) -> list[list[str]]:
    if not path.exists():
        return []
    # Only "\n" ends an entry (str.splitlines would also split on \x1c, \u2028… inside a
    # generated content), and a last line without it is not a complete entry.
    return [line.split("\t") for line in path.read_text().split("\n")[:-1] if line]
