"""What a chat turn holds for other sessions (design §10): a turn that only asks, a reply that only
says again what Nous injected, and a memory that only repeats the question being asked, answer
nothing.

`asks_only` decides at capture time (the turn is then kept for its own session's window,
tagged `turns.ASKING`); `restates` too (the reply is not kept: memory of memory); `drop` is the
pipeline's filter at answer time: another session's asking turn, and a captured memory that says
the question again, are no candidates."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from nous.context import relevance
from nous.context.items import Work
from nous.context.score import Scored
from nous.memory import renderings, turns
from nous.memory.model import Memory

MAX_FRAGMENT_WORDS = 8
"""A line this short without a full stop and without a subject ("postgres orders storage") is
a search, not a statement."""
RESTATED_NEW_WORDS = 4
RESTATED_NEW_SHARE = 0.35
"""A reply whose content words not found in what its session was given are at most
`RESTATED_NEW_WORDS`, or at most this share of its words (and fewer than those it shares with
them), restates the injected memories: a lead-in such as "the recall found this in the
project's records" is four words."""

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_ASKS = re.compile(
    r"^\s*(?:(?:what|where|when|why|how|who|which|whose|can|could|should|would|will|is|are|am|"
    r"do|does|did|has|have|was|were|may|might|shall)\b|(?:please\s+)?(?:use|show|find|tell|"
    r"explain|list|give|search|recall|look\s+up|look|check|help|describe|summari[sz]e|remind|"
    r"fetch|get|bring|let\s+me\s+know|walk\s+me|what's|where's|how's)\b)",
    re.I,
)
_SUBJECT = re.compile(
    r"\b(?:i|we|you|it|they|he|she|this|that|these|those|our|my|there)\b|\b\w+(?:'s|n't)\b", re.I
)


def asks_only(text: str) -> bool:
    """Every sentence of `text` asks: a question, a request ("use recall: …", "show me …"), or
    a short search-box fragment. Such a turn states no fact, decision or next step (the caller
    checked it draws no session note)."""
    sentences = [s.strip() for s in _SENTENCE.findall(text) if re.search(r"\w", s)]
    if not sentences:
        return False
    return all(_asks(s) for s in sentences)


def _asks(sentence: str) -> bool:
    if sentence.endswith("?") or _ASKS.match(sentence):
        return True
    if sentence.endswith((".", "!")):
        return False
    words = sentence.split()
    return len(words) <= MAX_FRAGMENT_WORDS and not _SUBJECT.search(sentence)


def restates(reply: str, injected: Iterable[str]) -> bool:
    """`reply` says nothing but what was injected into its session (`injected`: the injected
    memories' texts): its content words all come from there, but for at most
    `RESTATED_NEW_WORDS` or `RESTATED_NEW_SHARE` of them ("According to the project's records,
    all payments go through the PaymentGateway adapter." after that decision was injected). Kept,
    it would come back as a memory of the memory it quotes."""
    said = relevance.stems(reply)
    if not said:
        return False
    given: set[str] = set()
    for text in injected:
        given |= relevance.stems(text)
    new = len(said - given)
    shared = len(said) - new  # a short reply of its own ("Done, I've added the retry wrapper.")
    return shared > new and new <= max(RESTATED_NEW_WORDS, RESTATED_NEW_SHARE * len(said))


@functools.lru_cache(maxsize=64)
def _folded(question: str) -> str:
    """The question's `content_hash`, once per question (every candidate is compared with it)."""
    return renderings.content_hash(question)


def repeats(question: str, memory: Memory) -> bool:
    """`memory` says `question` again: the same normalised text, or a captured turn that only
    asks, holding every content word of the question and at most `relevance.ECHO_WORDS` more (a
    statement that holds the question's words is an answer, however short)."""
    # the same text folded (case, punctuation, spaces): only a text of about the question's
    # length can be; hashing every candidate's whole content cost a turn ~6 ms
    near = len(memory.content) <= 2 * len(question) + 40
    if near and renderings.content_hash(memory.content) == _folded(question):
        return True
    if turns.session_of(memory.source or "") is None or not asks_only(memory.content):
        return False  # harvested, remembered on purpose, or a statement: an answer
    return relevance.says_again(relevance.stems(question), memory.content)


def excluded(question: str, session_id: str | None, memory: Memory) -> tuple[str, str] | None:
    """(reason, detail) when `memory` is no answer to `question` asked in `session_id`."""
    if turns.ASKING in memory.tags and turns.session_of(memory.source or "") != session_id:
        return "scope", "a question asked in another session"
    if question.strip() and repeats(question, memory):
        return "duplicate-of-conversation", "repeats the question"
    return None


def drop(
    question: str, session_id: str | None, candidates: list[Scored], work: Work
) -> list[Scored]:
    """`candidates` without the echoes of `question` (each dropped, with its reason)."""
    kept: list[Scored] = []
    for c in candidates:
        why = excluded(question, session_id, c.memory)
        if why is None:
            kept.append(c)
        else:
            work.drop(c, *why)
    return kept
