"""The harvest boundary (design §4) against the real `nous harvest` CLI, the real daemon and the
watcher: only regular files inside the workspace folder are read, symlinks are resolved and kept
inside it, reads are bounded and never block, a git root above the folder pulls nothing in, and
any file name survives every notification (`.nousignore` semantics: test_nousignore.py).

Markers are random words, so a leak is found whatever it is embedded in. Each CLI run has a
timeout and an address-space limit: a hang or an unbounded read fails the test instead of the
machine."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import resource
import sqlite3
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from nous.workspace import boundary
from nous.workspace.harvest import sync
from tests.e2e.conftest import SERVE, init_params, plain, server_env

NOUS = [sys.executable, "-m", "nous"]
ADDRESS_SPACE = 3 * 2**30  # the model fits; reading /dev/zero into memory does not
ADR = "# {n}. {title}\n\n## Status\n\nAccepted\n\n## Context\n\nWe need one way.\n\n## Decision\n\n{rule}\n"


def word() -> str:
    return "".join(random.choices(string.ascii_lowercase, k=12))


def rule(marker: str) -> str:
    return f"- Never deploy the {marker} service on Fridays.\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
                        "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
                        "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(repo)})  # fmt: skip


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def harvest(ws: Path, db: Path) -> tuple[dict[str, Any], list[str]]:
    """`nous harvest` on `ws`; its JSON report (must be valid UTF-8) and every stored content."""
    result = subprocess.run(
        [*NOUS, "--db", str(db), "--workspace", str(ws), "--json", "harvest"],
        capture_output=True, timeout=90, preexec_fn=_limit, cwd=ws,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    report = json.loads(result.stdout.decode("utf-8"))
    with sqlite3.connect(db) as conn:
        contents = [row[0] for row in conn.execute("SELECT content FROM memories")]
    return report, contents


def leaked(markers: list[str], contents: list[str]) -> list[str]:
    return [m for m in markers if any(m in c for c in contents)]


# -- symlinks, ignored targets, undecodable names: one CLI run over one hostile workspace ---------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("hostile")
    ws, outside = base / "ws", base / "outside"
    (outside / "adr").mkdir(parents=True)
    (ws / ".github").mkdir(parents=True)
    git(ws, "init", "-q", "-b", "main")
    m: dict[str, str] = {k: word() for k in ("out", "rel", "adr", "dir", "env", "git", "nous",
                                            "keep")}  # fmt: skip
    (outside / "rules.md").write_text(f"# Rules\n\n{rule(m['out'])}")
    (outside / "AGENTS.md").write_text(f"# Rules\n\n{rule(m['rel'])}")
    (outside / "adr" / "0001-x.md").write_text(ADR.format(n=1, title="Out", rule=rule(m["adr"])))
    (outside / "sub").mkdir()
    (outside / "sub" / "AGENTS.md").write_text(f"# Rules\n\n{rule(m['dir'])}")
    (ws / ".env.production").write_text(f"DB_PASSWORD=hunter2\n{rule(m['env'])}")
    (ws / ".git" / "description").write_text(f"# Rules\n\n{rule(m['git'])}")
    (ws / ".nousignore").write_text("private/\n")
    (ws / "private").mkdir()
    (ws / "private" / "rules.md").write_text(f"# Rules\n\n{rule(m['nous'])}")
    (ws / "notes").mkdir()
    (ws / "notes" / "team.md").write_text(f"# Rules\n\n{rule(m['keep'])}")
    (ws / "CLAUDE.md").symlink_to("/etc/passwd")
    (ws / "CONVENTIONS.md").symlink_to(".env.production")
    (ws / "AGENTS.md").symlink_to("../outside/AGENTS.md")
    (ws / ".github" / "copilot-instructions.md").symlink_to(outside / "rules.md")
    (ws / "docs").symlink_to(outside)  # docs/adr/0001-x.md through a symlinked directory
    (ws / "sub").symlink_to(outside / "sub")
    (ws / "GEMINI.md").symlink_to(".git/description")
    (ws / ".cursorrules").symlink_to("private/rules.md")
    (ws / ".clinerules").symlink_to("notes/team.md")  # inside and not excluded: harvested
    report, contents = harvest(ws, base / "memory.db")
    return {"report": report, "contents": contents, "m": m}


def test_symlink_to_a_file_outside_the_folder_is_not_harvested(hostile: dict[str, Any]) -> None:
    m, contents = hostile["m"], hostile["contents"]
    assert not [c for c in contents if "root:x:0:0" in c or "/bin/" in c], "CLAUDE.md → /etc/passwd"
    assert leaked([m["out"], m["rel"]], contents) == []
    assert "CLAUDE.md" in json.dumps(hostile["report"]["errors"])


def test_symlink_to_an_excluded_file_inside_the_folder_is_not_harvested(
    hostile: dict[str, Any],
) -> None:
    m, contents = hostile["m"], hostile["contents"]
    assert not [c for c in contents if "hunter2" in c or "DB_PASSWORD" in c]
    assert leaked([m["env"], m["git"], m["nous"]], contents) == []  # .env*, .git/, .nousignore


def test_symlinked_directory_out_of_the_folder_is_not_walked(hostile: dict[str, Any]) -> None:
    assert leaked([hostile["m"]["adr"], hostile["m"]["dir"]], hostile["contents"]) == []


def test_symlink_inside_the_folder_to_a_plain_file_is_still_harvested(
    hostile: dict[str, Any],
) -> None:
    assert leaked([hostile["m"]["keep"]], hostile["contents"]) == [hostile["m"]["keep"]]


def test_undecodable_file_names_leave_the_cli_report_valid_utf8(tmp_path: Path) -> None:
    """`harvest` decodes the report as strict UTF-8 JSON; the names show with U+FFFD."""
    ws, keep = tmp_path / "ws", word()
    ws.mkdir()
    (ws / "CLAUDE.md").write_text(f"# Rules\n\n{rule(keep)}")
    root = os.fsencode(ws)
    os.mkdir(root + b"/bad\xffdir")
    for name in (b"/bad\xffdir/AGENTS.md", b"/bad\xff.instructions.md"):
        with open(root + name, "w") as f:
            f.write(f"# Rules\n\n{rule(word())}")
    report, contents = harvest(ws, tmp_path / "memory.db")
    assert leaked([keep], contents) == [keep]
    assert any("bad\ufffddir/AGENTS.md" in e for e in report["errors"]), report["errors"]


# -- FIFOs and devices: the CLI finishes and stays bounded ---------------------------------------


def test_fifo_instruction_file_does_not_hang_the_cli(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    keep = word()
    (ws / "CLAUDE.md").write_text(f"# Rules\n\n{rule(keep)}")
    os.mkfifo(ws / "AGENTS.md")
    os.mkfifo(ws / "CONVENTIONS.md")
    report, contents = harvest(ws, tmp_path / "memory.db")
    assert leaked([keep], contents) == [keep]
    assert sum("not a regular file" in e for e in report["errors"]) == 2, report["errors"]


def test_dev_zero_instruction_file_is_read_bounded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    keep = word()
    (ws / "CLAUDE.md").write_text(f"# Rules\n\n{rule(keep)}")
    (ws / "AGENTS.md").symlink_to("/dev/zero")
    (ws / "CONVENTIONS.md").write_bytes(b"- " + b"x" * (sync.MAX_FILE_BYTES + 10))
    report, contents = harvest(ws, tmp_path / "memory.db")
    assert leaked([keep], contents) == [keep]
    assert [e.split(":")[0] for e in report["errors"]] == ["AGENTS.md", "CONVENTIONS.md"]


@pytest.mark.parametrize("size", [0, 1, 4096, 65_536, 65_537, 200_000])
def test_read_bounded_returns_at_most_the_limit(tmp_path: Path, size: int) -> None:
    (tmp_path / "f.md").write_bytes(os.urandom(size))
    limit = 65_536
    if size > limit:
        with pytest.raises(boundary.TooLarge):
            boundary.read_bounded(tmp_path, "f.md", limit)
    else:
        assert len(boundary.read_bounded(tmp_path, "f.md", limit)) == size


def test_read_bounded_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "AGENTS.md")
    (tmp_path / "link.md").symlink_to("AGENTS.md")
    for rel in ("AGENTS.md", "link.md"):
        with pytest.raises(boundary.NotRegularFile):
            boundary.read_bounded(tmp_path, rel, 1000)


# -- a git root above the folder -------------------------------------------------------------


def test_folder_under_an_unrelated_git_root_reads_neither_its_files_nor_history(
    tmp_path: Path,
) -> None:
    home, own, parent_rule, parent_commit = tmp_path / "home", word(), word(), word()
    proj = home / "proj"
    proj.mkdir(parents=True)
    git(home, "init", "-q", "-b", "main")
    (home / "CLAUDE.md").write_text(f"# Rules\n\n{rule(parent_rule)}")
    (home / ".bashrc").write_text("export EDITOR=vi\n")
    git(home, "add", "CLAUDE.md", ".bashrc")
    git(home, "commit", "-q", "-m", f"Tune the {parent_commit} prompt")
    (proj / "AGENTS.md").write_text(f"# Rules\n\n{rule(own)}")
    report, contents = harvest(proj, tmp_path / "memory.db")
    assert leaked([own, parent_rule, parent_commit], contents) == [own]
    assert report["project"] == "proj" and report["commits"] == 0


def test_a_parent_repository_runs_none_of_its_commands(tmp_path: Path) -> None:
    """Asking a parent repository whether it tracks the folder reads its index, which would run
    a configured `core.fsmonitor` command; the harvest must not."""
    repo, ran = tmp_path / "clone", tmp_path / "ran"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "AGENTS.md").write_text(rule(word()))
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {ran}\n")
    hook.chmod(0o755)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "pkg")
    git(repo, "commit", "-q", "-m", "start")
    git(repo, "config", "core.fsmonitor", str(hook))
    report, _ = harvest(repo / "pkg", tmp_path / "memory.db")
    assert report["commits"] == 1 and not ran.exists()


def test_monorepo_package_harvests_only_its_own_history(tmp_path: Path) -> None:
    mono, own_commit, other_commit = tmp_path / "mono", word(), word()
    pkg = mono / "packages" / "api"
    pkg.mkdir(parents=True)
    git(mono, "init", "-q", "-b", "main")
    (mono / "README.md").write_text("# Mono\n")
    git(mono, "add", "README.md")
    git(mono, "commit", "-q", "-m", f"Start the {other_commit} monorepo")
    (pkg / "main.py").write_text("print('api')\n")
    git(mono, "add", "packages")
    git(mono, "commit", "-q", "-m", f"Add the {own_commit} package")
    report, contents = harvest(pkg, tmp_path / "memory.db")
    assert leaked([own_commit, other_commit], contents) == [own_commit]
    assert report["commits"] == 1


def test_identity_ignores_a_git_root_that_does_not_track_the_folder(tmp_path: Path) -> None:
    from nous.workspace import identity

    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    (home / "package.json").write_text('{"name": "dotfiles"}')
    git(home, "init", "-q", "-b", "main")
    git(home, "add", "package.json")
    git(home, "commit", "-q", "-m", "dotfiles")
    assert identity.resolve(home / "proj").name == "proj"
    (home / "proj" / "x.py").write_text("")
    git(home, "add", "proj")
    git(home, "commit", "-q", "-m", "track proj")
    assert identity.resolve(home / "proj").name == "dotfiles"


# -- the real daemon: names and FIFOs ---------------------------------------------------------

BASE = Path(tempfile.mkdtemp(prefix="nous-boundary-"))
NAMED = BASE / "named"
WATCHED = BASE / "watched"
REPORTS: dict[str, Any] = {}


def _setup_named() -> Path:
    (NAMED / "docs" / "adr").mkdir(parents=True)
    (NAMED / "CLAUDE.md").write_text("# Rules\n\n- Never commit directly to main.\n")
    root = os.fsencode(NAMED)
    os.mkdir(root + b"/sub\xff")
    for name in (b"/bad\xff.md", b"/sub\xff/AGENTS.md", b"/docs/adr/0001-\xff.md"):
        with open(root + name, "w") as f:
            f.write("# Rules\n\n- Always run the linter before pushing.\n")
    return NAMED


def _setup_watched() -> Path:
    WATCHED.mkdir(parents=True)
    (WATCHED / "CLAUDE.md").write_text("# Rules\n\n- Never commit directly to main.\n")
    return WATCHED


async def _start(client: LanguageClient, folder: Path, key: str) -> None:
    indexed = client.protocol.wait_for_notification_async("nous/indexed")
    await client.initialize_session(init_params(folder, options={"watch": True}))
    REPORTS[key] = plain(await asyncio.wait_for(indexed, 90))


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=SERVE, server_env=server_env(BASE / "named.db")),
)
async def named(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    await _start(lsp_client, _setup_named(), "named")
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=SERVE, server_env=server_env(BASE / "watched.db")),
)
async def watched(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    await _start(lsp_client, _setup_watched(), "watched")
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture
def unblock_fifo_readers() -> Iterator[list[Path]]:
    """After the test, give any reader stuck on a FIFO its end of file (so a failing daemon can
    still be shut down)."""
    fifos: list[Path] = []
    yield fifos
    for fifo in fifos:
        with contextlib.suppress(OSError):  # ENXIO: no reader waiting, nothing to unblock
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.asyncio(loop_scope="module")
async def test_indexed_arrives_whatever_the_file_names(named: LanguageClient) -> None:
    [folder] = REPORTS["named"]["folders"]
    assert any("sub\ufffd/AGENTS.md" in e for e in folder["errors"]), folder["errors"]
    status = plain(await asyncio.wait_for(named.protocol.send_request_async("nous/status", {}), 30))
    assert status["indexState"] == "ready"


@pytest.mark.asyncio(loop_scope="module")
async def test_fifo_appearing_while_watched_does_not_block_later_requests(
    watched: LanguageClient, unblock_fifo_readers: list[Path]
) -> None:
    marker = word()
    os.mkfifo(WATCHED / "AGENTS.md")
    unblock_fifo_readers.append(WATCHED / "AGENTS.md")
    (WATCHED / "CLAUDE.md").write_text(f"# Rules\n\n{rule(marker)}")
    deadline = time.monotonic() + 60
    stored = False
    while not stored and time.monotonic() < deadline:  # the watcher's re-harvest got past it
        await asyncio.sleep(0.5)
        with sqlite3.connect(BASE / "watched.db") as conn:
            stored = (
                conn.execute(
                    "SELECT count(*) FROM memories WHERE instr(content, ?) > 0", (marker,)
                ).fetchone()[0]
                > 0
            )
    status = await asyncio.wait_for(watched.protocol.send_request_async("nous/status", {}), 30)
    assert stored and plain(status)["indexState"] == "ready"
