"""The secret-detection library Nous builds on: Kingfisher (mongodb/kingfisher, Apache-2.0).

Kingfisher runs the Betterleaks rule set (the maintained successor of gitleaks' rules, ~460 vendor
formats with their own false-positive filters) on a Rust/Vectorscan engine, in process and
offline, and reports byte offsets. Its rules are compiled once per process (about 0.3 s with its
on-disk rule cache, 2.7 s the very first time on a machine); scanning a 500-character memory
takes a few microseconds. Validation and revocation (the parts that talk to providers) are never
used here.

Where no wheel exists (or `NOUS_SECRETS_ENGINE=builtin`), `available()` is False and detection
falls back to Nous's own rules alone, with one warning in the log.
"""

from __future__ import annotations

import logging
import re
import threading
from importlib import metadata
from typing import Any

log = logging.getLogger(__name__)

NAME = "kingfisher"
DISTRIBUTION = "kingfisher-secret-scanner"
TIMEOUT_S = 2.0
BYTES_PER_S = 200_000
MAX_TIMEOUT_S = 5.0
"""A scan may take 2 s, or 1 s per 200 KB up to 5 s; past that the own rules stand alone."""

_lock = threading.Lock()
_scanner: Any = None
_failed = False
_builtin = False
_generation = 0
"""Moves each time the engine changes (`configure`, a load that failed or that found another
version than `expected` named): what a cached rule-set id is checked against."""
_gaps = 0
"""Scans the library gave up on (timeouts): a text scanned then had the own rules alone."""


def configure(builtin: bool) -> None:
    """`builtin`: the own rules alone, never the library (`NOUS_SECRETS_ENGINE=builtin`, read
    by `nous.settings`); called once at startup, before the first scan."""
    global _builtin, _scanner, _failed, _generation
    with _lock:
        if builtin != _builtin:
            _builtin, _scanner, _failed = builtin, None, False
            _generation += 1


def _load() -> Any:
    global _scanner, _failed, _generation
    with _lock:
        if _scanner is not None or _failed:
            return _scanner
        if _builtin:
            _failed = True
            return None
        try:
            from kingfisher_sdk import Rules, Scanner, __version__

            _scanner = Scanner(Rules(confidence="low"))
            if __version__ != _installed():  # not the distribution's copy: named by its own
                _generation += 1
        except Exception as exc:  # ImportError, or a native failure compiling the rules
            _failed = True
            _generation += 1  # `expected` named the library: it names the own rules now
            log.warning("secret detection without %s (%s): own rules only", NAME, exc)
        return _scanner


def preload() -> None:
    """Start compiling the rules on a thread (the library releases the GIL meanwhile): a
    one-shot command opens its store and loads its model while they compile, instead of
    waiting ~0.2 s for them at its first read. A scan before they are ready waits for them."""
    if _scanner is None and not _failed:
        threading.Thread(target=_load, name="nous-secret-rules", daemon=True).start()


def available() -> bool:
    """Whether the library is loaded (loading it on first call)."""
    return _load() is not None


def generation() -> int:
    """Moves each time the engine changes (see `_generation`)."""
    return _generation


def expected() -> str:
    """The engine scans here run, named without waiting for the rules to compile: `builtin`
    (configured so, or the library failed to load), else the loaded library's version, else the
    installed distribution's. A load that fails or finds another version afterwards moves
    `generation`, so whoever cached this name asks again."""
    if _builtin or _failed:
        return "builtin"
    installed = _installed()
    if _scanner is not None or installed is None:
        return version()  # loaded (or, not installed as a distribution, loaded now)
    return f"{NAME} {installed}"


def _installed() -> str | None:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def gaps() -> int:
    """How many scans so far the library gave up on (a text it timed out on had the own rules
    alone): a caller that must know every text it scanned had the whole rule set compares
    this before and after."""
    return _gaps


def version() -> str:
    if not available():
        return "builtin"
    from kingfisher_sdk import __version__

    return f"{NAME} {__version__}"


_IDENTIFIER_RULE = re.compile(
    r"(?:-id|-name|-url|-host|-domain|-username|-address|-repository)(?:\.\d+)?$"
)
"""The library's invisible helper rules that find identifiers, not secrets (`azure-tenant-id`,
`azure-client-id`: a UUID after `AZURE_TENANT_ID=` is no credential). Its invisible secret
components (`aws-secret-access-key`, `ovh-consumer-key`, …) still count."""
_PROSE = re.compile(
    r"(?:key|token|secret|password|passwd|credential|dsn)s?['\"`)]?"
    r"( (?:is|was|are|to|holds|equals) | ?-> ?)(?=\S)",
    re.I,
)
"""A key's name joined to its value by a word, in prose. The library's vendor rules want a
`:` or `=` after the vendor's name (`datadog_api_key: …`); "our datadog api key is …" reaches
them once these words are read as `:` (same length, so offsets hold). Only after a secret's
word: "the runbook is in docs/" costs no second scan."""


def _as_assignments(text: str) -> str:
    out, last = [], 0
    for m in _PROSE.finditer(text):
        out += [text[last : m.start(1)], ":".center(m.end(1) - m.start(1), " ")]
        last = m.end(1)
    return "".join([*out, text[last:]])


def scan(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) in character offsets for each finding; [] when unavailable. Prose
    ("the mailgun key is …", "set the datadog token to …") is scanned a second time with its
    joining words read as `:`, so the library's vendor rules apply to it too."""
    found = _scan(text)
    if text and _PROSE.search(text):
        prose = _scan(_as_assignments(text))
        found += [f for f in prose if f not in found]
    return found


def _scan(text: str) -> list[tuple[str, int, int]]:
    global _gaps
    scanner = _load()
    if scanner is None or not text:
        return []
    data = text.encode("utf-8", "surrogatepass")
    try:  # its PEM rule is quadratic on hostile input (0.3 s at 200 KB, 1 s at 400 KB)
        timeout = min(MAX_TIMEOUT_S, max(TIMEOUT_S, len(data) / BYTES_PER_S))
        found = scanner.scan(data, timeout=timeout)
    except TimeoutError:
        _gaps += 1
        log.warning("%s gave up on a %d-byte text: own rules only for it", NAME, len(data))
        return []
    if not found:
        return []
    ascii_only = len(data) == len(text)
    out = []
    for f in found:
        if not f.visible and _IDENTIFIER_RULE.search(f.rule_id):
            continue  # a helper rule: an id, a name or a host a composite rule pairs with a secret
        loc = f.location
        start, end = int(loc["start_offset"]), int(loc["end_offset"])
        if not ascii_only:  # byte offsets to character offsets
            start = len(data[:start].decode("utf-8", "surrogatepass"))
            end = len(data[:end].decode("utf-8", "surrogatepass"))
        if end > start:
            out.append((_kind(f.rule_id), start, end))
    return out


def _kind(rule_id: str) -> str:
    """`betterleaks.github-pat` → `github-pat`; `veles.secrets/npmjsaccesstoken` → the last part."""
    return rule_id.rsplit("/", 1)[-1].split(".", 1)[-1] if "." in rule_id else rule_id
