"""The BM25 baseline of `nous eval repos`: a repository's Markdown files split into sections at
their headings, Okapi BM25 over those sections (k1 1.2, b 0.75, a lowercase word tokenizer and a
small English stop-word list), and the ranking packed best-first into a token budget.

Written out here on purpose: it is the plain "BM25 over the docs' sections" an engine has to beat
(issue 12), not a retrieval component to tune."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nous.text.tokens import TokenCounter
from nous.text.words import split

STOP_WORDS = frozenset(
    "a an and are as at be been but by can could do does did for from had has have how i if in "
    "into is it its just me my no not of on or our should so than that the their them then there "
    "these they this those to was we were what when where which who whom why will with would you "
    "your".split()
)
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    path: str
    """The file, relative to the repository root."""
    text: str
    """The section's heading line and body, as in the file."""


@dataclass(frozen=True)
class Packed:
    path: str
    text: str
    tokens: int
    cut: bool = False


def words(text: str) -> list[str]:
    return [w for w in split(text) if w not in STOP_WORDS]


def split_sections(path: str, text: str) -> list[Section]:
    """Sections at ATX headings (`#` … `######`); a `#` inside a fenced code block is code."""
    sections: list[Section] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        mark = _FENCE.match(line)
        if fence is None and mark:
            fence = mark.group(1)
        elif fence is not None:
            stripped = line.strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = None
        elif _HEADING.match(line):
            if any(part.strip() for part in current):
                sections.append(Section(path, "\n".join(current).strip()))
            current = []
        current.append(line)
    if any(part.strip() for part in current):
        sections.append(Section(path, "\n".join(current).strip()))
    return sections


def markdown_sections(root: Path) -> list[Section]:
    """The sections of every Markdown file under `root` (the repository copy), by path."""
    out: list[Section] = []
    for file in sorted(p for p in root.rglob("*") if p.suffix.lower() in (".md", ".markdown")):
        if file.is_file():
            rel = file.relative_to(root).as_posix()
            out += split_sections(rel, file.read_text(encoding="utf-8", errors="replace"))
    return out


class BM25:
    """Okapi BM25 over tokenised documents, idf = ln(1 + (N − df + 0.5) / (df + 0.5))."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = [Counter(doc) for doc in docs]
        self.lengths = [len(doc) for doc in docs]
        self.avgdl = (sum(self.lengths) / len(docs)) if docs else 1.0
        df = Counter(term for tf in self.tf for term in tf)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        terms = set(query) & self.idf.keys()
        out = []
        for tf, length in zip(self.tf, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / (self.avgdl or 1.0))
            out.append(
                sum(self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if tf[t])
            )
        return out

    def rank(self, query: Sequence[str]) -> list[int]:
        """Indices of the documents that match at all, best first (ties in corpus order)."""
        scores = self.scores(query)
        return sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])


def pack(ranked: Sequence[Section], budget: int, counter: TokenCounter) -> list[Packed]:
    """Whole sections best-first while they fit; the first one that does not fit is cut to the
    remaining budget (at a token boundary) and packing stops."""
    out: list[Packed] = []
    left = budget
    for section in ranked:
        if left <= 0:
            break
        cost = counter.count(section.text)
        if cost <= left:
            out.append(Packed(section.path, section.text, cost))
            left -= cost
            continue
        text = counter.truncate(section.text, left)
        cost = counter.count(text)
        while text and cost > left:  # a decoded prefix can re-encode longer
            text = text[:-1]
            cost = counter.count(text)
        if text.strip():
            out.append(Packed(section.path, text, cost, cut=True))
        break
    return out
