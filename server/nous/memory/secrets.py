"""Redacting credentials from text before it is stored and again before it is injected.

Named patterns for common token formats plus `.env`-style assignments to secret-looking names and
long high-entropy strings. Git SHAs, UUIDs and hex digests are left alone (they are not secrets
and memories cite them).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass

_NAMED: list[tuple[str, re.Pattern[str]]] = [
    (
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"
        ),
    ),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]{3,}(?=@)")),
]
_ASSIGNMENT = re.compile(
    r"(?i)(?P<name>\b[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|client[_-]?secret|auth)[\w.-]*)(?P<sep>\s*[:=]\s*|\s+is\s+)"
    r"(?P<quote>['\"]?)(?P<value>[^\s'\"]{4,})(?P=quote)"
)
_CANDIDATE = re.compile(r"[A-Za-z0-9+/=_-]{32,}")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_UUIDISH = re.compile(r"^[0-9a-fA-F-]{32,40}$")


@dataclass(frozen=True)
class Redaction:
    """One redacted span: what kind of secret, where (in the original text)."""

    kind: str
    start: int
    end: int


_PLACEHOLDERS = frozenset(
    "none null true false required optional empty missing hashed redacted changeme example "
    "xxxx xxxxx string secret password token your_token".split()
)


def _credential_like(value: str) -> bool:
    """A value after `:` or `is` counts when it has a digit or symbol, or mixed case."""
    if re.search(r"[0-9!@#$%^&*+/_-]", value):
        return True
    return len(value) >= 8 and value != value.lower() and value != value.upper()


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def _high_entropy(token: str) -> bool:
    if _HEX.match(token) or _UUIDISH.match(token):
        return False
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return classes >= 3 and _entropy(token) >= 4.2


@functools.lru_cache(maxsize=32_768)
def contains(text: str) -> bool:
    """Whether `find` would report anything (cached: the pipeline asks it for the same memory
    texts on every request)."""
    return bool(find(text))


def find(text: str) -> list[Redaction]:
    """Every secret-looking span, non-overlapping, in text order."""
    spans: list[Redaction] = []
    for kind, pattern in _NAMED:
        spans += [Redaction(kind, m.start(), m.end()) for m in pattern.finditer(text)]
    for m in _ASSIGNMENT.finditer(text):
        value = m.group("value")
        if value.startswith("[REDACTED") or value.lower() in _PLACEHOLDERS:
            continue
        if "=" not in m.group("sep") and not _credential_like(value):
            continue  # "password is required", "token: string" — prose, not a value
        spans.append(Redaction("assigned-secret", m.start("value"), m.end("value")))
    for m in _CANDIDATE.finditer(text):
        if _high_entropy(m.group()):
            spans.append(Redaction("high-entropy", m.start(), m.end()))
    spans.sort(key=lambda r: (r.start, -r.end))
    merged: list[Redaction] = []
    for span in spans:
        if merged and span.start < merged[-1].end:
            continue
        merged.append(span)
    return merged


def redact(text: str) -> tuple[str, list[Redaction]]:
    """The text with each secret replaced by `[REDACTED:<kind>]`, and what was replaced."""
    found = find(text)
    out, last = [], 0
    for span in found:
        out.append(text[last : span.start])
        out.append(f"[REDACTED:{span.kind}]")
        last = span.end
    out.append(text[last:])
    return "".join(out), found
