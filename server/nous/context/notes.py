"""Session notes without an LLM (design §10): from a chat turn's text, the sentences that say what
was done (`impl`), decided (`dec`), what blocks (`block`) and what comes next (`next`).

A sentence becomes a note when a cue says which of the four it is; questions, code, quoted
material and chit-chat never do. The cues are English phrasings users and assistants write in
chat ("we decided to…", "next step:", "blocked by…", "I've added…"); a sentence with two cues
takes the first in the order block, next, dec, impl (a blocker mentioned in passing matters
more than the work around it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nous.text.markdown import units

TAGS = ("impl", "dec", "block", "next")
MAX_CHARS = 240
"""A note is one sentence; a longer one is cut at a word boundary."""
MIN_WORDS = 4

_CUES: dict[str, re.Pattern[str]] = {
    "block": re.compile(
        r"\b(blocked (?:by|on)|blocker|stuck (?:on|with)|can(?:'|no)t (?:get|make|run|build)|"
        r"(?:is|are|keeps?) failing|fails? with|waiting (?:on|for) (?:the|a|an|review|approval)|"
        r"depends on .* (?:landing|merging|being))\b",
        re.I,
    ),
    "next": re.compile(
        r"(^(?:next|todo|to do|follow[- ]up|remaining|left to do)\b\s*[:\-–]|"
        r"\bnext (?:step|steps|up|time|session)\b|\b(?:still|also) (?:need|have) to\b|"
        r"\bwe (?:still )?need to\b|\bTODO\b|\bfollow[- ]up\b|\btomorrow\b|\blater we\b|"
        r"\bI(?:'ll| will) (?:then |next )?(?:add|write|fix|do|look|update|move|port|finish)\b)",
        re.I,
    ),
    "dec": re.compile(
        r"(^decision\s*[:\-–]|\b(?:we|I|the team) (?:decided|agreed|chose|settled on|went with)\b|"
        r"\blet'?s (?:go with|use|keep|stick with|drop|switch to)\b|\bwe(?:'ll| will) (?:go with|use|"
        r"keep|stick with|switch to)\b|\bgoing (?:forward|with)\b|\bdecided (?:to|that|on)\b|"
        r"\binstead of\b.*\bbecause\b)",
        re.I,
    ),
    "impl": re.compile(
        r"(^(?:done|implemented|fixed|added)\s*[:\-–]|\b(?:I|we)(?:'ve| have)? "
        r"(?:implemented|added|fixed|refactored|removed|renamed|moved|wrote|updated|migrated|merged|"
        r"shipped|landed)\b|\b(?:is|are|has been|have been) (?:now )?(?:implemented|fixed|done|merged|"
        r"in place)\b|\bnow passes\b|\ball tests pass\b)",
        re.I,
    ),
}
_ORDER = ("block", "next", "dec", "impl")
_CHATTER = re.compile(
    r"^(?:thanks|thank you|great|ok|okay|cool|sure|nice|perfect|hi|hello)\b", re.I
)


@dataclass(frozen=True)
class Note:
    tag: str
    text: str


def draw(text: str) -> list[Note]:
    """The notes one chat turn's text holds, in the order it says them, one per sentence."""
    out: list[Note] = []
    seen: set[str] = set()
    for unit in units(text):
        if unit.kind not in ("sentence", "item", "more"):
            continue  # headings, code and table rows are material, not statements
        sentence = " ".join(unit.text.split()).strip()
        tag = _classify(sentence)
        if tag is None and unit.kind == "item" and unit.lead and _cue(unit.lead):
            lead = unit.lead.rstrip(":").strip()  # "Next steps:" then "- add tests"
            tag = _classify(f"{lead}: {sentence}") and _cue(unit.lead)
            sentence = f"{lead}: {sentence}"
        if tag is None or sentence.lower() in seen:
            continue
        seen.add(sentence.lower())
        out.append(Note(tag, _cut(sentence)))
    return out


_LABEL = {
    "next": r"next(?: steps?| up)?|todo|to do|follow[- ]ups?|remaining|left to do",
    "dec": r"decision|decided",
    "impl": r"done|implemented",
    "block": r"blocker|blocked",
}


def content(note: Note) -> str:
    """The stored text of a note: its tag, then the sentence without a label that only says the
    tag again (`next: add the tests`, never `next: Next step: add the tests`)."""
    text = re.sub(rf"^(?:{_LABEL[note.tag]})\s*[:\-–]\s*", "", note.text, flags=re.I)
    return f"{note.tag}: {text or note.text}"


def _classify(sentence: str) -> str | None:
    if sentence.endswith("?") or len(sentence.split()) < MIN_WORDS or _CHATTER.match(sentence):
        return None
    if sentence.startswith((">", "`")):
        return None
    return _cue(sentence)


def _cue(text: str) -> str | None:
    return next((tag for tag in _ORDER if _CUES[tag].search(text)), None)


def _cut(sentence: str) -> str:
    if len(sentence) <= MAX_CHARS:
        return sentence
    return sentence[:MAX_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
