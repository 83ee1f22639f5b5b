"""The harvest boundary (design §4): which files of a workspace folder Nous may look at, and how.

- `Ignore`: one gitignore-semantics matcher (pathspec's `GitIgnoreSpec`: anchored `/CLAUDE.md`,
  `**/GEMINI.md`, negation `!`, directory patterns `foo/`). `harvest_ignore` builds the one for
  `.nousignore` plus the never-harvested `.env*` files; the harvester and the watcher both use it.
- `walk`: the relative paths of the files under a folder; symlinked directories are listed, never
  entered, so a walk cannot leave the folder.
- `read_bounded`: opens only a regular file whose real path is inside the real root and is not
  itself excluded (a symlink to `/etc/passwd` or to `.env.production` is refused), never blocks on
  a FIFO, and returns at most `limit` bytes whatever `st_size` says (`/dev/zero` says 0). Refusals
  are `BoundaryError`s, which are `OSError`s too: every caller that skips an unreadable file skips
  these the same way.
- `git_root`: the git work tree a folder belongs to; a repository above the folder (a dotfiles
  home) counts only when it tracks files inside the folder.
- `display`: a file name as text that JSON and logs accept, whatever bytes it was made of.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pathspec

from nous.errors import NousError
from nous.workspace.detect import IGNORED_DIRS

log = logging.getLogger(__name__)
NEVER_HARVESTED = (".env*",)
"""Appended after `.nousignore`'s own lines, so no `!` line can bring them back."""
IGNORE_FILE_BYTES = 256_000
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin:/usr/local/bin"}
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
Skip = Callable[[str, bool], bool]
"""`skip(relpath, is_dir)`: True leaves the path (and, for a directory, its subtree) out."""


class BoundaryError(NousError, OSError):
    """A workspace path Nous will not read; the harvester logs it and goes on."""

    def __init__(self, rel: str, reason: str) -> None:
        super().__init__(reason)
        self.rel = rel
        self.reason = reason


class NotRegularFile(BoundaryError):
    """A FIFO, socket, device or directory where a file was expected."""


class OutsideWorkspace(BoundaryError):
    """A path whose real location (after symlinks) is not inside the workspace folder."""


class Excluded(BoundaryError):
    """A path, or the target of a symlink, that `.nousignore` / `.env*` / an ignored tree covers."""


class TooLarge(BoundaryError):
    """A file longer than the read limit."""


class UndecodableName(BoundaryError):
    """A file name that is not valid UTF-8: it could not be stored or sent as text."""


def display(name: str) -> str:
    """`name` as valid Unicode text (undecodable bytes become U+FFFD), safe for JSON and logs."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "replace").decode("utf-8")


def is_utf8(name: str) -> bool:
    """False for a name holding undecodable bytes (Python keeps them as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Ignore:
    """A gitignore-semantics matcher over '/'-separated paths relative to one folder."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines = [line.rstrip("\r") for line in lines]
        self.spec = pathspec.GitIgnoreSpec.from_lines(self.lines)
        self._rules = [
            (p.include, p.regex, re.compile(f"(?:{p.regex.pattern})\\Z", p.regex.flags))
            for p in self.spec.patterns
            if isinstance(p, pathspec.RegexPattern) and p.include is not None and p.regex
        ]
        self._folder_excluded = functools.lru_cache(maxsize=8192)(self._folder_excluded_uncached)

    @classmethod
    def of(cls, root: Path, name: str, then: Iterable[str] = ()) -> Ignore:
        """The patterns of the file `root/name` (a missing or unreadable one has none), then
        `then`, which come last and so win over the file's own lines."""
        try:
            text = read_bounded(root, name, IGNORE_FILE_BYTES).decode("utf-8", "replace")
        except FileNotFoundError:
            text = ""
        except OSError as exc:
            log.warning("ignoring %s: %s", display(name), display(str(exc)))
            text = ""
        return cls([*text.splitlines(), *then])

    def __call__(self, rel: str, is_dir: bool = False) -> bool:
        """True when `rel` is excluded: a folder above it is, or the last pattern matching the
        path itself excludes it (git's rule: nothing inside an excluded folder comes back)."""
        folder, _, _name = rel.rpartition("/")
        if folder and self._folder_excluded(folder + "/"):
            return True
        return bool(self._verdict(rel + "/" if is_dir else rel))

    def _folder_excluded_uncached(self, folder: str) -> bool:
        parent = folder[:-1].rpartition("/")[0]
        return bool(parent and self._folder_excluded(parent + "/")) or bool(self._verdict(folder))

    def _verdict(self, path: str) -> bool | None:
        """True (excluded), False (brought back by `!`) or None, from the last pattern that
        matches `path` itself. pathspec alone also lets a pattern match everything below a folder
        it matches, so `!/*` would bring back `sub/deep/` after `sub/*`; git does not."""
        verdict = None
        for include, regex, at_end in self._rules:
            found = regex.search(path)
            if found is None:
                continue
            if found.groupdict().get("ps_d") and found.end() < len(path):
                itself = at_end.search(path) is not None  # or only a folder above it?
            else:  # `docs/**` (`^docs/`) matches what is inside docs/, not docs/ itself
                itself = not (path.endswith("/") and found.end() == len(path)
                              and regex.pattern.endswith("/"))  # fmt: skip
            if itself:
                verdict = include
        return verdict


@functools.cache
def _never_harvested() -> Ignore:
    return Ignore(NEVER_HARVESTED)


def harvest_ignore(root: Path) -> Ignore:
    """What is never harvested: `.nousignore` (gitignore semantics) and `.env*`, last."""
    return Ignore.of(root, ".nousignore", then=NEVER_HARVESTED)


def in_ignored_tree(rel: str) -> bool:
    """True when a folder on the path is a vendored, generated or VCS tree (`IGNORED_DIRS`)."""
    return any(part in IGNORED_DIRS for part in rel.split("/")[:-1])


def walk(root: Path, skip: Skip, max_depth: int | None = None) -> Iterator[str]:
    """Relative '/'-separated paths of everything under `root` that is not a directory (files,
    symlinks to files, FIFOs: `read_bounded` decides what is readable). A symlinked directory is
    neither entered nor listed; `max_depth` counts folders below `root` (0: the root's files)."""
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as entries:
                listed = sorted((entry.name, _kind(entry)) for entry in entries)
        except OSError as exc:  # gone or unreadable since it was listed
            log.debug("walk: cannot list %s: %s", display(rel_dir), exc)
            continue
        for name, kind in listed:
            rel = rel_dir + name
            if kind == "linked-dir":
                continue
            if kind == "dir":
                if (max_depth is None or depth < max_depth) and not skip(rel, True):
                    stack.append((rel + "/", depth + 1))
            elif not skip(rel, False):
                yield rel


def _kind(entry: os.DirEntry[str]) -> str:
    """`dir`, `linked-dir` (a symlink to a directory: neither entered nor listed) or `file`."""
    try:
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        return "linked-dir" if entry.is_symlink() and entry.is_dir() else "file"
    except OSError:  # gone since it was listed: a file-like entry the reader will skip
        return "file"


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def read_bounded(root: Path, rel: str, limit: int, ignore: Ignore | None = None) -> bytes:
    """The bytes of `root/rel`, at most `limit` of them, when it is a regular file inside `root`.

    A symlink is followed only to a regular file inside the real `root` whose own path is not
    excluded (by `ignore`, `.env*`, or an ignored tree such as `.git`). The file is opened with
    O_NONBLOCK | O_NOFOLLOW and checked again on the open descriptor, so a FIFO swapped in after
    the check cannot block. Raises `BoundaryError` (an `OSError`), or the `OSError` of a file that
    is gone or unreadable."""
    if not is_utf8(rel):
        raise UndecodableName(rel, "file name is not valid UTF-8")
    ignore = ignore or _never_harvested()
    real_root = os.path.realpath(root)
    path = os.path.join(real_root, rel)
    mode = os.lstat(path).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise NotRegularFile(rel, "not a regular file")
    real = os.path.realpath(path, strict=True)
    if not _inside(real, real_root):
        raise OutsideWorkspace(rel, "resolves outside the workspace folder")
    for name in dict.fromkeys([rel, os.path.relpath(real, real_root).replace(os.sep, "/")]):
        if ignore(name) or in_ignored_tree(name):
            what = "is excluded" if name == rel else f"points to {display(name)}, which is excluded"
            raise Excluded(rel, what)
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a symlink since the check
            raise OutsideWorkspace(rel, "became a symlink while being read") from exc
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(rel, "not a regular file")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 65_536))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if left <= 0:
        raise TooLarge(rel, f"larger than {limit} bytes")
    return b"".join(chunks)


def read_text(root: Path, rel: str, limit: int) -> str | None:
    """`read_bounded` as UTF-8 text (bad bytes replaced), or None when it is missing or refused
    (for small config files: manifests, ignore files, `.nous/config.toml`)."""
    try:
        return read_bounded(root, rel, limit).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("not read: %s: %s", display(rel), display(str(exc)))
        return None


def git_root(folder: Path) -> Path | None:
    """The root of the git work tree `folder` belongs to: the folder itself when it holds `.git`;
    an ancestor holding `.git` only when that repository tracks files inside the folder (a
    monorepo package does, a project under a dotfiles home does not)."""
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        if not os.path.lexists(candidate / ".git"):
            continue
        if candidate == folder or _tracks(folder):
            return candidate
        log.info("%s is not tracked by the git repository at %s: not its project root",
                 display(str(folder)), display(str(candidate)))  # fmt: skip
        return None
    return None


def _tracks(folder: Path) -> bool:
    try:
        result = subprocess.run(
            # no fsmonitor: reading the index must not run a command a repository configured
            ["git", "-c", "core.fsmonitor=false", "-C", str(folder), "ls-files", "-z", "--", "."],
            capture_output=True, timeout=20, check=False, env=GIT_ENV,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("git ls-files failed in %s: %s", display(str(folder)), exc)
        return False
    return result.returncode == 0 and bool(result.stdout.strip(b"\0"))
