"""The one project-identity resolver (SPEC §4), used by every read and write.

folder → the name in `pyproject.toml` / `package.json` / `Cargo.toml` / `go.mod` at the git root
(or the folder itself when there is no git root) → the git root's folder name → the folder's name.
A git root above the folder counts only when its repository tracks files in the folder
(`boundary.git_root`): a project under a dotfiles home is not named after the home.
The id is lowercased and made safe for a scope (`project:<id>`).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from nous.workspace import boundary

MANIFEST_BYTES = 1_000_000


@dataclass(frozen=True)
class Project:
    """A resolved project: its id, the root it was resolved from, and how."""

    id: str
    root: Path
    source: str

    @property
    def scope(self) -> str:
        return f"project:{self.id}"


def _git_root(folder: Path) -> Path | None:
    return boundary.git_root(folder)


def _manifest_name(root: Path) -> tuple[str, str] | None:
    readers = (
        ("pyproject.toml", lambda t: tomllib.loads(t).get("project", {}).get("name")),
        ("package.json", lambda t: json.loads(t).get("name")),
        ("Cargo.toml", lambda t: tomllib.loads(t).get("package", {}).get("name")),
        ("go.mod", lambda t: _go_module(t)),
    )
    for filename, read in readers:
        text = boundary.read_text(root, filename, MANIFEST_BYTES)
        if text is None:
            continue
        try:
            name = read(text)
        except (ValueError, AttributeError):
            continue  # a broken manifest does not stop identity: fall through
        if isinstance(name, str) and name.strip():
            return name.strip(), filename
    return None


def _go_module(text: str) -> str | None:
    match = re.search(r"^module\s+(\S+)", text, re.MULTILINE)
    return match.group(1).rstrip("/").rsplit("/", 1)[-1] if match else None


def slug(name: str) -> str:
    """Lowercase, scope-safe id: `@scope/My Pkg` → `scope-my-pkg`."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")
    return cleaned or "workspace"


def resolve(folder: Path | str) -> Project:
    """The project a workspace folder belongs to."""
    folder = Path(folder).resolve()
    git_root = _git_root(folder)
    for root in dict.fromkeys([folder, git_root or folder]):
        named = _manifest_name(root)
        if named:
            return Project(slug(named[0]), root, named[1])
    if git_root is not None:
        return Project(slug(git_root.name), git_root, "git")
    return Project(slug(folder.name), folder, "folder")
