"""Generated memories for the end-to-end tests (store, CLI, daemon): every secret format of the
corpus placed in some field (content, a tag, the source), every look-alike class likewise; and
the check that no secret value reached some output or bytes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nous.memory import renderings
from tests.security import corpus

KINDS = ("fact", "procedure", "decision", "note")


@dataclass(frozen=True)
class Planted:
    kind: str
    content: str
    tags: list[str]
    source: str
    values: tuple[str, ...]
    """For secrets, what must not appear; for look-alikes, the texts that must stay whole."""


def _single(texts: list[str]) -> bool:
    return all("\n" not in t and len(t) < 400 for t in texts)


def planted(seed: int = corpus.SEED) -> list[Planted]:
    """One memory per three formats: each format's first secret in the content (multi-line
    ones), a tag or the source (single-line ones), so every format crosses every layer."""
    data = corpus.generate(seed)
    first: dict[str, corpus.Secret] = {}
    for s in data.secrets:
        first.setdefault(s.format, s)
    multi = [s for s in first.values() if not _single([s.text])]
    single = iter([s for s in first.values() if _single([s.text])])
    out = []
    for i in range(len(first)):
        body = multi.pop() if multi else next(single, None)
        tag, src = next(single, None), next(single, None)
        if body is None:
            break
        parts = [p for p in (body, tag, src) if p is not None]
        out.append(
            Planted(
                kind=KINDS[i % len(KINDS)],
                content=f"Billing deploy step {i}:\n{body.text}\nthen rotate the billing keys.",
                tags=["billing", "deploy", *([tag.text] if tag else [])],
                source=f"chat {i}: {src.text}" if src else f"chat {i}",
                values=tuple(v for p in parts for v in p.values),
            )
        )
    assert {v for p in out for v in p.values} >= {v for s in first.values() for v in s.values}
    return out


def lookalikes(seed: int = corpus.SEED) -> list[Planted]:
    """One memory per look-alike class (its first text as content), with single-line
    look-alikes of other classes as a tag and as the source."""
    data = corpus.generate(seed)
    first: dict[str, corpus.LookAlike] = {}
    for la in data.lookalikes:
        first.setdefault(la.kind, la)
    singles = [la.text for la in data.lookalikes if _single([la.text])]
    pick: Iterator[str] = iter(singles[::3] * 2)
    out = []
    for i, la in enumerate(first.values()):
        tag, src = next(pick), next(pick)
        out.append(
            Planted(
                kind=KINDS[i % len(KINDS)],
                content=f"Billing deploy note {i}:\n{la.text}",
                tags=["billing", tag],
                source=src,
                values=(renderings.normalise(la.text), tag.strip(), src),
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
