"""The three renderings of a memory, made at write time by templates per kind (no LLM).

`content` is the full text with whitespace normalised; `summary` is at most ~100 tokens, led by
the kind's label; `micro` is one line of at most ~20 tokens for ranked lists.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

from nous.text import markdown
from nous.text.tokens import TokenCounter

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


def normalise(text: str) -> str:
    """NFC, trimmed lines, runs of blank lines and spaces collapsed."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def content_hash(text: str, session: str | None = None) -> str:
    """Hash of the text with case, punctuation runs and whitespace folded away; with `session`
    (what a chat session said: `turns.session_of` its source), of the text within that session,
    so the same words said in two sessions are two memories, each forgotten with its session."""
    folded = re.sub(r"[\W_]+", " ", normalise(text).casefold()).strip()
    if session is not None:
        folded += "\x00" + session
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()


def label(kind: str) -> str:
    return _LABELS.get(kind, kind.capitalize())


def fit(text: str, limit: int, counter: TokenCounter) -> str:
    """Whole sentences while they fit (abbreviations, list numbers and versions are not sentence
    ends); else whole words with an ellipsis; a cut inside a word is the last resort."""
    if counter.count(text) <= limit:
        return text
    kept = ""
    for sentence in markdown.sentences(text):
        candidate = f"{kept} {sentence}".strip()
        if counter.count(candidate) > limit:
            break
        kept = candidate
    if kept and counter.count(kept) >= limit // 2:
        return kept
    words = text.split()
    out = ""
    for word in words:
        candidate = f"{out} {word}".strip()
        if counter.count(candidate + "…") > limit:
            break
        out = candidate
    if out:
        return out.rstrip(" ,;:-") + "…"
    cut = counter.truncate(text, max(1, limit - 1))
    return cut + "…"


@functools.lru_cache(maxsize=256)  # a write renders its summary and its micro from the same text
def flat(content: str) -> tuple[str, str]:
    """(heading path, body as one line) of a record's content: a harvested record starts with a
    `# A › B` line; lists read "lead-in: item; item", code stays in backticks."""
    heading = ""
    if content.startswith("# "):
        first, _, content = content.partition("\n")
        heading = first[2:].strip()
    if "\n" not in content.strip() and not content.lstrip().startswith(("- ", "```", "|")):
        return heading, " ".join(content.split())
    parts: list[str] = []
    last_block, last_lead, last_text = -1, None, None
    for unit in markdown.units(content):
        if unit.kind == "heading":
            continue
        piece = unit.text.rstrip(" ;") if unit.kind == "item" else unit.text  # "a;" "b;": no ";;"
        said = unit.lead == last_text
        last_text = unit.text
        if unit.lead and unit.kind != "sentence" and unit.lead != last_lead and not said:
            ends = unit.lead.endswith(markdown.ENDS)
            piece = f"{unit.lead if ends else unit.lead + ':'} {piece}"
        if unit.lead and unit.kind != "sentence":
            last_lead = unit.lead  # said once, by the unit itself or by the text just before
        same = unit.block == last_block
        joiner = "; " if unit.kind in ("item", "row") and same else " "  # `more`: one item
        parts.append((joiner if parts else "") + piece)
        last_block = unit.block
    return heading, "".join(parts)


def _tail(kind: str, outcome: str | None, confidence: float) -> str:
    # A bare confidence such as "[0.90]" tells a model nothing it can act on: only the outcome.
    return f" [outcome: {outcome}]" if outcome else ""


def summary(
    kind: str, content: str, outcome: str | None, confidence: float, counter: TokenCounter
) -> str:
    """`Label: text` within SUMMARY_TOKENS, outcome and confidence appended for decisions."""
    tail = _tail(kind, outcome, confidence)
    heading, body = flat(content)
    head = f"{label(kind)}: " + (f"{heading} — " if heading else "")
    room = SUMMARY_TOKENS - counter.count(head + tail)
    if room < 20:  # a very long heading path: keep its last part
        head = f"{label(kind)}: {heading.rsplit(' › ', 1)[-1]} — "
        room = SUMMARY_TOKENS - counter.count(head + tail)
    return f"{head}{fit(body, room, counter)}{tail}"


def micro(
    kind: str, content: str, outcome: str | None, confidence: float, counter: TokenCounter
) -> str:
    """The first line (first sentence) within MICRO_TOKENS, one line, with the outcome tag."""
    tail = f" [{outcome}]" if outcome else ""
    heading, body = flat(content)
    first = next(iter(markdown.sentences(body)), body)
    if heading:
        first = f"{heading.rsplit(' › ', 1)[-1]}: {first}"
    room = MICRO_TOKENS - counter.count(tail)
    return fit(first, room, counter) + tail
