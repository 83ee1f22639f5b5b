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
`NOUS_SECRETS_ENGINE=builtin` runs the own rules alone.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

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


@functools.lru_cache(maxsize=16_384)
def scrub(text: str) -> str:
    """`redact(text)[0]`, cached: read paths call it for the fields of every row they return
    (an equal string back when there is nothing to redact)."""
    return redact(text)[0]


def contains(text: str) -> bool:
    """Whether `find` would report anything (through `scrub`'s cache: the pipeline asks it of
    texts the store has just scrubbed)."""
    return scrub(text) != text


def engine() -> str:
    """What detects secrets here: `kingfisher <version> + nous rules`, or `nous rules` alone."""
    return f"{library.version()} + nous rules" if library.available() else "nous rules"
