"""`.nousignore` has gitignore semantics through one matcher (`boundary.harvest_ignore`) that the
harvester and the watcher both build: checked against git itself on generated trees and patterns,
and on the watcher's events; symlinked folders are neither walked nor watched."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous.workspace import boundary, watcher
from nous.workspace.harvest import sync
from nous.workspace.watcher import Watcher, walk

# -- .nousignore: one gitignore-semantics matcher for harvester and watcher ----------------------


def test_anchored_and_double_star_patterns_in_harvester_and_watcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for rel in ("CLAUDE.md", "sub/CLAUDE.md", "GEMINI.md", "sub/GEMINI.md", "AGENTS.md"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("- Use tabs.\n")
    (tmp_path / ".nousignore").write_text("/CLAUDE.md\n**/GEMINI.md\n")
    calls: list[Path] = []
    real = boundary.harvest_ignore

    def spy(root: Path) -> boundary.Ignore:
        calls.append(root)
        return real(root)

    monkeypatch.setattr(boundary, "harvest_ignore", spy)
    assert sync.candidates(tmp_path) == ["AGENTS.md", "sub/CLAUDE.md"]
    w = Watcher(tmp_path, lambda _: None)
    assert {"AGENTS.md", "sub/CLAUDE.md"} <= w.index
    assert not w.index & {"CLAUDE.md", "GEMINI.md", "sub/GEMINI.md"}
    assert [w._keep(None, str(tmp_path / p)) for p in ("CLAUDE.md", "sub/CLAUDE.md")] == [
        False, True,
    ]  # fmt: skip
    assert len(calls) == 2, "harvester and watcher each build the one boundary matcher"


def test_watcher_picks_up_a_changed_nousignore(tmp_path: Path) -> None:
    for rel in ("CLAUDE.md", "sub/CLAUDE.md"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("- Use tabs.\n")
    w = Watcher(tmp_path, lambda _: None, debounce_ms=100, rescan_seconds=3600)
    assert {"CLAUDE.md", "sub/CLAUDE.md"} <= w.index
    w.start()
    try:
        assert watcher.wait_for(lambda: w.mode == "watching", 5)
        time.sleep(0.5)
        (tmp_path / ".nousignore").write_text("/CLAUDE.md\n")
        assert watcher.wait_for(lambda: "CLAUDE.md" not in w.index, 10)
        assert "sub/CLAUDE.md" in w.index
    finally:
        w.stop()


NAMES = ["CLAUDE.md", "AGENTS.md", "GEMINI.md", "CONVENTIONS.md", "notes.md", ".env.local"]
DIRS = ["", "sub/", "docs/", "sub/deep/"]
pattern = st.builds(
    lambda neg, anchor, body: neg + anchor + body,
    st.sampled_from(["", "", "!"]),
    st.sampled_from(["", "/", "**/"]),
    st.sampled_from([*NAMES, "*.md", "sub/", "docs", "sub/*", "sub/CLAUDE.md", "deep/", "*",
                     "!.env.local", "sub/**/AGENTS.md", "docs/**", "**/deep", "[A-C]*.md",
                     "sub/deep/", "!sub/", "!deep", "*/", "**", "sub/deep/**", "?LAUDE.md",
                     "deep/*.md", "docs/"]),
)  # fmt: skip


def _git_visible(ws: Path, lines: list[str]) -> set[str]:
    """What git itself leaves visible with the same lines as its excludes: the oracle."""
    (ws / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (ws / ".git" / "info" / "exclude").write_text("\n".join(lines) + "\n")
    out = subprocess.run(["git", "-C", str(ws), "ls-files", "-z", "--others", "--exclude-standard"],
                         capture_output=True, check=True).stdout  # fmt: skip
    return {p for p in out.decode().split("\0") if p}


@settings(
    max_examples=int(os.environ.get("NOUS_IGNORE_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    files=st.sets(st.tuples(st.sampled_from(DIRS), st.sampled_from(NAMES)), min_size=1),
    lines=st.lists(pattern, max_size=6),
)
def test_nousignore_has_the_semantics_of_git_itself(
    files: set[tuple[str, str]], lines: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
        for folder, name in files:
            (ws / folder).mkdir(parents=True, exist_ok=True)
            (ws / folder / name).write_text("- Use tabs.\n")
        (ws / ".nousignore").write_text("\n".join(lines) + "\n")
        visible = _git_visible(ws, lines) - {".nousignore"}
        kept = {p for p in visible if not Path(p).name.startswith(".env")}
        assert set(sync.candidates(ws)) == {p for p in kept if sync.harvestable(p)}
        assert walk(ws) - {".nousignore"} == kept


def test_symlinked_directory_is_neither_walked_nor_watched(tmp_path: Path) -> None:
    outside, ws = tmp_path / "outside", tmp_path / "ws"
    (outside / "adr").mkdir(parents=True)
    (outside / "AGENTS.md").write_text("- Use tabs.\n")
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("")
    (ws / "linked").symlink_to(outside, target_is_directory=True)
    (ws / "src" / "deep").symlink_to(outside, target_is_directory=True)
    reported: list[set[str]] = []
    w = Watcher(ws, reported.append, debounce_ms=100, rescan_seconds=3600)
    assert w.index == {"src/a.py"} and sync.candidates(ws) == []
    w.start()
    try:
        assert watcher.wait_for(lambda: w.mode == "watching", 5)
        time.sleep(0.5)
        (outside / "new.md").write_text("- Use spaces.\n")
        (outside / "adr" / "0002-x.md").write_text("# 2. X\n")
        time.sleep(0.5)
        (ws / "src" / "sentinel.py").write_text("")
        assert watcher.wait_for(lambda: "src/sentinel.py" in w.index, 10)
        time.sleep(0.5)
    finally:
        w.stop()
    seen = set().union(*reported) | w.index
    assert not {p for p in seen if p.startswith(("linked", "src/deep"))}, seen
