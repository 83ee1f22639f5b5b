"""The one project-identity resolver (design §4), used by every read and write.

A project has a display *name* and a *key*. The name: folder → the name in `pyproject.toml` /
`package.json` / `Cargo.toml` / `go.mod` at the folder or its git root → the git root's folder
name → the folder's name, lowercased and made scope-safe. The key tells two repositories that
share a name apart, and is what scopes use (`project:<key>`): a readable part and a hash of the
project's *origin* — the repository's normalised remote URL (`github.com/acme/api`, credentials,
scheme, port and `.git` dropped, host lowercased; plus `#<path>` when the project is a package
below the repository's root), else the canonical (resolved) root path. So `api` with a remote and
`api` in another folder without one are `api-3f2a9c1b7d0e` and `api-81d4e0c2aa97`.
A git root above the folder counts only when its repository tracks files in the folder
(`boundary.git_root`): a project under a dotfiles home is not named after the home.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from nous.workspace import boundary

log = logging.getLogger(__name__)
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.defpath}
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://(.*)$", re.I | re.S)
_SCP = re.compile(r"^(?:[^@/]*@)?([^:/\\]{2,}):(.*)$", re.S)  # user@host:path (not C:\path)
HASH_CHARS = 12
MANIFEST_BYTES = 1_000_000


@dataclass(frozen=True)
class Project:
    """A resolved project: display name, key, the root it was resolved from, and how."""

    name: str
    """Display name (`api`): for people, never for telling projects apart."""
    key: str
    """`<readable>-<hash of origin>`: what the project's scope is made of."""
    root: Path
    source: str
    """Where the name came from: a manifest file name, `git` or `folder`."""
    origin: str = ""
    """What the key hashes: `<normalised remote>[#<path in the repository>]` or the root path."""
    aliases: tuple[str, ...] = field(default=())
    """Earlier keys of this same project (its path key once it has a remote): their memories are
    this project's too."""

    @property
    def scope(self) -> str:
        return f"project:{self.key}"


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
    """The last element of the module path, past a major-version suffix (Go's `/vN`, N ≥ 2:
    `github.com/acme/widget/v2` is `widget`), quotes and a trailing comment aside."""
    match = re.search(r"^module\s+\"?([^\s\"]+)", text, re.MULTILINE)
    if not match:
        return None
    parts = [p for p in match.group(1).split("/") if p]
    if len(parts) > 1 and re.fullmatch(r"v[2-9]\d*|v[1-9]\d+", parts[-1]):
        parts.pop()
    return parts[-1] if parts else None


def slug(name: str) -> str:
    """Lowercase, scope-safe id: `@scope/My Pkg` → `scope-my-pkg`."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")
    return cleaned or "workspace"


def normalise_remote(url: str, base: Path | None = None) -> str:
    """One spelling per repository: `git@GitHub.com:acme/api.git`, `ssh://git@github.com:22/
    acme/api`, `https://user:token@github.com/acme/api.git/` → `github.com/acme/api`. A local
    path remote becomes `file:<absolute path>` (relative ones against `base`). No credentials
    survive. Empty for an empty URL."""
    url = url.strip()
    if not url:
        return ""
    scheme = _SCHEME.match(url)
    if scheme and scheme.group(1).lower() == "file":
        return _local(unquote(scheme.group(2)), base)
    if scheme:
        authority, _, path = scheme.group(2).partition("/")
    elif (scp := _SCP.match(url)) is not None:
        authority, path = scp.group(1), scp.group(2)
    else:
        return _local(url, base)
    host = authority.rpartition("@")[2]  # drop `user:password@`
    host = host[: host.index("]") + 1] if host.startswith("[") and "]" in host else host
    host = host.partition(":")[0] if not host.startswith("[") else host  # drop the port
    path = re.split(r"[?#]", unquote(path), maxsplit=1)[0]
    path = "/".join(part for part in path.replace("\\", "/").split("/") if part)
    path = path.removesuffix(".git").rstrip("/")
    return f"{host.lower()}/{path}"


def _local(path: str, base: Path | None) -> str:
    raw = Path(path)
    if not raw.is_absolute() and base is not None:
        raw = base / raw
    with contextlib.suppress(OSError, RuntimeError):
        raw = raw.resolve()
    text = str(raw).rstrip("/").removesuffix(".git").rstrip("/")
    return f"file:{text}"


def remote_url(git_root: Path) -> str:
    """The repository's `origin` URL (else its first remote's, by name); empty without one or
    when git cannot read the repository. Never prompts, never touches the network."""
    try:
        result = subprocess.run(
            ["git", "-C", str(git_root), "config", "--get-regexp", r"^remote\..*\.url$"],
            capture_output=True, text=True, timeout=10, check=False, env=_GIT_ENV,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        log.info("no remote read for %s: %s", git_root, exc)
        return ""
    remotes: dict[str, str] = {}
    for line in result.stdout.splitlines() if result.returncode == 0 else []:
        key, _, value = line.partition(" ")
        name = key.removeprefix("remote.").removesuffix(".url")
        remotes.setdefault(name, value)
    if not remotes:
        return ""
    return remotes.get("origin") or remotes[sorted(remotes)[0]]


def key_of(readable: str, origin: str) -> str:
    digest = hashlib.sha256(origin.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{slug(readable)[:40].strip('-.') or 'project'}-{digest[:HASH_CHARS]}"


def _readable(origin: str) -> str:
    """The last path part of an origin: the repository's or package's folder name."""
    tail = origin.rpartition("#")[2] if "#" in origin else origin.removeprefix("file:")
    return PurePosixPath(tail.replace("\\", "/")).name or tail


def resolve(folder: Path | str) -> Project:
    """The project a workspace folder belongs to."""
    folder = Path(folder).resolve()
    git_root = _git_root(folder)
    name, root, source = slug(folder.name), folder, "folder"
    for candidate in dict.fromkeys([folder, git_root or folder]):
        named = _manifest_name(candidate)
        if named:
            name, root, source = slug(named[0]), candidate, named[1]
            break
    else:
        if git_root is not None:
            name, root, source = slug(git_root.name), git_root, "git"
    path_origin = str(root)
    path_key = key_of(_readable(path_origin), path_origin)
    remote = normalise_remote(remote_url(git_root), git_root) if git_root is not None else ""
    if not remote:
        return Project(name, path_key, root, source, path_origin)
    assert git_root is not None
    inside = root.relative_to(git_root).as_posix() if root != git_root else ""
    origin = f"{remote}#{inside}" if inside else remote
    return Project(name, key_of(_readable(origin), origin), root, source, origin, (path_key,))
