"""Redacting credentials from text before it is stored and again before it is injected.

Detection is the Kingfisher library (`library.py`: the Betterleaks rule set, hundreds of vendor
formats) plus Nous's own context rules (`rules.py`: assignments, URLs, command lines, headers,
`.netrc`, key blocks, bare random strings; `shapes.py`: token shapes the library gates or lacks)
with their look-alike vetoes (`values.py`; `data.py`: base64 blocks, files and share links).
Measured on the generated corpus in `tests/security/` (`scripts/secrets-corpus`; figures in
docs/reliability.md). Git SHAs, UUIDs, digests, lockfile hashes and public keys are left alone:
memories cite them.

`redact` is what the store applies to every field it writes (content, tags, source); `scrub` is
the cached form applied again to the fields read back (content, and its renderings when it had a
secret; source; tags), so a row written before a rule existed is redacted before it is rendered.
`rules_id` names the rule set in force, so the store can tell a row whose every field was found
clean by these very rules (read back as it is: `memory.rows`) from one that must be scrubbed.
`NOUS_SECRETS_ENGINE=builtin` runs the own rules alone.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nous.text.secrets import library, rules, values


@dataclass(frozen=True)
class Redaction:
    """One redacted span: what kind of secret, where (in the original text)."""

    kind: str
    start: int
    end: int


def find(text: str) -> list[Redaction]:
    """Every secret-looking span, merged where they overlap, in text order."""
    if not text:
        return []
    spans = [
        s
        for s in library.scan(text)
        if not values.placeholder(text[s[1] : s[2]]) and not values.reference(text[s[1] : s[2]])
    ]  # the library's generic URI rule takes `postgres://user:password@localhost` for real
    spans += rules.scan(text)
    spans.sort(key=lambda s: (s[1], -s[2]))
    merged: list[Redaction] = []
    for kind, start, end in spans:
        if merged and start < merged[-1].end:
            if end > merged[-1].end:
                merged[-1] = Redaction(merged[-1].kind, merged[-1].start, end)
            continue
        merged.append(Redaction(kind, start, end))
    return merged


def redact(text: str) -> tuple[str, list[Redaction]]:
    """The text with each secret replaced by `[REDACTED:<kind>]`, and what was replaced."""
    found = find(text)
    if not found:
        return text, found
    out, last = [], 0
    for span in found:
        out.append(text[last : span.start])
        out.append(f"[REDACTED:{span.kind}]")
        last = span.end
    out.append(text[last:])
    return "".join(out), found


def scrub(text: str) -> str:
    """`redact(text)[0]`, cached: read paths call it for the fields of every row they return
    (an equal string back when there is nothing to redact). A text `vouch`ed for under the rules
    in force comes back as it is, unscanned."""
    if text in _vouched and _vouched[text] == rules_id():
        return text
    return _scrub(text)


@functools.lru_cache(maxsize=16_384)
def _scrub(text: str) -> str:
    return redact(text)[0]


def clean(texts: Iterable[str]) -> bool:
    """Whether `find` reports nothing in any of `texts`, each scanned in full by the rules in
    force now (uncached; False when the library gave up on one of them)."""
    gaps = library.gaps()
    return not any(find(t) for t in texts) and library.gaps() == gaps


def gaps() -> int:
    """Scans the library has given up on so far (`library.gaps`)."""
    return library.gaps()


VOUCHED_MAX = 16_384
_vouched: dict[str, str] = {}
"""Texts found clean, by the id of the rules that found them so."""


def vouch(*texts: str) -> None:
    """Record that `texts` were found clean by the rules in force (`clean`, when their row was
    sealed): `scrub` and `contains` answer them without scanning. Bounded (forgotten all at
    once when full: a forgotten text is scanned again, never trusted)."""
    if len(_vouched) > VOUCHED_MAX:
        _vouched.clear()
    rules = rules_id()
    for text in texts:
        _vouched[text] = rules


def rules_id() -> str:
    """A short name of the rule set in force: the engine (the library's version, or the own
    rules alone), this package's source and Python's version. Two processes with the same id
    redact any text the same way; any change to a rule, a veto or the library changes it.
    Named without waiting for the library's rules to compile (`library.expected`): a read of
    sealed rows never waits for them."""
    global _rules
    generation = library.generation()
    if _rules is None or _rules[0] != generation:
        _rules = (generation, _rules_id(library.expected()))
    return _rules[1]


_rules: tuple[int, str] | None = None


@functools.cache
def _rules_id(engine_name: str) -> str:
    digest = hashlib.sha256(f"{engine_name}\0{sys.version_info[:2]}\0".encode())
    try:
        sources = [(p.name, p.read_bytes()) for p in sorted(Path(__file__).parent.glob("*.py"))]
    except OSError:
        sources = []
    if not sources:  # an install without its sources: the package's version stands for them
        from nous import __version__

        sources = [("version", __version__.encode())]
    for name, source in sources:
        digest.update(name.encode() + b"\0" + source + b"\0")
    return digest.hexdigest()[:12]


def contains(text: str) -> bool:
    """Whether `find` would report anything (through `scrub`'s cache: the pipeline asks it of
    texts the store has just scrubbed)."""
    return scrub(text) != text


def engine() -> str:
    """What detects secrets here: `kingfisher <version> + nous rules`, or `nous rules` alone."""
    return f"{library.version()} + nous rules" if library.available() else "nous rules"
