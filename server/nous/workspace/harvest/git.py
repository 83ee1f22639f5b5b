"""The last N commits of the local git history → episodes (no network: `git log` only)."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

from nous.workspace.boundary import GIT_ENV
from nous.workspace.harvest.model import Harvested

log = logging.getLogger(__name__)
_FIELD, _RECORD = "\x1f", "\x1e"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-C", str(root), *args], capture_output=True,
            text=True, errors="replace", timeout=20, check=False, env=GIT_ENV,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("git history not harvested: %s", exc)
        return None


def harvest(root: Path, limit: int = 50) -> list[Harvested]:
    """Episodes for the last `limit` commits; none when `root` is not in a git work tree. When
    `root` is a folder inside a larger work tree (a monorepo package, a project under a dotfiles
    home), only the commits that touch files under `root` (`git log -- .`): the rest of the
    repository's history is not this folder's."""
    prefix = _git(root, "rev-parse", "--show-prefix")
    if prefix is None or prefix.returncode != 0:
        return []
    result = _git(
        root, "log", f"-n{limit}", "--no-color", "--date=short",
        f"--pretty=format:%H{_FIELD}%an{_FIELD}%ad{_FIELD}%s{_FIELD}%b{_RECORD}",
        *(["--", "."] if prefix.stdout.strip() else []),
    )  # fmt: skip
    if result is None or result.returncode != 0:
        return []
    out = []
    for record in result.stdout.split(_RECORD):
        fields = record.strip("\n").split(_FIELD)
        if len(fields) < 5 or not fields[0]:
            continue
        sha, author, date, subject, body = fields[:5]
        text = f"Commit {sha[:10]} by {author} on {date}: {subject.strip()}"
        if body.strip():
            text += "\n" + " ".join(body.split())[:600]
        out.append(
            Harvested(kind="episode", content=text, anchor=f"git:{sha}", tags=["git"],
                      confidence=1.0, importance=0.4)
        )  # fmt: skip
    return out
