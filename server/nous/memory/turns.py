"""Chat turns as episodes (design §10): a turn's session and its index in the session live in its
source, `chat:<session>#<index>`, so retrieval can score a turn together with its neighbours
(evidence in a conversation clusters) and a session can be forgotten whole. What a session said
is its own: the same words said in another session are another memory (`session_of`)."""

from __future__ import annotations

from nous.memory.model import Draft, Memory

PREFIX = "chat:"
TAG = "chat"
ASKING = "asking"
"""Tag of a turn that only asks: kept for its session's window, never recalled in another."""


def source(session: str, index: int) -> str:
    """The source of turn `index` of `session` (`#` cannot occur in a session id)."""
    if not session or "#" in session:
        raise ValueError(f"a session id is non-empty and has no '#': {session!r}")
    return f"{PREFIX}{session}#{index}"


def position(source_: str) -> tuple[str, int] | None:
    """(session, index) of a chat turn's source, None for any other source."""
    if not source_.startswith(PREFIX):
        return None
    session, sep, index = source_[len(PREFIX) :].rpartition("#")
    if not sep or not session or not index.lstrip("-").isdigit():
        return None
    return session, int(index)


def session_of(source_: str) -> str | None:
    """The chat session a source names (a turn's, or a note drawn from it), None for any other
    source: what a session said is its own, deduplicated within the session only."""
    at = position(source_)
    return None if at is None else at[0]


def asks(content: str) -> bool:
    """The turn ends by asking: the last of its sentence marks (. ! ?) is a question mark (a
    trailing note such as a date in brackets does not count). It hands the word to the other
    speaker: the answer is in the next turn more often than in this one (retrieval scores it so,
    `search.Window`)."""
    last = content.rfind("?")
    return last >= 0 and last > content.rfind(".") and last > content.rfind("!")


def is_turn(memory: Memory) -> bool:
    """A kept chat turn (not a note drawn from one, not a harvested or remembered memory)."""
    return memory.kind == "episode" and position(memory.source or "") is not None


def draft(
    session: str, index: int, content: str, scope: str | None = None, tags: list[str] | None = None
) -> Draft:
    """The episode a chat turn is remembered as (the capture path: every writer of turns uses
    it, the LoCoMo harness included)."""
    return Draft(
        kind="episode", content=content, scope=scope, source=source(session, index),
        tags=[TAG, *(tags or [])],
    )  # fmt: skip
