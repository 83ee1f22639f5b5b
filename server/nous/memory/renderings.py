"""The three renderings of a memory, made at write time by templates per kind (no LLM).

`content` is the full text with whitespace normalised; `summary` is at most ~100 tokens, led by
the kind's label; `micro` is one line of at most ~20 tokens for ranked lists.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from nous.memory.tokens import TokenCounter

SUMMARY_TOKENS = 100
MICRO_TOKENS = 20
_LABELS = {
    "decision": "Decision",
    "fact": "Fact",
    "procedure": "Procedure",
    "episode": "Episode",
    "constraint": "Constraint",
    "preference": "Preference",
    "correction": "Correction",
    "convention": "Convention",
    "note": "Note",
}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def normalise(text: str) -> str:
    """NFC, trimmed lines, runs of blank lines and spaces collapsed."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def content_hash(text: str) -> str:
    """Hash of the text with case, punctuation runs and whitespace folded away."""
    folded = re.sub(r"[\W_]+", " ", normalise(text).casefold()).strip()
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()


def label(kind: str) -> str:
    return _LABELS.get(kind, kind.capitalize())


def _fit(text: str, limit: int, counter: TokenCounter) -> str:
    """Whole sentences while they fit, else the text cut at a word boundary with an ellipsis."""
    if counter.count(text) <= limit:
        return text
    kept = ""
    for sentence in _SENTENCE_END.split(text):
        candidate = f"{kept} {sentence}".strip()
        if counter.count(candidate) > limit:
            break
        kept = candidate
    if kept:
        return kept
    cut = counter.truncate(text, max(1, limit - 1))
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "…"


def _tail(kind: str, outcome: str | None, confidence: float) -> str:
    parts = []
    if outcome:
        parts.append(outcome)
    if kind in {"decision", "procedure"} or confidence < 1.0:
        parts.append(f"{confidence:.2f}")
    return f" [{', '.join(parts)}]" if parts else ""


def summary(
    kind: str, content: str, outcome: str | None, confidence: float, counter: TokenCounter
) -> str:
    """`Label: text` within SUMMARY_TOKENS, outcome and confidence appended for decisions."""
    tail = _tail(kind, outcome, confidence)
    head = f"{label(kind)}: "
    room = SUMMARY_TOKENS - counter.count(head + tail)
    body = _fit(" ".join(content.split()), room, counter)
    return f"{head}{body}{tail}"


def micro(
    kind: str, content: str, outcome: str | None, confidence: float, counter: TokenCounter
) -> str:
    """The first line (first sentence) within MICRO_TOKENS, one line, with the outcome tag."""
    tail = f" [{outcome}]" if outcome else ""
    first = content.split("\n", 1)[0]
    first = _SENTENCE_END.split(first, 1)[0]
    room = MICRO_TOKENS - counter.count(tail)
    return _fit(" ".join(first.split()), room, counter) + tail
