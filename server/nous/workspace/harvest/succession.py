"""What a decision record says about the records it replaces, read from its text.

Forward: "This RFC supersedes RFC 0599", "Replaces [RFC-2779](./2779_list_with_metakey.md)",
"This decision reverts [manually installing iOS 12 simulators](#ios-12-simulators)". Backward:
"We reverted this decision with [remove running unit tests on iOS 12 simulators](#…)", "This ADR
was superseded by ADR 5". Conservative on purpose: the verb opens the sentence or has the record
itself as its subject ("this RFC", "this decision", "we … this decision"), and a *record reference*
follows it at once — a number after RFC / ADR / decision, a Markdown link, or a quoted title.
"Removes the `range_read` API", "replaces the HTTP transport" and "RFC 3986 defines …" say
nothing about another record. Code blocks are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nous.text.markdown import outside_code

_NOUN = r"(?:rfc|adr|decision|proposal|record|document|design)"
_SUBJECT = rf"(?:this|the\s+present|the\s+current)\s+{_NOUN}"
_ADVERB = r"(?:(?:now|also|hereby|thereby|effectively|partially|partly|fully|formally)\s+)?"
_FORWARD_VERB = (
    r"(?:supersedes?|replaces?|reverses?|reverts?|removes?|deprecates?|undoes|undo|obsoletes?)"
)
_BACKWARD_VERB = r"(?:superseded|replaced|reversed|reverted|deprecated|undone|obsoleted)"
_EARLIER = r"(?:the\s+)?(?:(?:earlier|previous|older|original|prior)\s+)?"
_LINK = r"\[(?P<text>[^\]\n]{1,200})\]\(\s*<?(?P<href>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
_NUMBER = rf"{_NOUN}\s*[-#]?\s*(?P<number>\d{{1,5}})\b"
_TITLE = r"[\"“'‘](?P<title>[^\"”'’\n]{3,160})[\"”'’]"
_REF = rf"{_EARLIER}(?:(?:{_NOUN}\s+)?{_LINK}|{_NUMBER}|(?:{_NOUN}\s+)?{_TITLE})"
FORWARD = re.compile(rf"^(?:{_SUBJECT}\s+)?{_ADVERB}{_FORWARD_VERB}\s*:?\s*{_REF}", re.I)
BACKWARD = re.compile(
    rf"^(?:(?:{_SUBJECT})\s+(?:(?:is|was|has\s+been|had\s+been|got|gets)\s+)?{_ADVERB}"
    rf"|we\s+(?:have\s+|had\s+)?{_ADVERB}(?=\w+\s+this\s+{_NOUN})"
    rf"|(?={_BACKWARD_VERB}\s+by\b))"
    rf"{_BACKWARD_VERB}\s+(?:this\s+{_NOUN}\s+)?(?:by|with|in)\s*:?\s*{_REF}",
    re.I,
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\[*\"“A-Z])")
_EMPHASIS = re.compile(r"\*{1,3}|(?<!\w)_{1,3}|_{1,3}(?!\w)")
_STATUS_LABEL = re.compile(r"^(?:status|note)\s*:\s*", re.I)


@dataclass(frozen=True)
class Ref:
    """A reference to another record as written: a link (its target and text), a number or a
    quoted title. The harvester that found it turns it into a number or an anchor."""

    href: str = ""
    text: str = ""
    number: str = ""
    title: str = ""


@dataclass
class Claims:
    supersedes: list[Ref] = field(default_factory=list)
    """Records this one says it replaces."""
    superseded_by: list[Ref] = field(default_factory=list)
    """Records this one says replace it."""


def sentences(text: str) -> list[str]:
    """The prose of `text` as sentences: code blocks left out, a paragraph's wrapped lines joined,
    every list item on its own, emphasis marks and a leading `Status:` label dropped."""
    units: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            units.append(" ".join(current))
            current.clear()

    for _, line, after_code in outside_code(text.splitlines()):
        if after_code:
            flush()
        if not line.strip() or line.lstrip().startswith("#"):
            flush()
            continue
        if _BULLET.match(line):
            flush()
            line = _BULLET.sub("", line, count=1)
        current.append(line.strip())
    flush()
    out = []
    for unit in units:
        for sentence in _SENTENCE.split(_EMPHASIS.sub("", unit)):
            out.append(_STATUS_LABEL.sub("", sentence.strip()))
    return [s for s in out if s]


def _ref(match: re.Match[str]) -> Ref:
    found = match.groupdict()
    return Ref(
        href=found.get("href") or "",
        text=found.get("text") or "",
        number=found.get("number") or "",
        title=found.get("title") or "",
    )


def claims(text: str) -> Claims:
    """What `text` says it replaces and what it says replaced it."""
    out = Claims()
    for sentence in sentences(text):
        forward = FORWARD.match(sentence)
        if forward:
            out.supersedes.append(_ref(forward))
            continue
        backward = BACKWARD.match(sentence)
        if backward:
            out.superseded_by.append(_ref(backward))
    return out


_NUMBERED = re.compile(rf"\b{_NUMBER}", re.I)


def number_in(text: str) -> str | None:
    """The record number a link text or title names ("RFC-2779: List with metakey" → "2779")."""
    found = _NUMBERED.search(text)
    return str(int(found.group("number"))) if found else None
