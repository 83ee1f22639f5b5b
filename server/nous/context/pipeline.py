"""The context use case: frame → intent → plan → search → score → dedup → allocate → render →
manifest, for `startup`, `turn` and `recall` modes. Needs no server: give it a store and a view."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nous.context import budget, calibration, dedup, echo, items, profiles, relevance, search
from nous.context import frame as frames
from nous.context import intent as intents
from nous.context import plan as plans
from nous.context.config import Config, Profile
from nous.context.render import Block, code, defang, defang_lines
from nous.context.score import Scope, Scored, composite
from nous.memory import lifecycle, secrets, usage
from nous.memory import turns as chat_turns
from nous.memory.embedder import Vector
from nous.memory.model import Memory
from nous.memory.store import MemoryStore
from nous.protocol import ContextResult, Item, Message, Section, SessionUse

_PATHLIKE = re.compile(r"[\w-]+\.[a-zA-Z]\w{0,5}$")


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
        return [self.project_scope, *(f"language:{x}" for x in self.languages), "universal"]


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


def _semantic(
    store: MemoryStore, config: Config, query_vec: np.ndarray, query: str, scopes: list[str],
    exclude: frozenset[str] = frozenset(),
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:  # fmt: skip
    """({id: cosine}, {id: relative BM25}, {chat turn id: windowed blend}) of the candidates."""
    sc = config.scoring
    found = search.hybrid(store, query, query_vec, scopes, sc.candidates, exclude)
    window = search.Window(
        sc.window_near, sc.window_far, sc.window_widen, sc.window_answer, sc.window_asking
    )
    turns = search.windowed(store, found, query_vec, scopes, sc.semantic_cosine_share,
                            window)  # fmt: skip
    return found.cosine, found.lexical, turns


def _always_on(store: MemoryStore, scopes: list[str], limit: int = 40) -> list[str]:
    """What goes in whatever the input (design §2.7): pinned memories and blocking (escalated)
    constraints in scope. Everything else must be relevant to the input."""
    return store.always_on(scopes, limit)


CENSOR_OVERHEAD = 25
"""Tokens of a layer's heading and fence, kept free when a censor's extract is sized."""
STANDING_CANDIDATES = 24
"""Standing rules scored per request (the nearest to the input): a censors layer holds a few."""


def _nearest(
    store: MemoryStore, ids: list[str], query_vec: np.ndarray | None, limit: int
) -> frozenset[str]:
    """The `limit` of `ids` nearest to the query (the first `limit` when there is none)."""
    if len(ids) <= limit or query_vec is None:
        return frozenset(ids[:limit])
    vectors = store.vectors(ids)
    ranked = sorted(ids, key=lambda i: -float(vectors[i] @ query_vec) if i in vectors else 1.0)
    return frozenset(ranked[:limit])


def _bypasses_gate(memory: Memory, mode: str = "turn") -> bool:
    """Pinned and blocking memories go in whatever the input; at startup so do the session
    notes (design §3's 800-token slot: where the last session ended, whatever is asked first)."""
    session_note = mode == "startup" and memory.kind == "note"
    return memory.pinned or memory.status == "escalated" or session_note


RULES_LAYER = "rules"
CENSORS_LAYER = "constraints"


def _layer_of(
    config: Config, scored: Scored, mode: str, standing: frozenset[str] = frozenset()
) -> str:
    """Rules from the workspace's own instruction files render as the project's rules; in a
    turn, the standing constraints (prohibitions included) form the censors layer."""
    rules = any(layer.name == RULES_LAYER for layer in config.layers)
    harvested_rule = rules and "instructions" in scored.memory.tags
    if mode == "turn" and scored.memory.id in standing and scored.memory.kind == "constraint":
        # the workspace's own prohibitions read as its rules (unfenced, design §2.8), drawing on
        # the censors' cap (`_bucket`); remembered constraints are fenced data
        return RULES_LAYER if harvested_rule else CENSORS_LAYER
    if harvested_rule:
        return RULES_LAYER
    return RECALL_LAYER if mode == "recall" else config.layer_of(scored.memory.kind)


def _turn_bucket(scored: Scored, layer: str) -> str:
    """A turn's buckets are its layers; a censor (in by the censors layer alone) draws on the
    censors' cap wherever it is rendered (an instruction-file prohibition: in the rules)."""
    return CENSORS_LAYER if scored.terms.get("censor") else layer


def _startup_bucket(scored: Scored, layer: str) -> str:
    m = scored.memory
    if m.kind == "note":
        tags = set(m.tags)
        if "impl" in tags:
            return "notes_impl"
        if "dec" in tags:
            return "notes_dec"
        return "notes_block_next"
    if m.scope.startswith("project:"):
        return "project"
    return "language" if m.scope.startswith("language:") else "universal"


RECALL_LAYER = "recall"


def _blocks(config: Config, frame: str, view: View, mode: str) -> list[Block]:
    # Titles, names, file names, languageIds and frame text come from the workspace or the
    # client: each is defanged (one inert line) before it is put in the rendered text.
    if mode == "recall":  # best first: the project's rules, then one list of everything else
        rules = next((x for x in config.layers if x.name == RULES_LAYER), None)
        head = [Block(rules.name, defang(rules.title, 80), fenced=False)] if rules else []
        return [*head, Block(RECALL_LAYER, "Recalled Memories")]
    blocks = [
        Block(layer.name, defang(layer.title, 80), fenced=layer.fenced) for layer in config.layers
    ]
    by_name = {b.name: b for b in blocks}
    if mode != "recall":
        # each as inline code: a name, never a sentence the model could take as an instruction
        langs = ", ".join(x for x in (code(x, 40) for x in view.languages) if x)
        task = code(view.task, 40) if view.task else ""
        active = code(view.active_file, 160, tail=True) if view.active_file else ""
        identity = by_name["identity"]
        identity.fixed = (
            f"Project {code(view.project, 80) or '(unnamed)'} ({langs or 'no language detected'})"
            + (f" · task: {task}" if task else "")
            + (f" · editing {active}" if active else "")
        )
        identity.inert = True
    if mode == "turn":
        by_name["frame"].title = f"Current Approach: {defang(frame, 40).capitalize()}"
        by_name["frame"].fixed = defang_lines(config.frames.text.get(frame, ""))
    return blocks


def _flow_order(config: Config, frame: str) -> list[str]:
    priorities = config.frames.priorities.get(frame, {})

    def best(layer_kinds: list[str]) -> float:
        return max((priorities.get(k, 0.0) for k in layer_kinds), default=0.0)

    layers = sorted(config.layers, key=lambda layer: -best(layer.kinds))
    return [layer.name for layer in layers]


def _fingerprint(
    req: Request, frame: str, profile: str, alloc: budget.Allocation, available: int,
    intent: intents.Intent, budget_total: int,
) -> dict[str, object]:  # fmt: skip
    files = sorted({e for e in intent.entities if _PATHLIKE.search(e)})
    complexity = "complex" if len(files) > 5 else "moderate" if len(files) > 2 else "simple"
    full = sum(len(p.scored.memory.content) for p in alloc.placed) or 1
    shown = sum(len(p.line) for p in alloc.placed)
    tiers: dict[str, int] = {}
    for p in alloc.placed:
        tier = profiles.tier(p.scored.memory.kind, p.scored.memory.scope)
        tiers[tier] = tiers.get(tier, 0) + 1
    return {
        "frame": frame,
        "mode": req.mode,
        "complexity": complexity,
        "fileCount": len(files),
        "fileHash": hashlib.sha256("\n".join(files).encode()).hexdigest()[:16],
        "profile": profile,
        "totalTokens": alloc.tokens,
        "budget": budget_total,
        "kinds": sorted({p.scored.memory.kind for p in alloc.placed}),
        "compressionRatio": round(shown / full, 4),
        "tierCounts": tiers,
        "selected": len(alloc.placed),
        "available": available,
    }


def assemble(store: MemoryStore, config: Config, view: View, req: Request) -> ContextResult:
    """Build one context answer; every candidate is either included or dropped with a reason."""
    frame = (
        "question"
        if req.mode == "recall" and not req.frame
        else frames.select(req.input, req.frame)
    )
    intent = intents.signals(req.input)
    if view.task is None:
        view.task = intent.task
    profile_name, profile = profiles.get(config, req.profile)
    plan = plans.build(intent, frame, config, req.kinds)
    total = max(0, req.budget)
    work = items.Work()
    session = req.session or SessionUse(id=None, used=0, cap=0, remaining=0)
    blocks = _blocks(config, frame, view, req.mode)
    if req.mode == "turn" and frame == "decision":  # seed 003's calibration note (design §14)
        calibration.add_note(blocks, store, config, view.project_scope)
    layer_kinds = {layer.name: layer.kinds for layer in config.layers}
    layer_kinds[RULES_LAYER] = list(config.plan.kinds)

    candidates: list[Scored] = []
    available = 0
    rel_query: relevance.Query | None = None
    merged: dict[str, list[Scored]] = {}
    short: dict[str, int] = {}
    small_talk = intent.greeting
    skip_retrieval = not plan.retrieves or total == 0 or small_talk
    semantic: dict[str, float] = {}
    lexical: dict[str, float] = {}
    turns: dict[str, float] = {}
    query_vec = None
    subject: tuple[relevance.Query, dict[str, float]] | None = None
    if not skip_retrieval:
        query = req.input.strip() or " ".join(
            [view.project, *view.languages, view.task or "", view.active_file or ""]
        )
        query_vec = req.vector if req.vector is not None else store.embed(query)
        words = relevance.expand(query)  # "PR" finds "pull request" and back
        # the asking session's own turns and notes are in its conversation: not memory to it
        own = (
            frozenset(i for i, _, _ in store.session_rows(req.session_id, view.project_scope))
            if req.session_id and "#" not in req.session_id
            else frozenset()
        )
        semantic, lexical, turns = _semantic(store, config, query_vec, words, view.scopes, own)
        frequencies, documents = store.document_frequencies(relevance.query_words(words))
        half = config.gate.rarity_store_half
        rel_query = relevance.query(words, frequencies, documents, half)
        if intent.alternative:
            # A proposal ("move the memory store to Postgres?") is also read as its subject:
            # the decision that chose otherwise may never name the alternative. Its lexical
            # search leaves the alternative out and its words weigh less; a memory is as
            # relevant as the better reading finds it.
            found, subject_lexical, _ = _semantic(
                store, config, query_vec, relevance.without(words, intent.alternative),
                view.scopes, own,
            )  # fmt: skip
            for memory_id, cosine in found.items():
                semantic.setdefault(memory_id, cosine)
            subject = (
                relevance.query(words, frequencies, documents, half, intent.alternative),
                subject_lexical,
            )
        available = len(semantic)
    if req.mode != "recall" and total > 0:
        for memory_id in _always_on(store, view.scopes):
            semantic.setdefault(memory_id, 0.0)
    # The censors layer (design §2.7): the project's active constraints go in whatever the input
    # (small talk aside), ordered by relevance within the layer's cap; a chat start carries every
    # instruction rule so. Recall carries the most relevant few when the question asks whether
    # it may do a thing.
    standing: frozenset[str] = frozenset()
    if total > 0 and not small_talk and (req.mode != "recall" or intent.permission):
        standing = _nearest(
            store, store.standing_rules(view.project_scope, req.mode == "startup"), query_vec,
            STANDING_CANDIDATES * (2 if req.mode == "startup" else 1),
        )  # fmt: skip
        for memory_id in standing:
            semantic.setdefault(memory_id, 0.0)
    if req.mode == "startup" and total > 0:  # the session slot: the last sessions' notes
        for memory_id in store.recent_notes(view.project_scope):
            semantic.setdefault(memory_id, 0.0)
    if semantic:
        asked = relevance.asked_kinds(intent.dominant_hint, intent.permission)
        candidates = _score(store, config, view, frame, plan, profile, semantic, work,
                            rel_query, query_vec, lexical, turns, asked, subject)  # fmt: skip
        available = max(available, len(candidates))
        history = intent.temporal_recency > 0 or "episode" in intent.hints
        candidates = _filter(store, config, req, frame, plan, profile, candidates, work, history,
                             standing)  # fmt: skip
        candidates = items.supersession(store, candidates, work)
        candidates = items.paraphrases(candidates, work, config.scoring.paraphrase_containment)
        # One item per document: a document does not spend its heading path and the budget
        # several times over, and its best section leads (measured: fewer tokens, a higher
        # first-hit rank in every mode; docs/benchmarks.md).
        candidates, merged = items.merge_documents(candidates, work)
        short = items.complete_short_documents(
            store, candidates, merged, config.gate.short_document
        )

    if req.mode == "startup":
        s = config.startup
        caps = budget.scale(
            {"universal": s.universal, "language": s.language, "project": s.project,
             "reserve": s.reserve, "notes_impl": s.notes_impl, "notes_dec": s.notes_dec,
             "notes_block_next": s.notes_block_next},
            total,
        )  # fmt: skip
        bucket_of = _startup_bucket
    elif req.mode == "recall":
        caps = {block.name: total for block in blocks}
        bucket_of = lambda scored, layer: layer  # noqa: E731
        layer_kinds[RECALL_LAYER] = []
    else:
        caps = budget.scale({layer.name: layer.cap for layer in config.layers}, total)
        bucket_of = _turn_bucket
    # Each item's share of the budget for its extract: the budget split over what was admitted,
    # weighted by rank (1/r), so the best item has room to carry its answer and a long tail of
    # admitted items still fits.
    harmonic = sum(1 / r for r in range(1, len(candidates) + 1)) or 1.0
    gate = config.gate
    most = gate.startup_item_max if req.mode == "startup" else gate.item_max
    first = total * gate.item_share / harmonic
    shares = {
        c.memory.id: min(most, max(gate.item_min, int(first / r)))
        for r, c in enumerate(candidates, start=1)
    }
    for memory_id, size in short.items():  # a short document has room to come whole
        shares[memory_id] = max(shares.get(memory_id, 0), size)
    # Recall and turn: a merged item keeps the answer of each section that passed the gate on
    # its own (its share grows, or the section leaves the item); a chat start, whose tiers leave
    # no room to grow, keeps its best section whole and then the others' extract.
    lead = next((c for c in candidates if c.memory.id in merged), None)
    top = max((c.terms.get("relevance", 0.0) for c in candidates), default=0.0)
    answers = req.mode != "startup" and lead is not None
    renderings = items.Renderings(
        store, rel_query, shares, items.successor_names(store, candidates), merged,
        admitted=_floor(config, req, lead.memory, top, False) if answers and lead else None,
    )  # fmt: skip
    if answers:
        candidates = items.keep_answers(renderings, candidates, work, most, total, gate.item_min)
    placing = [(c, _layer_of(config, c, req.mode, standing)) for c in candidates]
    for c, layer in placing:  # in by its layer alone: its extract is cut to the layer's cap
        if c.terms.get("censor"):
            room = caps.get(bucket_of(c, layer), 0) - CENSOR_OVERHEAD
            shares[c.memory.id] = max(gate.item_min // 2, min(shares[c.memory.id], room))
    censors = frozenset(c.memory.id for c in candidates if c.terms.get("censor"))

    def place() -> budget.Allocation:
        for block in blocks:
            block.lines = []
        return budget.allocate(
            placing, blocks, layer_kinds, caps, bucket_of, _flow_order(config, frame), total,
            store.counter, micro_first=profile.compression > 0.7, choices=renderings.of,
            best_first=req.mode == "recall", capped=censors,
        )  # fmt: skip

    alloc = place()
    # a recall's budget binds: what an answer left grows the extracts it cut, and it is placed
    # again
    if req.mode == "recall" and _spend_spare(alloc, renderings, shares, most, total):
        alloc = place()
    for scored in alloc.over_budget:
        work.drop(scored, "budget")

    sections = []
    always = {layer.name for layer in config.layers if layer.always}
    for block in blocks:
        placed = [p for p in alloc.placed if p.layer == block.name]
        if not placed and not block.fixed and block.name not in always:
            continue
        used = store.counter.count(block.render()) if block.render() else 0
        sections.append(
            Section(
                layer=block.name, title=block.title, used=used, cap=alloc.caps[block.name],
                items=[
                    Item(id=p.scored.memory.id, kind=p.scored.memory.kind,
                         scope=p.scored.memory.scope, layer=p.layer,
                         detail=p.detail,
                         tokens=p.tokens, score=round(p.scored.score, 4), terms=p.scored.terms,
                         text=p.line[2:], source=p.scored.memory.source,
                         merged=[m.memory.id for m in merged.get(p.scored.memory.id, [])],
                         sources=items.sources(p.scored, merged),
                         origin="team" if p.scored.memory.origin == "team" else "local")
                    for p in placed
                ],
            )
        )  # fmt: skip
    notes = [req.cut_note] if req.cut_note else []
    return ContextResult(
        text=alloc.text, tokens=alloc.tokens, budget=total, frame=frame, mode=req.mode,
        intent={**intent.model_dump(), "plan": plan.model_dump()}, sections=sections,
        dropped=work.dropped, session=session,
        fingerprint=_fingerprint(req, frame, profile_name, alloc, available, intent, total),
        notes=notes,
    )  # fmt: skip


SPARE_STEP = 40
"""The least an extract grows by when an answer left budget unspent (a sentence or two)."""


def _spend_spare(
    alloc: budget.Allocation, renderings: items.Renderings, shares: dict[str, int], most: int,
    total: int,
) -> bool:  # fmt: skip
    """The budget a recall left unspent goes to the extracts that were cut, best first, each up
    to an item's most (`gate.item_max`): the answer is often the next sentences of a section the
    question's words led to. True when a share grew (the answer is placed again)."""
    spare = total - alloc.tokens
    grown = False
    for placed in alloc.placed:
        if spare < SPARE_STEP:
            break
        memory_id = placed.scored.memory.id
        if placed.detail != "extract" or placed.scored.terms.get("censor"):
            continue
        room = min(most - shares.get(memory_id, 0), spare)
        if room < SPARE_STEP:
            continue
        shares[memory_id] = shares.get(memory_id, 0) + room
        spare -= room
        renderings.forget(memory_id)
        grown = True
    return grown


def _score(
    store: MemoryStore, config: Config, view: View, frame: str, plan: plans.Plan,
    profile: Profile, semantic: dict[str, float], work: items.Work,
    rel_query: relevance.Query | None = None, query_vec: np.ndarray | None = None,
    lexical: dict[str, float] | None = None, turns: dict[str, float] | None = None,
    asked: frozenset[str] = frozenset(),
    subject: tuple[relevance.Query, dict[str, float]] | None = None,
) -> list[Scored]:  # fmt: skip
    memories = store.get_many(list(semantic))
    vectors = store.vectors(list(memories)) if query_vec is not None else {}
    best_cosine = max(semantic.values(), default=0.0)
    active = (view.active_file or "").removeprefix("file://")
    stats = store.usage_stats(list(memories), config.scoring.usage_half_life_days)
    weights = profiles.tier_weights(profile, view.task)
    where = Scope(view.project_scope, tuple(view.languages))
    now_ts = time.time()
    scored = []
    for memory_id, memory in memories.items():
        extra = profiles.tier_factor(weights, memory.kind, memory.scope)
        if memory.kind in profile.preferred_kinds:
            extra *= config.scoring.preferred_kind_boost
        subtree = next((t[8:] for t in memory.tags if t.startswith("subtree:")), None)
        if subtree and active and f"/{subtree}/" in f"/{active}":
            extra *= config.scoring.preferred_kind_boost  # a nested instruction file's subtree
        vec = vectors.get(memory_id)
        cosine = float(vec @ query_vec) if vec is not None and query_vec is not None else 0.0
        rel, coverage = 0.0, 0.0
        if rel_query is not None:
            lexical_score = (lexical or {}).get(memory_id, 0.0)
            values = relevance.features(rel_query, memory.content, cosine, lexical_score,
                                        best_cosine, memory.kind in asked)  # fmt: skip
            rel = relevance.probability(values, config.gate.model)
            coverage = values[1]
            if subject is not None:  # a proposal read as its subject (`intent.alternative`)
                values = relevance.features(subject[0], memory.content, cosine,
                                            subject[1].get(memory_id, 0.0), best_cosine,
                                            memory.kind in asked)  # fmt: skip
                if (p := relevance.probability(values, config.gate.model)) > rel:
                    rel, coverage = p, values[1]
        # The semantic term is the query relevance the gate admits on: the gate model's
        # probability that this memory holds the answer.
        semantic_term = rel
        if _apart(config, memory):  # calibrated apart: the search's blend, tuned on
            share = config.scoring.semantic_cosine_share  # LoCoMo's development conversations
            lexical_score = (lexical or {}).get(memory_id, 0.0)
            semantic_term = share * max(0.0, cosine) + (1 - share) * lexical_score
            semantic_term = (turns or {}).get(memory_id, semantic_term)  # with its neighbours
            # … and gated on it: the gate model is fitted on documents, and its probabilities
            # for a chat turn are on no scale its LoCoMo floor (`gate.kinds`) was chosen on
            rel = semantic_term
        item = composite(config, memory, semantic_term, frame, where, now_ts, plan.recency_weight,
                         stats.get(memory_id, usage.NEUTRAL), extra,
                         memory.kind in asked)  # fmt: skip
        item.terms["relevance"] = round(rel, 4)
        item.terms["coverage"] = round(coverage, 4)
        scored.append(item)
    scored.sort(key=lambda s: -s.score)
    return scored


def _filter(
    store: MemoryStore, config: Config, req: Request, frame: str, plan: plans.Plan,
    profile: Profile, candidates: list[Scored], work: items.Work, history: bool = False,
    standing: frozenset[str] = frozenset(),
) -> list[Scored]:  # fmt: skip
    threshold = getattr(config.thresholds, req.mode)
    window = config.frames.windows.get(frame, 5)
    messages = [m.content for m in list(req.conversation)[-window:] if m.content.strip()]
    message_vecs = store.embed_many(messages) if messages else None
    per_kind: dict[str, int] = {}
    # On-demand recall is paid for by its own budget: the per-kind limits grow with it.
    scaled = 0
    if req.mode == "recall" and req.budget:
        scaled = -(-req.budget * config.plan.recall_items_per_1k_tokens // 1000)

    def kind_limit(kind: str) -> int:
        return max(plan.limits[kind], scaled)

    kept: list[Scored] = []
    kept_vecs: list[np.ndarray] = []
    vec_owners: list[Scored] = []  # the kept memory of each of kept_vecs (not all have one)
    candidates = _chat_turns_out(req, candidates, work)
    candidates = echo.drop(req.input, req.session_id, candidates, work)  # no echoes (design §10)
    top = max((c.terms.get("relevance", 0.0) for c in candidates), default=0.0)
    # A chat turn must be competitive with the best document: in a store of turns alone their
    # LoCoMo-calibrated floor holds, beside harvested docs that answer it stays out.
    beside = max((c.terms.get("relevance", 0.0) for c in candidates
                  if not _apart(config, c.memory)), default=0.0)  # fmt: skip
    # The floor admits documents: a further section of a document that is in (merged into its
    # item later, where only its units that share the question's words are drawn) needs only
    # the sibling floor.
    leading = {
        doc
        for c in candidates
        if (doc := items.document_of(c.memory))
        and c.terms.get("relevance", 0.0) >= _floor(config, req, c.memory, top, history, beside)
    }
    vectors = store.vectors([c.memory.id for c in candidates])
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
        floor = _floor(config, req, m, top, history, beside)
        if items.document_of(m) in leading:
            floor = min(floor, config.gate.sibling)
        below = c.terms.get("relevance", 0.0) < floor
        if not censor and not _bypasses_gate(m, req.mode) and below:
            work.drop(
                c, "low-score", f"relevance {c.terms.get('relevance', 0.0):.3g} below {floor:.3g}"
            )
            continue
        if censor and below:
            if m.id in req.injected and not _bypasses_gate(m, req.mode):
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
        if not censor and req.mode != "startup" and per_kind.get(m.kind, 0) >= kind_limit(m.kind):
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
            sims = np.stack(kept_vecs) @ vec
            best = int(np.argmax(sims))
            if float(sims[best]) > config.scoring.dedup_selected_cosine:
                work.drop(c, "duplicate", f"of {vec_owners[best].memory.id}")
                continue
        per_kind[m.kind] = per_kind.get(m.kind, 0) + 1
        kept.append(c)
        if vec is not None:
            kept_vecs.append(vec)
            vec_owners.append(c)
    return _preserve(kept, profile)


def _chat_turns_out(req: Request, candidates: list[Scored], work: items.Work) -> list[Scored]:
    """At startup a chat turn is no context: the session slot holds the notes drawn from the
    turns, and a turn that holds both of them would push them out as its paraphrases."""
    if req.mode != "startup":
        return candidates
    out: list[Scored] = []
    for c in candidates:
        if chat_turns.is_turn(c.memory):
            work.drop(c, "excluded-kind", "a chat turn (its session notes stand for it)")
        else:
            out.append(c)
    return out


def _apart(config: Config, memory: Memory) -> bool:
    """Conversation memories of a kind calibrated apart (LoCoMo's turns); a commit or a
    harvested file's record is gated like any document."""
    source = memory.source or ""
    return memory.kind in config.gate.kinds and not source.startswith(("git:", "file:"))


def _floor(
    config: Config, req: Request, memory: Memory, top: float, history: bool, beside: float = 0.0,
) -> float:  # fmt: skip
    """The relevance `memory` must reach for this request (design §2.5). A question about
    history ("what changed recently?", "last time") lets commits in by their priors (recency
    first; the plan's episode limit bounds how many). A conversation memory also needs a share
    of `beside`, the best relevance among the other candidates (`gate.episode_relative`)."""
    gate = config.gate
    if not req.input.strip() or (history and (memory.source or "").startswith("git:")):
        return 0.0
    if _apart(config, memory):
        return max(gate.kinds[memory.kind], gate.episode_relative * beside)
    floor = float(getattr(gate, req.mode))
    # recall and a turn take what is near their best item, not just over the floor
    relative = {"recall": gate.recall_relative, "turn": gate.turn_relative}.get(req.mode, 0.0)
    return max(floor, top * relative)


def _preserve(kept: list[Scored], profile: Profile) -> list[Scored]:
    """Head/tail preservation: the N most important and N most recent go first."""
    head = sorted(kept, key=lambda s: -s.memory.importance)[: profile.preserve_head]
    tail = sorted(kept, key=lambda s: s.memory.updated_at, reverse=True)[: profile.preserve_tail]
    first: list[Scored] = []
    for s in [*head, *tail]:
        if all(s is not f for f in first):
            first.append(s)
    rest = [s for s in kept if all(s is not f for f in first)]
    return [*first, *rest]
