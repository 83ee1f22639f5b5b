"""The gate (design §2.5, §2.6): which scored candidates are admitted. A candidate is admitted on
its relevance over the mode's floor, or by being pinned, blocking or a standing rule (in by the
censors layer alone); then the profile, lifecycle, plan, scope, secrets and duplicates (of the
conversation, the editor's instruction files and what was admitted before it) have their say.
Every drop goes through `Work` with a reason."""

from __future__ import annotations

import numpy as np

from nous.context import dedup, echo, items
from nous.context.config import Profile
from nous.context.query import Query
from nous.context.retrieval import apart
from nous.context.score import Scored
from nous.memory import lifecycle
from nous.memory import turns as chat_turns
from nous.memory.embedder import Vector
from nous.memory.interface import Store
from nous.memory.model import Memory
from nous.text import secrets


def bypasses(memory: Memory, mode: str = "turn") -> bool:
    """Pinned and blocking memories go in whatever the input; at startup so do the session
    notes (design §3's 800-token slot: where the last session ended, whatever is asked first)."""
    session_note = mode == "startup" and memory.kind == "note"
    return memory.pinned or memory.status == "escalated" or session_note


def admit(
    store: Store, query: Query, candidates: list[Scored], work: items.Work,
    vectors: dict[str, Vector] | None = None, standing: frozenset[str] = frozenset(),
) -> list[Scored]:  # fmt: skip
    """The admitted `candidates`, the most important and most recent first (`preserve`).
    `vectors`: those read with the candidates (the rest are read here); `standing`: the
    standing rules among them (`retrieval.Found.standing`)."""
    config, req, profile, plan = query.config, query.request, query.profile, query.plan
    threshold = getattr(config.thresholds, req.mode)
    window = config.frames.windows.get(query.frame, 5)
    messages = [m.content for m in list(req.conversation)[-window:] if m.content.strip()]
    message_vecs = store.embed_many(messages) if messages else None
    per_kind: dict[str, int] = {}
    slotted: set[str] = set()  # documents that hold a kind slot: their further sections merge in
    # On-demand recall is paid for by its own budget: the per-kind limits grow with it.
    scaled = 0
    if req.mode == "recall" and req.budget:
        scaled = -(-req.budget * config.plan.recall_items_per_1k_tokens // 1000)

    def kind_limit(kind: str) -> int:
        return max(plan.limits[kind], scaled)

    kept: list[Scored] = []
    kept_vecs: list[np.ndarray] = []
    vec_owners: list[Scored] = []  # the kept memory of each of kept_vecs (not all have one)
    stacked: np.ndarray | None = None  # kept_vecs as one matrix
    candidates = _chat_turns_out(query, candidates, work)
    candidates = echo.drop(req.input, req.session_id, candidates, work)  # no echoes (design §10)
    top = best(query, candidates)
    history = query.history
    # The floor admits documents: a further section of a document that is in (merged into its
    # item later, where only its units that share the question's words are drawn) needs only
    # the sibling floor.
    leading = {
        doc
        for c in candidates
        if (doc := items.document_of(c.memory))
        and c.terms.get("relevance", 0.0) >= floor(query, c.memory, top, history)
    }
    vectors = _vectors_of(store, candidates, vectors)
    if req.mode == "recall" and standing:  # recall: the few most relevant prohibitions only
        ranked = sorted((c for c in candidates if c.memory.id in standing),
                        key=lambda c: -c.terms.get("relevance", 0.0))  # fmt: skip
        standing = frozenset(c.memory.id for c in ranked[: config.gate.recall_censors])
    for c in candidates:
        m = c.memory
        censor = m.id in standing
        vec = vectors.get(m.id)
        if m.kind in profile.excluded_kinds or m.importance < profile.min_importance:
            work.drop(c, "profile-excluded")
            continue
        if lifecycle.is_excluded(m.kind, m.status):
            work.drop(c, "low-score", f"status {m.status}")
            continue
        if m.kind not in plan.limits:
            work.drop(c, "excluded-kind")
            continue
        if c.terms["scopeFactor"] <= config.scoring.scope_factors["other_language"]:
            work.drop(c, "scope")
            continue
        least = floor(query, m, top, history)
        if items.document_of(m) in leading:
            least = min(least, config.gate.sibling)
        below = c.terms.get("relevance", 0.0) < least
        if not censor and not bypasses(m, req.mode) and below:
            work.drop(
                c, "low-score", f"relevance {c.terms.get('relevance', 0.0):.3g} below {least:.3g}"
            )
            continue
        if censor and below:
            if m.id in req.injected and not bypasses(m, req.mode):
                work.drop(c, "duplicate", "a censor this session was already given")
                continue
            c.terms["censor"] = 1.0  # in by the censors layer alone: only within its cap
        # With no input there is nothing to be relevant to: the priors alone choose (a chat that
        # starts empty), on the relevance within the startup tier (the score before the scope
        # factor); with an input the gate admits and the priors only reorder.
        prior = c.score / c.terms["scopeFactor"] if req.mode == "startup" else c.score
        if not censor and not req.input.strip() and prior < threshold:
            work.drop(c, "low-score", f"below {threshold:.3g}")
            continue
        document = items.document_of(m)
        merges = document is not None and document in slotted
        if (not censor and req.mode != "startup" and not merges
                and per_kind.get(m.kind, 0) >= kind_limit(m.kind)):  # fmt: skip
            work.drop(c, "low-score", f"beyond the plan's {kind_limit(m.kind)} {m.kind}s")
            continue
        if secrets.contains(m.summary) or secrets.contains(m.micro):
            work.drop(c, "secret")
            continue
        hit = dedup.redundant_with(
            m.summary, vec, messages, message_vecs,
            config.scoring.dedup_conversation_cosine, config.scoring.dedup_conversation_jaccard,
        )  # fmt: skip
        if hit is not None:
            work.drop(c, "duplicate-of-conversation", f"message {hit}")
            continue
        if req.instructions and dedup.repeats_instructions(m.content, req.instructions):
            work.drop(c, "duplicate", "already in the editor's instruction files")
            continue
        if vec is not None and kept_vecs:
            if stacked is None:  # stacked again only when one more is kept
                stacked = np.stack(kept_vecs)
            sims = stacked @ vec
            nearest = int(np.argmax(sims))
            if float(sims[nearest]) > config.scoring.dedup_selected_cosine:
                work.drop(c, "duplicate", f"of {vec_owners[nearest].memory.id}")
                continue
        if not merges:
            per_kind[m.kind] = per_kind.get(m.kind, 0) + 1
            if document is not None:
                slotted.add(document)
        kept.append(c)
        if vec is not None:
            kept_vecs.append(vec)
            vec_owners.append(c)
            stacked = None
    return preserve(kept, profile)


def _vectors_of(
    store: Store, candidates: list[Scored], read: dict[str, Vector] | None
) -> dict[str, Vector]:
    """The vectors of `candidates`: those already `read`, the others asked for now (in the
    candidates' order: the store embeds the first few of those still pending)."""
    ids = [c.memory.id for c in candidates]
    have = read or {}
    out = {i: have[i] for i in ids if i in have}
    missing = [i for i in ids if i not in out]
    if missing:
        out.update(store.vectors(missing))
    return out


def _chat_turns_out(query: Query, candidates: list[Scored], work: items.Work) -> list[Scored]:
    """At startup a chat turn is no context: the session slot holds the notes drawn from the
    turns, and a turn that holds both of them would push them out as its paraphrases."""
    if query.mode != "startup":
        return candidates
    out: list[Scored] = []
    for c in candidates:
        if chat_turns.is_turn(c.memory):
            work.drop(c, "excluded-kind", "a chat turn (its session notes stand for it)")
        else:
            out.append(c)
    return out


def best(query: Query, candidates: list[Scored]) -> float:
    """The best relevance among the candidates gated on the model's probability: a chat turn's
    relevance is the search's blend (`retrieval.apart`), on another scale, so it sets no
    relative floor. An old turn that repeats the question's words (blend 0.87) once held out
    the ADR that answers it (0.28)."""
    return max((c.terms.get("relevance", 0.0) for c in candidates
                if not apart(query, c.memory)), default=0.0)  # fmt: skip


def floor(query: Query, memory: Memory, top: float, history: bool) -> float:
    """The relevance `memory` must reach for this request (design §2.5), `top` being the best
    document's (`best`). A question about history ("what changed recently?", "last time") lets
    commits in by their priors (recency first; the plan's episode limit bounds how many). A
    conversation memory needs its LoCoMo-calibrated floor and a share of `top`: beside
    harvested docs that answer, a chat turn must compete (`gate.episode_relative`); in a store
    of turns alone the floor holds."""
    gate = query.config.gate
    if not query.input.strip() or (history and (memory.source or "").startswith("git:")):
        return 0.0
    if apart(query, memory):
        return max(gate.kinds[memory.kind], gate.episode_relative * top)
    least = float(getattr(gate, query.mode))
    # recall and a turn take what is near their best item, not just over the floor
    relative = {"recall": gate.recall_relative, "turn": gate.turn_relative}.get(query.mode, 0.0)
    return max(least, top * relative)


def preserve(kept: list[Scored], profile: Profile) -> list[Scored]:
    """Head/tail preservation: the N most important and N most recent go first."""
    head = sorted(kept, key=lambda s: -s.memory.importance)[: profile.preserve_head]
    tail = sorted(kept, key=lambda s: s.memory.updated_at, reverse=True)[: profile.preserve_tail]
    first: list[Scored] = []
    for s in [*head, *tail]:
        if all(s is not f for f in first):
            first.append(s)
    rest = [s for s in kept if all(s is not f for f in first)]
    return [*first, *rest]
