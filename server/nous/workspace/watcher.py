"""Watching a workspace with watchfiles, without spending inotify watches on ignored trees.

Only non-ignored top-level folders are watched recursively (plus the root's own files), so a
large `node_modules` costs nothing. Events are debounced and keep a file index; a reconciliation
walk (periodic, and after any big batch) makes the index equal to a fresh walk again, because
watchers drop events in rename storms and deleted-then-recreated trees. If the watches cannot be
created (inotify limit), the watcher degrades to periodic rescans instead of failing.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from nous.workspace import boundary
from nous.workspace.detect import IGNORED_DIRS

log = logging.getLogger(__name__)
Changes = Callable[[set[str]], None]
WatchFn = Callable[..., Iterable[set[tuple[Any, str]]]]
BIG_BATCH = 500


class Ignored:
    """What the watcher leaves alone: vendored/generated trees and `.git`, `.gitignore`d paths
    (gitignore semantics), file names that are not UTF-8, and everything the harvest boundary
    excludes: `boundary.harvest_ignore`, the very matcher the harvester builds (`.nousignore`,
    `.env*`)."""

    def __init__(self, root: Path) -> None:
        self.harvest = boundary.harvest_ignore(root)
        self.git = boundary.Ignore.of(root, ".gitignore")

    def __call__(self, rel: str, is_dir: bool = False) -> bool:
        return (
            any(part in IGNORED_DIRS for part in rel.split("/"))
            or not boundary.is_utf8(rel)
            or self.harvest(rel, is_dir)
            or self.git(rel, is_dir)
        )


def walk(root: Path, ignore: Ignored | None = None) -> set[str]:
    """Every non-ignored file, relative to root (the "fresh walk"); symlinked folders are not
    entered."""
    return set(boundary.walk(root, ignore or Ignored(root)))


def watch_roots(root: Path, ignore: Ignored) -> list[Path]:
    """Top-level folders worth a recursive watch (real folders: a symlinked one is outside)."""
    return sorted(
        p for p in root.iterdir()
        if p.is_dir() and not p.is_symlink() and not ignore(p.name, True)
    )  # fmt: skip


class _Either:
    """Set when either event is: stops one watch generation on restart or on stop."""

    def __init__(self, *events: threading.Event) -> None:
        self.events = events

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)


SETTLE_SECONDS = 2.0
"""After start, when the one early reconciliation runs."""


class Watcher:
    """Keeps `index` equal to the workspace's non-ignored files and reports changed paths."""

    def __init__(
        self,
        root: Path | str,
        on_change: Changes,
        debounce_ms: int = 1600,
        rescan_seconds: float = 300.0,
        watch: WatchFn | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self.rescan_seconds = rescan_seconds
        self.ignore = Ignored(self.root)
        self.index: set[str] = walk(self.root, self.ignore)
        self.mode = "starting"
        self._watch = watch
        self._stop = threading.Event()
        self._restart = threading.Event()
        self._roots: set[str] = set()
        self._either = _Either(self._stop, self._restart)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self._threads = [
            threading.Thread(target=self._run_watch, args=([str(self.root)], False), daemon=True),
            threading.Thread(target=self._run_trees, name="nous-watch-trees", daemon=True),
            threading.Thread(target=self._run_rescans, name="nous-rescan", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    # -- work -----------------------------------------------------------------------------------

    def _run_trees(self) -> None:
        """Each top-level folder recursively. A watch dies with its folder (a deleted-then-
        recreated tree is not watched again), so adding or removing a top-level folder restarts
        the watch on the current set, and a reconciliation covers the gap."""
        first = True
        while not self._stop.is_set():
            self._restart.clear()
            roots = [str(p) for p in watch_roots(self.root, self.ignore)]
            self._roots = set(roots)
            if not first:
                self._emit(self.reconcile())
                self._settle_later()  # and again once the new watches are armed
            first = False
            if not roots:
                self._either.wait(1.0)
                continue
            if not self._run_watch(roots, True, stop_event=self._either):
                return

    def _settle_later(self) -> None:
        """One reconciliation SETTLE_SECONDS from now: a restarted watch is armed a moment after
        the reconciliation that precedes it (later on a busy machine), and a file written in
        between gave no event (the rename storm of `nous bench --watcher` on a busy CI clone:
        the index stayed short of a fresh walk until the 5-minute rescan)."""

        def settle() -> None:
            if not self._stop.is_set():
                self._emit(self.reconcile())

        timer = threading.Timer(SETTLE_SECONDS, settle)
        timer.daemon = True
        timer.start()

    def _run_watch(self, paths: list[str], recursive: bool, stop_event: Any = None) -> bool:
        """Watch until stopped; False when watching is unavailable (then rescans take over)."""
        from watchfiles import watch as watchfiles_watch

        watch: WatchFn = self._watch or watchfiles_watch
        try:
            self.mode = "watching"
            for batch in watch(
                *paths, debounce=self.debounce_ms, stop_event=stop_event or self._stop,
                watch_filter=self._keep, raise_interrupt=False, recursive=recursive,
            ):  # fmt: skip
                self._apply(batch)
                if self._restart.is_set() and recursive:
                    break
        except OSError as exc:  # e.g. inotify watch limit reached
            self.mode = "rescanning"
            log.warning("file watching unavailable (%s); falling back to periodic rescans", exc)
            return False
        return True

    def _keep(self, _change: object, path: str) -> bool:
        """An event is kept when its path is inside the folder without crossing a symlinked
        folder (the OS watch follows them; the walk does not) and is not ignored."""
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        if rel.startswith("..") or self.ignore(rel):
            return False
        parent = os.path.dirname(path)
        if os.path.realpath(parent) != os.path.normpath(parent):
            return False
        return not (os.path.isdir(path) and self.ignore(rel, True))

    def _apply(self, batch: set[tuple[Any, str]]) -> None:
        """Apply a batch by what is on disk now, not by the event kinds (they arrive late and
        out of order): a file that exists is indexed, a path that is gone leaves with everything
        under it. An existing folder keeps the files indexed under it (a late event for a folder
        deleted and recreated since must not drop what is in it now); the reconciliation that any
        folder in a batch triggers brings in what its events missed. The new index replaces the
        old in one assignment, so a reader never sees it half-applied."""
        changed = set()
        restart = False
        with self._lock:
            index, folders_gone = set(self.index), []
            for _change, path in batch:
                rel = os.path.relpath(path, self.root).replace(os.sep, "/")
                changed.add(rel)
                if "/" not in rel and (path in self._roots or os.path.isdir(path)):
                    restart = True  # a top-level folder came or went
                if os.path.isdir(path):
                    index.discard(rel)  # a folder is never an entry (nor a symlink to one)
                    if os.path.islink(path):  # `walk` does not enter it
                        folders_gone.append(rel + "/")
                elif os.path.lexists(path):  # as `walk` lists them
                    index.add(rel)
                elif rel in index:
                    index.discard(rel)  # a file: nothing under it
                else:
                    folders_gone.append(rel + "/")
            if folders_gone:
                gone = tuple(folders_gone)
                index = {p for p in index if not p.startswith(gone)}
            self.index = index
        if restart:
            self._restart.set()
        if changed & {".gitignore", ".nousignore"}:
            self.ignore = Ignored(self.root)
            changed |= self.reconcile()
        elif len(batch) >= BIG_BATCH or any(os.path.isdir(self.root / c) for c in changed):
            changed |= self.reconcile()
        self._emit(changed)

    def reconcile(self) -> set[str]:
        """Make the index equal to a fresh walk; returns the paths that differed. The walk runs
        under the index lock: a walk that started earlier (slower on a busy machine) can never
        replace the result of one that started later, nor undo events applied meanwhile."""
        with self._lock:
            fresh = walk(self.root, self.ignore)
            diff = fresh ^ self.index
            self.index = fresh
        return diff

    def _run_rescans(self) -> None:
        # `mode` says "watching" a moment before watchfiles has armed its watches (it arms them
        # when its generator first runs, later still on a busy machine): one early
        # reconciliation catches what changed in that window.
        if not self._stop.wait(SETTLE_SECONDS):
            self._emit(self.reconcile())
        interval = self.rescan_seconds
        while not self._stop.wait(interval if self.mode != "rescanning" else min(interval, 30)):
            diff = self.reconcile()
            if diff:
                self._emit(diff)

    def _emit(self, changed: set[str]) -> None:
        if not changed:
            return
        try:
            self.on_change(changed)
        except Exception:  # one bad handler run never stops watching
            log.exception("watch handler failed for %d paths", len(changed))


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll `predicate` until true or `timeout` seconds pass (for tests and benchmarks)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()
