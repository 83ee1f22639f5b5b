"""Generated memories that carry secrets in every field (content, tags, source), shared by the
store, CLI and daemon tests; and the check that none of them reached some bytes."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from tests.security import corpus

KINDS = ("fact", "procedure", "decision", "note")


@dataclass(frozen=True)
class Planted:
    kind: str
    content: str
    tags: list[str]
    source: str
    values: tuple[str, ...]


def planted(seed: int = corpus.SEED, n: int = 12) -> list[Planted]:
    """`n` memories about the billing deploy, each with a different generated secret in its
    content, one in a tag and one in its source (single-line secrets for tags and source)."""
    data = corpus.generate(seed)
    by_format: dict[str, corpus.Secret] = {}
    for s in data.secrets:
        if "\n" not in s.text and len(s.text) < 400:
            by_format.setdefault(s.format, s)
    pool = itertools.cycle(by_format.values())
    out = []
    for i in range(n):
        body, tag, src = next(pool), next(pool), next(pool)
        out.append(
            Planted(
                kind=KINDS[i % len(KINDS)],
                content=f"Billing deploy step {i}: {body.text} then rotate the billing keys.",
                tags=["billing", "deploy", tag.text],
                source=f"chat {i}: {src.text}",
                values=body.values + tag.values + src.values,
            )
        )
    return out


def leaks(values: tuple[str, ...] | list[str], *texts: str | bytes) -> list[str]:
    """The secret values found in any of the texts (bytes are searched as UTF-8)."""
    found = []
    for v in values:
        for t in texts:
            if (v.encode() in t) if isinstance(t, bytes) else (v in t):
                found.append(v)
                break
    return found


def database_bytes(path: Path) -> bytes:
    """The database file and its WAL, as stored on disk."""
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
