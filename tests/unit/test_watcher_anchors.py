"""The watcher on real directories (real watchfiles/inotify) and code-anchor checks."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from watchfiles import Change

from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.workspace import anchors
from nous.workspace import watcher as watcher_module
from nous.workspace.watcher import Ignored, Watcher, wait_for, walk, watch_roots


def tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("def parse_args(): ...\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "x.js").write_text("")
    (root / "build").mkdir()
    (root / "secret_out").mkdir()
    (root / ".gitignore").write_text("secret_out/\n*.log\n")
    (root / "README.md").write_text("hi\n")
    (root / "debug.log").write_text("")


def test_walk_skips_ignored_trees_and_gitignored_paths(tmp_path: Path) -> None:
    tree(tmp_path)
    assert walk(tmp_path) == {"src/pkg/a.py", "README.md", ".gitignore"}
    assert [p.name for p in watch_roots(tmp_path, Ignored(tmp_path))] == ["src"]


def test_watcher_reports_changes_and_keeps_the_index(tmp_path: Path) -> None:
    tree(tmp_path)
    seen: list[set[str]] = []
    lock = threading.Lock()

    def on_change(changed: set[str]) -> None:
        with lock:
            seen.append(changed)

    watcher = Watcher(tmp_path, on_change, debounce_ms=100, rescan_seconds=3600)
    watcher.start()
    try:
        wait_for(lambda: watcher.mode == "watching", 5)
        (tmp_path / "src" / "pkg" / "b.py").write_text("x = 1\n")
        (tmp_path / "node_modules" / "dep" / "y.js").write_text("")
        (tmp_path / "AGENTS.md").write_text("- rule\n")
        assert wait_for(
            lambda: "src/pkg/b.py" in watcher.index and "AGENTS.md" in watcher.index, 10
        )
        with lock:
            reported = set().union(*seen)
        assert {"src/pkg/b.py", "AGENTS.md"} <= reported
        assert not any(p.startswith("node_modules") for p in reported)
        (tmp_path / "src" / "pkg" / "a.py").unlink()
        assert wait_for(lambda: "src/pkg/a.py" not in watcher.index, 10)
    finally:
        watcher.stop()


def test_index_equals_fresh_walk_after_rename_storm_and_recreate(tmp_path: Path) -> None:
    tree(tmp_path)
    watcher = Watcher(tmp_path, lambda _c: None, debounce_ms=100, rescan_seconds=3600)
    watcher.start()
    try:
        wait_for(lambda: watcher.mode == "watching", 5)
        storm = tmp_path / "src" / "storm"
        storm.mkdir()
        for n in range(300):
            (storm / f"f{n}.py").write_text("")
        storm.rename(tmp_path / "src" / "renamed")
        shutil.rmtree(tmp_path / "src" / "pkg")
        (tmp_path / "src" / "pkg").mkdir()
        for n in range(50):
            (tmp_path / "src" / "pkg" / f"new{n}.py").write_text("")
        watcher.reconcile()
        assert watcher.index == walk(tmp_path)
        assert "src/renamed/f299.py" in watcher.index and "src/pkg/a.py" not in watcher.index
    finally:
        watcher.stop()


def test_a_reconcile_that_walked_earlier_never_replaces_one_that_walked_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two reconciliations at once (the watcher's own after a batch, and another): on a busy
    machine the one that started first can finish last. Its older walk must not replace the
    newer one (issue 28: the index then lacked 50 files a fresh walk found)."""
    tree(tmp_path)
    watcher = Watcher(tmp_path, lambda _c: None, debounce_ms=100, rescan_seconds=3600)
    real_walk, go = watcher_module.walk, threading.Event()

    def slow_walk(root: Path, ignore: Ignored | None = None) -> set[str]:
        found = real_walk(root, ignore)
        if threading.current_thread().name == "early":
            go.wait(10)  # walked before the new files, finishes after the later walk
        return found

    monkeypatch.setattr(watcher_module, "walk", slow_walk)
    early = threading.Thread(target=watcher.reconcile, name="early")
    early.start()
    time.sleep(0.2)
    (tmp_path / "src" / "pkg").mkdir(exist_ok=True)
    for n in range(50):
        (tmp_path / "src" / "pkg" / f"new{n}.py").write_text("")
    late = threading.Thread(target=watcher.reconcile, name="late")
    late.start()
    time.sleep(0.2)
    go.set()
    early.join(10)
    late.join(10)
    assert watcher.index == real_walk(tmp_path)


def test_a_late_event_for_a_recreated_folder_keeps_the_files_now_in_it(tmp_path: Path) -> None:
    """Events arrive late: the "deleted" of a folder since recreated and refilled is applied
    by what is on disk now, and never drops the files in it (not even until the next
    reconciliation: the index is what `nous/status` and the harvest read meanwhile)."""
    tree(tmp_path)
    watcher = Watcher(tmp_path, lambda _c: None, debounce_ms=100, rescan_seconds=3600)
    shutil.rmtree(tmp_path / "src" / "pkg")
    (tmp_path / "src" / "pkg").mkdir()
    for n in range(50):
        (tmp_path / "src" / "pkg" / f"new{n}.py").write_text("")
    watcher.reconcile()
    watcher.reconcile = lambda: set()  # type: ignore[method-assign]
    pkg = str(tmp_path / "src" / "pkg")
    watcher._apply({(Change.deleted, pkg), (Change.added, pkg)})
    watcher._apply({(Change.deleted, str(tmp_path / "src" / "pkg" / "a.py"))})
    assert watcher.index == walk(tmp_path)


def test_running_out_of_watches_degrades_to_rescans(tmp_path: Path) -> None:
    tree(tmp_path)

    def exhausted(*_a: object, **_k: object) -> list[set[tuple[object, str]]]:
        raise OSError(28, "inotify watch limit reached")

    seen: list[set[str]] = []
    watcher = Watcher(tmp_path, seen.append, rescan_seconds=0.2, watch=exhausted)
    watcher.start()
    try:
        assert wait_for(lambda: watcher.mode == "rescanning", 5)
        (tmp_path / "src" / "late.py").write_text("")
        assert wait_for(lambda: "src/late.py" in watcher.index, 5)
        assert any("src/late.py" in s for s in seen)
    finally:
        watcher.stop()


def test_memory_naming_a_deleted_file_is_demoted(store: MemoryStore, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "cli.py").write_text("def parse_args():\n    pass\n")
    fact = store.remember(
        Draft(
            kind="fact",
            content="Arguments are parsed by `parse_args` in src/cli.py",
            scope="project:p",
        )
    ).memory
    proc = store.remember(
        Draft(kind="procedure", content="To add a flag, edit src/cli.py", scope="project:p")
    ).memory
    episode = store.remember(
        Draft(kind="episode", content="We split src/cli.py last week", scope="project:p")
    ).memory
    assert anchors.check(store, "project:p", tmp_path, {"src/cli.py"}) == []
    (tmp_path / "src" / "cli.py").write_text("def build_parser():\n    pass\n")
    assert anchors.check(store, "project:p", tmp_path, {"src/cli.py"}) == [fact.id]
    assert store.get(fact.id).status == "superseded"
    (tmp_path / "src" / "cli.py").unlink()
    assert anchors.check(store, "project:p", tmp_path, {"src/cli.py"}) == [proc.id]
    assert store.get(proc.id).status == "retired"
    assert store.get(episode.id).status == "active"


def test_a_deleted_then_recreated_top_level_tree_is_watched_again(tmp_path: Path) -> None:
    """watchfiles drops the watch of a deleted folder for good; the watcher must notice files
    written into the recreated folder, long after any reconciliation of the deletion itself."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "old.py").write_text("1")
    (tmp_path / "src").mkdir()
    seen: list[set[str]] = []
    watcher = Watcher(tmp_path, seen.append, debounce_ms=100, rescan_seconds=3600)
    watcher.start()
    try:
        time.sleep(0.5)
        shutil.rmtree(tmp_path / "tests")
        assert wait_for(lambda: "tests/old.py" not in watcher.index, 10)
        (tmp_path / "tests").mkdir()
        time.sleep(1.5)
        (tmp_path / "tests" / "new.py").write_text("1")
        assert wait_for(lambda: any("tests/new.py" in batch for batch in seen), 10)
        assert watcher.index == walk(tmp_path, watcher.ignore)
    finally:
        watcher.stop()


def test_changes_made_while_the_watch_is_still_arming_are_not_lost(tmp_path: Path) -> None:
    """`mode` reads "watching" before watchfiles has armed its watches (later still on a busy
    machine); a file written in that window must still reach the index and the handler."""
    from watchfiles import watch as real_watch

    tree(tmp_path)
    seen: list[set[str]] = []

    def slow_to_arm(*paths: str, **kwargs: object):  # type: ignore[no-untyped-def]
        time.sleep(1.5)  # the watch is not armed yet: writes now produce no event
        yield from real_watch(*paths, **kwargs)  # type: ignore[arg-type]

    watcher = Watcher(
        tmp_path, seen.append, debounce_ms=100, rescan_seconds=3600, watch=slow_to_arm
    )
    watcher.start()
    try:
        assert wait_for(lambda: watcher.mode == "watching", 5)
        (tmp_path / "AGENTS.md").write_text("- written before the watch was armed\n")
        assert wait_for(lambda: "AGENTS.md" in watcher.index, 10)
        assert any("AGENTS.md" in batch for batch in seen)
    finally:
        watcher.stop()


def test_changes_made_while_a_restarted_watch_is_arming_are_not_lost(tmp_path: Path) -> None:
    """A top-level folder that comes or goes restarts the tree watch: the reconciliation before
    it runs at once, the new watch arms later (later still on a busy machine); a file written in
    between must still reach the index, long before the periodic rescan."""
    from watchfiles import watch as real_watch

    tree(tmp_path)
    seen: list[set[str]] = []
    generations: list[int] = []
    arming = threading.Event()

    def slow_to_rearm(*paths: str, **kwargs: object):  # type: ignore[no-untyped-def]
        if kwargs.get("recursive"):
            generations.append(1)
            if len(generations) > 1:  # a restarted generation: not armed for a while
                arming.set()
                time.sleep(1.5)
        yield from real_watch(*paths, **kwargs)  # type: ignore[arg-type]

    watcher = Watcher(
        tmp_path, seen.append, debounce_ms=100, rescan_seconds=3600, watch=slow_to_rearm
    )
    watcher.start()
    try:
        assert wait_for(lambda: watcher.mode == "watching", 5)
        time.sleep(2.5)  # past the start's own early reconciliation
        watcher._restart.set()  # as a top-level folder coming or going does
        assert arming.wait(10)
        (tmp_path / "src" / "pkg" / "late.py").write_text("x = 1\n")
        assert wait_for(lambda: "src/pkg/late.py" in watcher.index, 10)
        assert any("src/pkg/late.py" in batch for batch in seen)
    finally:
        watcher.stop()
