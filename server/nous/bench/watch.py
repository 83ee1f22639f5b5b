"""The watcher benchmark: a generated tree of N files (most of them in a large `node_modules`),
then time to ready, inotify watches used, idle CPU, RSS, and whether the index equals a fresh
walk after a rename storm and a delete-recreate of a whole tree."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from nous.workspace.watcher import Watcher, wait_for, walk

NODE_MODULES_SHARE = 0.7
PER_DIR = 50


def make_tree(root: Path, files: int) -> dict[str, int]:
    """`files` files: 70% under node_modules/ (ignored), the rest in src/, docs/ and tests/,
    50 per folder, two levels deep, plus a .gitignore'd build/ folder."""
    ignored = int(files * NODE_MODULES_SHARE)
    counts = {"node_modules": ignored, "build": 0, "kept": 0}
    (root / ".gitignore").write_text("build/\n*.log\n")
    for i in range(ignored):
        folder = root / "node_modules" / f"pkg{i // (PER_DIR * 20)}" / f"lib{(i // PER_DIR) % 20}"
        if i % PER_DIR == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i}.js").write_text("module.exports = 1;\n")
    kept = files - ignored
    build = kept // 10
    counts["build"], counts["kept"] = build, kept - build
    for i in range(kept - build):
        top = ("src", "src", "src", "tests", "docs")[i % 5]
        folder = root / top / f"d{i // (PER_DIR * 20)}" / f"e{(i // PER_DIR) % 20}"
        if i % PER_DIR < 5:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.py").write_text(f"VALUE = {i}\n")
    for i in range(build):
        folder = root / "build" / f"b{i // PER_DIR}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"o{i}.o").write_text("x")
    return counts


def inotify_watches() -> int:
    """inotify watches held by this process (one `inotify wd:` line per watch in fdinfo)."""
    total = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            text = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        total += text.count("inotify wd:")
    return total


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def measure(base: Path, files: int, idle_seconds: float = 5.0) -> dict[str, Any]:
    root = base / "watch-tree"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    started = time.perf_counter()
    counts = make_tree(root, files)
    generated = time.perf_counter() - started
    events: list[set[str]] = []
    watches_before, rss_before = inotify_watches(), rss_mb()

    started = time.perf_counter()
    watcher = Watcher(root, events.append, debounce_ms=200, rescan_seconds=3600)
    walked = time.perf_counter() - started
    watcher.start()
    probe = root / "src" / "probe.py"
    ready = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # ready = a new file is noticed
        probe.write_text(f"# {time.monotonic()}\n")
        if wait_for(lambda: any("src/probe.py" in e for e in events), 0.5):
            ready = time.perf_counter() - started
            break
    out: dict[str, Any] = {
        "files": files, "tree": counts, "generateSeconds": round(generated, 1),
        "walkSeconds": round(walked, 2), "readySeconds": None if ready is None else round(ready, 2),
        "indexed": len(watcher.index), "watches": inotify_watches() - watches_before,
        "mode": watcher.mode,
    }  # fmt: skip
    try:
        cpu = os.times()
        time.sleep(idle_seconds)
        after = os.times()
        used = (after.user - cpu.user) + (after.system - cpu.system)
        out["idleCpuPercent"] = round(100 * used / idle_seconds, 2)
        out["rssMb"] = rss_mb()
        out["rssGrowthMb"] = round(out["rssMb"] - rss_before, 1)

        # Rename storm: 2,000 renames across src/, then a whole tree deleted and recreated.
        started = time.perf_counter()
        moved = 0
        for path in sorted((root / "src").rglob("f*.py"))[:2000]:
            path.rename(path.with_name("r" + path.name))
            moved += 1
        tests_tree = root / "tests"
        shutil.rmtree(tests_tree)
        tests_tree.mkdir()
        for i in range(20):
            (tests_tree / f"t{i}").mkdir()
            for j in range(25):
                (tests_tree / f"t{i}" / f"test_{j}.py").write_text("def test(): pass\n")
        storm = time.perf_counter() - started
        fresh = walk(root, watcher.ignore)
        settled = wait_for(lambda: watcher.index == fresh, 30)
        out["storm"] = {
            "renamed": moved, "recreatedFiles": 25 * 20,
            "seconds": round(storm, 2), "indexEqualsFreshWalk": settled,
            "settleSeconds": round(time.perf_counter() - started - storm, 2),
        }  # fmt: skip
    finally:
        watcher.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out
