"""The last N commits of the local git history → episodes (no network: `git log` only)."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

from nous.workspace.harvest.model import Harvested

log = logging.getLogger(__name__)
_FIELD, _RECORD = "\x1f", "\x1e"


def harvest(root: Path, limit: int = 50) -> list[Harvested]:
    """Episodes for the last `limit` commits; none when `root` is not a git work tree."""
    try:
        result = subprocess.run(
            ["git", "-C", str(root), "log", f"-n{limit}", "--no-color",
             f"--pretty=format:%H{_FIELD}%an{_FIELD}%ad{_FIELD}%s{_FIELD}%b{_RECORD}",
             "--date=short"],
            capture_output=True, text=True, timeout=20, check=False,
            env={"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin:/usr/local/bin"},
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("git history not harvested: %s", exc)
        return []
    if result.returncode != 0:
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
