"""One request's state: what is asked (`Request`), from where (`View`), and the frozen `Query`
every step of the pipeline reads instead of long argument lists: the input, its vector and
words, the scopes, the frame, the intent, the plan, the profile and the mode, worked out once
(`build`)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from nous.context import frame as frames
from nous.context import intent as intents
from nous.context import plan as plans
from nous.context import profiles, relevance
from nous.context.config import Config, Profile
from nous.memory import scope as scopes
from nous.memory.embedder import Vector
from nous.memory.interface import Store
from nous.protocol import Message, SessionUse


@dataclass
class View:
    """Where the request comes from: project, languages, task, active file, allowed scopes."""

    project: str
    project_scope: str
    languages: list[str]
    task: str | None = None
    active_file: str | None = None

    @property
    def scopes(self) -> list[str]:
        return scopes.readable(self.project_scope, self.languages)


@dataclass
class Request:
    input: str
    mode: str = "turn"  # startup | turn | recall
    budget: int = 0
    frame: str | None = None
    profile: str | None = None
    conversation: Sequence[Message] = ()
    instructions: Sequence[str] = ()
    kinds: list[str] | None = None
    session: SessionUse | None = None
    cut_note: str | None = None
    vector: Vector | None = None
    """The embedding of `input.strip()`, when the caller already computed it (once a request)."""
    session_id: str | None = None
    """The chat session asking: its own kept turns and notes are in its conversation already."""
    injected: frozenset[str] = frozenset()
    """What this chat session was already given: a censor is not repeated (design §2.7)."""


@dataclass(frozen=True)
class Query:
    """A request as the pipeline reads it. `vector`, `words` and the word queries are set only
    when the request retrieves (`retrieves`)."""

    request: Request
    view: View
    config: Config
    frame: str
    intent: intents.Intent
    plan: plans.Plan
    profile_name: str
    profile: Profile
    vector: Vector | None = None
    """The input's embedding (of the view's names for an empty input)."""
    words: str = ""
    """The text searched: the input with its expansions ("PR" finds "pull request")."""
    terms: relevance.Query | None = None
    """The searched words with their rarity in the store: what relevance is measured on."""
    subject: relevance.Query | None = None
    """A proposal read as its subject (`intent.alternative`): its words without the
    alternative's, weighing less."""

    @property
    def input(self) -> str:
        return self.request.input

    @property
    def mode(self) -> str:
        return self.request.mode

    @property
    def budget(self) -> int:
        """The tokens granted (never below 0)."""
        return max(0, self.request.budget)

    @property
    def scopes(self) -> list[str]:
        return self.view.scopes

    @property
    def small_talk(self) -> bool:
        return self.intent.greeting

    @property
    def retrieves(self) -> bool:
        """Whether anything is searched for: a plan with kinds, a budget, not small talk."""
        return self.plan.retrieves and self.budget > 0 and not self.small_talk

    @functools.cached_property
    def asked(self) -> frozenset[str]:
        """The kinds the input asks for (a decision for "should we…?")."""
        return relevance.asked_kinds(self.intent.dominant_hint, self.intent.permission)

    @property
    def history(self) -> bool:
        """A question about history ("what changed recently?", "last time")."""
        return self.intent.temporal_recency > 0 or "episode" in self.intent.hints


def frame_of(request: Request) -> str:
    """The request's frame: the one it names, else chosen by pattern (a recall is a question)."""
    if request.mode == "recall" and not request.frame:
        return "question"
    return frames.select(request.input, request.frame)


def of(config: Config, view: View, request: Request) -> Query:
    """The request's `Query` before anything is searched (no vector, no words). The view's task
    is the input's when the view has none."""
    intent = intents.signals(request.input)
    if view.task is None:
        view.task = intent.task
    frame = frame_of(request)
    name, profile = profiles.get(config, request.profile)
    plan = plans.build(intent, frame, config, request.kinds)
    return Query(request, view, config, frame, intent, plan, name, profile)


def build(store: Store, config: Config, view: View, request: Request) -> Query:
    """The request's `Query`, with its vector (embedded unless the request brings it) and its
    words and their rarity in `store` when it retrieves."""
    query = of(config, view, request)
    if not query.retrieves:
        return query
    text = request.input.strip() or " ".join(
        [view.project, *view.languages, view.task or "", view.active_file or ""]
    )
    vector = request.vector if request.vector is not None else store.embed(text)
    words = relevance.expand(text)  # "PR" finds "pull request" and back
    frequencies, documents = store.document_frequencies(relevance.query_words(words))
    half = config.gate.rarity_store_half
    terms = relevance.query(words, frequencies, documents, half)
    alternative = query.intent.alternative
    subject = (
        relevance.query(words, frequencies, documents, half, alternative) if alternative else None
    )
    return replace(query, vector=vector, words=words, terms=terms, subject=subject)
