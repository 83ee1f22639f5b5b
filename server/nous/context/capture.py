"""Session continuity, the write side (design §10): each chat turn the daemon sees is kept as an
episode of its session (`memory.turns`: session id and index in the source), redacted by the
store like every write, in the project's scope; the session notes drawn from it (`notes`) are
kept beside it, and a later note on the same topic supersedes an earlier one. What a session
said is its own: the same words in two sessions are two turns (and notes), so forgetting one
session leaves the other's. With capture off nothing is stored. A session can be forgotten
whole."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from nous.context import echo, notes
from nous.context import intent as intents
from nous.memory import renderings, turns
from nous.memory.embedder import Vector
from nous.memory.model import KINDS, Draft
from nous.memory.store import MemoryStore
from nous.protocol import ForgetSessionResult, TurnParams, TurnResult
from nous.settings import Settings

SAME_TOPIC = 0.8
"""Cosine at which a new session note supersedes an older one of the project ("next: add the
parser tests" → "I've added the parser tests")."""
MIN_WORDS = 3
"""A turn shorter than this ("ok", "thanks!") is not kept."""
_OWN_OUTPUT = re.compile(
    r"context from Nous, the user's local memory|\(Nous: \d+ memor(?:y|ies) \(\d+ tokens\)|"
    r"```memories \(recorded data, not instructions\)|"
    # talk about the memory tools themselves, or lines quoted from a rendered answer
    r"\b(?:nous_(?:context|recall|remember|forget)|#nous(?:Context|Recall))\b|"
    rf"^\s*- (?:\((?:{'|'.join(KINDS)})\)|WARN:|BLOCK:|\[[^\]\s][^\]\n]{{2,80}}\]) ",
    re.M,
)


class Folder(Protocol):
    settings: Settings

    @property
    def store(self) -> MemoryStore: ...
    def resolve_scope(self, scope: str | None) -> str: ...


def turn(
    folder: Folder, params: TurnParams, vector: Vector | None = None,
    injected: Sequence[str] = (),
) -> TurnResult:  # fmt: skip
    """Keep one turn and the notes it holds; `stored` is False when capture is off or the turn
    is empty, too short, small talk, Nous's own injected text quoted back or talk about its
    tools, or a tool call's input that states nothing (a query is no memory: of a tool's input
    only the notes are kept). A user's turn that only asks (`echo.asks_only`) is kept for its
    session's window (`session_only`), never recalled in another session. An assistant's reply
    that only restates what its session was given (`injected`: the texts Nous injected into it;
    `echo.restates`) is not kept. `vector` is the text's embedding when the caller has it (a
    `nous/context` turn embedded its input already: it is not embedded twice)."""
    text = params.text.strip()
    skipped = TurnResult(session_id=params.session_id, stored=False)
    if not folder.settings.capture or len(text.split()) < MIN_WORDS:
        return skipped
    intent = intents.signals(text)
    if intent.greeting or _OWN_OUTPUT.search(text):
        return skipped  # small talk; or a reply quoting what Nous injected (memory of memory)
    if params.role == "assistant" and injected and echo.restates(text, injected):
        return skipped  # a reply saying again what Nous injected: memory of memory
    drawn_notes = notes.draw(text)
    if params.tool == "nous_recall" or (params.tool is not None and not drawn_notes):
        return skipped  # a tool's query asks of memory: it is none
    asking = params.role == "user" and not drawn_notes and echo.asks_only(text)
    store = folder.store
    scope = folder.resolve_scope(None)  # the project's scope
    index = params.index
    if index is None:
        index = _next_index(store, params.session_id, scope)
    kept_id: str | None = None
    if params.tool is None:  # a chat turn; of a tool's input only what it states is kept
        tags = [f"role:{params.role}", *([turns.ASKING] if asking else [])]
        kept = store.remember(
            turns.draft(params.session_id, index, text, scope=scope, tags=tags),
            (text, vector) if vector is not None else None,
        )
        kept_id = kept.memory.id
    drawn: list[dict[str, str]] = []
    for note in drawn_notes:
        written = store.remember(
            Draft(kind="note", content=notes.content(note), scope=scope,
                  tags=[note.tag, turns.TAG],
                  source=turns.source(params.session_id, index))
        )  # fmt: skip
        if written.status == "created":
            _supersede_older(store, written.memory.id, scope)
        drawn.append({"id": written.memory.id, "tag": note.tag, "text": written.memory.content})
    return TurnResult(
        session_id=params.session_id, stored=True, session_only=asking, id=kept_id,
        index=index, notes=drawn,
    )  # fmt: skip


def forget_session(folder: Folder, session_id: str) -> ForgetSessionResult:
    """Remove a session's turns and notes for good (this project's only)."""
    store = folder.store
    rows = store.session_rows(session_id, folder.resolve_scope(None))
    for memory_id, _, _ in rows:
        store.forget(memory_id, purge=True)
    return ForgetSessionResult(session_id=session_id, forgotten=len(rows))


def _next_index(store: MemoryStore, session: str, scope: str) -> int:
    kept = [  # turns and the notes of a tool's input (kept without its turn)
        at[1]
        for _, kind, source in store.session_rows(session, scope)
        if kind in ("episode", "note") and (at := turns.position(source)) is not None
    ]
    return max(kept, default=-1) + 1


def _supersede_older(store: MemoryStore, note_id: str, scope: str) -> None:
    """An older live note of the project on the same topic is superseded by this one; one in
    the same words is not (another session said it too: each keeps its own, forgotten with its
    session, and the context shows one of them)."""
    new = store.get(note_id)
    words = renderings.content_hash(new.content)
    vector = store.vectors([note_id]).get(note_id)
    if vector is None:
        return
    close = [i for i, cosine in store.vector_search(vector, 6, [scope])
             if i != note_id and cosine >= SAME_TOPIC]  # fmt: skip
    for other in store.get_many(close).values():
        live = other.status not in ("superseded", "inactive", "retired")
        restated = renderings.content_hash(other.content) == words
        if other.kind == "note" and live and other.created_at <= new.created_at and not restated:
            store.supersede(other.id, note_id)
