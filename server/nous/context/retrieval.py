"""What a query finds and how each find scores: the hybrid search (with a proposal's subject),
the memories that go in whatever the input (pinned and blocking, the standing rules, the last
sessions' notes), then one read of the candidates (`Store.candidates`: records, vectors and
usage) and their composite scores (design §2.5)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from nous.context import profiles, relevance, search
from nous.context.query import Query
from nous.context.score import Scope, Scored, Weighing, composite
from nous.memory import usage
from nous.memory.embedder import Vector
from nous.memory.interface import Store
from nous.memory.model import Memory
from nous.protocol import keeps_turns

STANDING_CANDIDATES = 24
"""Standing rules scored per request (the nearest to the input): a censors layer holds a few."""


@dataclass
class Found:
    """The candidates of a query and the signals they were found by."""

    semantic: dict[str, float] = field(default_factory=dict)
    """{id: cosine} of every candidate (0.0 for those in whatever the input)."""
    lexical: dict[str, float] = field(default_factory=dict)
    """{id: BM25 / the best BM25} of the searched candidates."""
    turns: dict[str, float] = field(default_factory=dict)
    """{chat turn id: its relevance windowed over its session neighbours}."""
    subject_lexical: dict[str, float] = field(default_factory=dict)
    """{id: relative BM25} of the search of a proposal's subject (`Query.subject`)."""
    standing: frozenset[str] = frozenset()
    """The standing rules in the censors layer's running (design §2.7)."""
    available: int = 0
    """How many the search found."""


def gather(store: Store, query: Query) -> Found:
    """Every candidate of `query` (none for a zero budget)."""
    found = Found()
    req, total = query.request, query.budget
    if query.retrieves:
        # the asking session's own turns and notes are in its conversation: not memory to it
        own = (
            frozenset(i for i, _, _ in store.session_rows(req.session_id, query.view.project_scope))
            if keeps_turns(req.session_id)
            else frozenset()
        )
        found.semantic, found.lexical, found.turns = _semantic(store, query, query.words, own)
        if query.subject is not None:
            # A proposal ("move the memory store to Postgres?") is also read as its subject:
            # the decision that chose otherwise may never name the alternative. Its lexical
            # search leaves the alternative out and its words weigh less; a memory is as
            # relevant as the better reading finds it.
            subject = relevance.without(query.words, query.intent.alternative)
            cosine, found.subject_lexical, _ = _semantic(store, query, subject, own)
            for memory_id, value in cosine.items():
                found.semantic.setdefault(memory_id, value)
        found.available = len(found.semantic)
    semantic = found.semantic
    if query.mode != "recall" and total > 0:
        for memory_id in store.always_on(query.scopes, 40):
            semantic.setdefault(memory_id, 0.0)
    # The censors layer (design §2.7): the project's active constraints go in whatever the input
    # (small talk aside), ordered by relevance within the layer's cap; a chat start carries every
    # instruction rule so. Recall carries the most relevant few when the question asks whether
    # it may do a thing; such a question (in a turn too) draws them from every instruction rule,
    # not the constraints alone: "can I start coding the fix straight away?" is answered by a
    # convention ("agree on the direction in the issue first").
    startup = query.mode == "startup"
    if total > 0 and not query.small_talk and (query.mode != "recall" or query.intent.permission):
        rules = store.standing_rules(query.view.project_scope, startup or query.intent.permission)
        limit = STANDING_CANDIDATES * (2 if startup else 1)
        found.standing = _nearest(store, rules, query.vector, limit)
        for memory_id in found.standing:
            semantic.setdefault(memory_id, 0.0)
    if startup and total > 0:  # the session slot: the last sessions' notes
        for memory_id in store.recent_notes(query.view.project_scope):
            semantic.setdefault(memory_id, 0.0)
    return found


def _semantic(
    store: Store, query: Query, words: str, exclude: frozenset[str]
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """({id: cosine}, {id: relative BM25}, {chat turn id: windowed blend}) of the candidates."""
    assert query.vector is not None  # a query that retrieves has one
    sc = query.config.scoring
    found = search.hybrid(store, words, query.vector, query.scopes, sc.candidates, exclude)
    window = search.Window(
        sc.window_near, sc.window_far, sc.window_widen, sc.window_answer, sc.window_asking
    )
    turns = search.windowed(
        store, found, query.vector, query.scopes, sc.semantic_cosine_share, window
    )
    return found.cosine, found.lexical, turns


def _nearest(store: Store, ids: list[str], vector: Vector | None, limit: int) -> frozenset[str]:
    """The `limit` of `ids` nearest to the query (the first `limit` when there is none)."""
    if len(ids) <= limit or vector is None:
        return frozenset(ids[:limit])
    vectors = store.vectors(ids)
    ranked = sorted(ids, key=lambda i: -float(vectors[i] @ vector) if i in vectors else 1.0)
    return frozenset(ranked[:limit])


def apart(query: Query, memory: Memory) -> bool:
    """Conversation memories of a kind calibrated apart (LoCoMo's turns); a commit or a
    harvested file's record is gated like any document."""
    source = memory.source or ""
    return memory.kind in query.config.gate.kinds and not source.startswith(("git:", "file:"))


def rank(store: Store, query: Query, found: Found) -> tuple[list[Scored], dict[str, Vector]]:
    """The candidates scored, best first, and the vectors read with them."""
    config, view, profile = query.config, query.view, query.profile
    read = store.candidates(list(found.semantic), config.scoring.usage_half_life_days,
                            vectors=query.vector is not None)  # fmt: skip
    best_cosine = max(found.semantic.values(), default=0.0)
    active = (view.active_file or "").removeprefix("file://")
    weights = profiles.tier_weights(profile, view.task)
    weighing = Weighing(
        config, query.frame, Scope(view.project_scope, tuple(view.languages)), time.time(),
        query.plan.recency_weight,
    )  # fmt: skip
    scored = []
    for memory_id, memory in read.records.items():
        extra = profiles.tier_factor(weights, memory.kind, memory.scope)
        if memory.kind in profile.preferred_kinds:
            extra *= config.scoring.preferred_kind_boost
        subtree = next((t[8:] for t in memory.tags if t.startswith("subtree:")), None)
        if subtree and active and f"/{subtree}/" in f"/{active}":
            extra *= config.scoring.preferred_kind_boost  # a nested instruction file's subtree
        vec = read.vectors.get(memory_id)
        cosine = float(vec @ query.vector) if vec is not None and query.vector is not None else 0.0
        rel, coverage = _relevance(query, found, memory, cosine, best_cosine)
        # The semantic term is the query relevance the gate admits on: the gate model's
        # probability that this memory holds the answer.
        semantic_term = rel
        if apart(query, memory):  # calibrated apart: the search's blend, tuned on
            share = config.scoring.semantic_cosine_share  # LoCoMo's development conversations
            lexical_score = found.lexical.get(memory_id, 0.0)
            semantic_term = share * max(0.0, cosine) + (1 - share) * lexical_score
            semantic_term = found.turns.get(memory_id, semantic_term)  # with its neighbours
            # … and gated on it: the gate model is fitted on documents, and its probabilities
            # for a chat turn are on no scale its LoCoMo floor (`gate.kinds`) was chosen on
            rel = semantic_term
        item = composite(weighing, memory, semantic_term, read.usage.get(memory_id, usage.NEUTRAL),
                         extra, memory.kind in query.asked)  # fmt: skip
        item.terms["relevance"] = round(rel, 4)
        item.terms["coverage"] = round(coverage, 4)
        scored.append(item)
    scored.sort(key=lambda s: -s.score)
    return scored, read.vectors


def _relevance(
    query: Query, found: Found, memory: Memory, cosine: float, best_cosine: float
) -> tuple[float, float]:
    """(the gate model's probability that `memory` answers, its coverage of the query's words),
    by the better of the query's readings (0.0, 0.0 when nothing was searched)."""
    if query.terms is None:
        return 0.0, 0.0
    model, asked = query.config.gate.model, memory.kind in query.asked
    values = relevance.features(query.terms, memory.content, cosine,
                                found.lexical.get(memory.id, 0.0), best_cosine, asked)  # fmt: skip
    rel, coverage = relevance.probability(values, model), values[1]
    if query.subject is not None:  # a proposal read as its subject (`intent.alternative`)
        values = relevance.features(query.subject, memory.content, cosine,
                                    found.subject_lexical.get(memory.id, 0.0), best_cosine,
                                    asked)  # fmt: skip
        if (p := relevance.probability(values, model)) > rel:
            rel, coverage = p, values[1]
    return rel, coverage
