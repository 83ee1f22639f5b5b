"""Token counting with tiktoken, offline.

The BPE files ship gzipped in the package data `nous/models/`; at first use they are unpacked
into a private cache folder (`configure`: `Settings.token_cache`, from `TIKTOKEN_CACHE_DIR`;
else the user cache dir) under the name tiktoken looks for, `TIKTOKEN_CACHE_DIR` is pointed
there, and tiktoken verifies the content hash itself. Counting uses `encode_ordinary`, so
special-token text in a memory is counted as text instead of raising.

Loading an encoding the way tiktoken does (read the file, check its pinned hash, base64-decode
200k lines) is half of a one-shot command's encoding time: the first load also writes the
encoding's constructor arguments next to the file (`marshal`, with their own sha256), and later
loads build the encoding from those.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import marshal
import os
import tempfile
import threading
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import platformdirs

from nous import assets
from nous.errors import AssetError

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "o200k_base"
ENCODINGS = ("o200k_base", "cl100k_base")
_lock = threading.Lock()
_folder: Path | None = None


def configure(folder: Path | None) -> None:
    """The folder the encodings are unpacked into (`None`: the user cache dir); called once at
    startup by `nous.settings.install`."""
    global _folder
    _folder = folder


class TokenCounter(Protocol):
    """What the rest of Nous needs from an encoding."""

    name: str

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


_CACHED_TEXT_CHARS = 4000
_CACHED_COUNTS = 50_000


class TiktokenCounter:
    """Counts and truncates with one tiktoken encoding."""

    def __init__(self, name: str, folder: Path | None = None) -> None:
        self.name = name
        self._encoding = _load(name, folder)
        # tiktoken keeps the Python dict of 200k byte strings it built the encoder from only to
        # pickle the encoding; the encoder holds its own copy. Dropped: 22 MB of o200k's 67.
        self._encoding._mergeable_ranks = {}
        # Memory lines are counted again on every request that considers them: a bounded cache
        # of short texts' counts (the rendered whole is always counted afresh).
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        if len(text) > _CACHED_TEXT_CHARS:
            return len(self._encoding.encode_ordinary(text))
        n = self._counts.get(text)
        if n is None:
            n = len(self._encoding.encode_ordinary(text))
            if len(self._counts) >= _CACHED_COUNTS:
                self._counts.clear()
            self._counts[text] = n
        return n

    def truncate(self, text: str, max_tokens: int) -> str:
        ids = self._encoding.encode_ordinary(text)
        if len(ids) <= max_tokens:
            return text
        return str(self._encoding.decode(ids[: max(0, max_tokens)]))


def _cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("nous")) / "tiktoken"


def _seed_cache(name: str) -> Path:
    """Unpack the encoding into the cache folder tiktoken reads (atomically, once)."""
    entry = assets.manifest_entry("encodings", name)
    source = assets.asset("encodings", name, "file")
    folder = _folder or _cache_dir()
    target = folder / entry["cache_key"]
    if target.is_file():
        return folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with (
            tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp,
            gzip.open(source.path, "rb") as packed,
        ):
            tmp.write(packed.read())
        os.replace(tmp.name, target)
    except OSError as exc:
        raise AssetError(f"cannot unpack token encoding {name} into {folder}: {exc}") from exc
    return folder


def _load(name: str, folder: Path | None) -> Any:
    """The tiktoken `Encoding`: from the arguments file in `folder` when it is there and whole,
    else the way tiktoken loads it (hash-checked), writing the arguments file for next time."""
    import tiktoken

    if folder is None:
        return tiktoken.get_encoding(name)
    entry = assets.manifest_entry("encodings", name)
    fast = folder / f"{entry['cache_key']}.tiktoken-{tiktoken.__version__}.args"
    try:
        data = fast.read_bytes()
        digest, payload = data[:64], data[64:]
        if hashlib.sha256(payload).hexdigest().encode() == digest:
            args = marshal.loads(payload)
            return tiktoken.Encoding(**args)
        log.info("token encoding cache %s is damaged: rebuilt", fast)
    except (OSError, ValueError, EOFError, TypeError):
        pass
    import importlib

    openai_public = importlib.import_module("tiktoken_ext.openai_public")
    args = getattr(openai_public, name)()  # reads the file tiktoken checks against its hash
    encoding = tiktoken.Encoding(**args)
    payload = marshal.dumps(args)
    try:
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp:
            tmp.write(hashlib.sha256(payload).hexdigest().encode() + payload)
        os.replace(tmp.name, fast)
    except OSError as exc:
        log.info("cannot write token encoding cache %s: %s", fast, exc)
    return encoding


@cache
def counter(name: str = DEFAULT_ENCODING) -> TiktokenCounter:
    """The shared counter for an encoding (`o200k_base` or `cl100k_base`); loads once."""
    if name not in ENCODINGS:
        raise AssetError(f"unknown token encoding {name!r} (use one of: {', '.join(ENCODINGS)})")
    with _lock:
        folder = _seed_cache(name)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        try:
            return TiktokenCounter(name, folder)
        except Exception as exc:  # tiktoken raises bare exceptions on a bad/missing file
            raise AssetError(f"cannot load token encoding {name}: {exc}") from exc


def count(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens in `text` with the named encoding."""
    return counter(encoding).count(text)
