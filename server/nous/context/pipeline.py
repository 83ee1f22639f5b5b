"""The context use case: frame → intent → plan → search → score → dedup → allocate → render →
manifest, for `startup`, `turn` and `recall` modes. Needs no server: give it a store and a view.

The request's state is one frozen `query.Query`; the steps are `retrieval` (find and score),
`gate` (admit), `items` (what each admitted item becomes) and `placement` (where it goes)."""

from __future__ import annotations

import hashlib
import re

from nous.context import budget, calibration, items, profiles, retrieval
from nous.context import gate as gates
from nous.context import placement as places
from nous.context.config import Config
from nous.context.query import Query, Request, View, build
from nous.context.render import Block
from nous.context.score import Scored
from nous.memory.interface import Store
from nous.protocol import ContextResult, Item, Section, SessionUse

__all__ = ["ContextResult", "Request", "View", "assemble"]

_PATHLIKE = re.compile(r"[\w-]+\.[a-zA-Z]\w{0,5}$")


def assemble(store: Store, config: Config, view: View, req: Request) -> ContextResult:
    """Build one context answer; every candidate is either included or dropped with a reason."""
    query = build(store, config, view, req)
    work = items.Work()
    blocks = places.blocks(query)
    if query.mode == "turn" and query.frame == "decision":  # seed 003's note (design §14)
        calibration.add_note(blocks, store, config, view.project_scope)
    found = retrieval.gather(store, query)
    candidates: list[Scored] = []
    merged: dict[str, list[Scored]] = {}
    short: dict[str, int] = {}
    available = found.available
    if found.semantic:
        candidates, vectors = retrieval.rank(store, query, found)
        available = max(available, len(candidates))
        candidates = gates.admit(store, query, candidates, work, vectors, found.standing)
        candidates = items.supersession(candidates, work)
        candidates = items.paraphrases(candidates, work, config.scoring.paraphrase_containment)
        # One item per document: a document does not spend its heading path and the budget
        # several times over, and its best section leads (measured: fewer tokens, a higher
        # first-hit rank in every mode; docs/benchmarks.md).
        candidates, merged = items.merge_documents(candidates, work)
        items.with_decisions(store, candidates, merged)
        short = items.complete_short_documents(
            store, candidates, merged, config.gate.short_document
        )
    layout = places.layout(query, blocks)
    renderings = _renderings(store, query, candidates, merged, short)
    if renderings.admitted is not None:
        most, least = places.most(query), config.gate.item_min
        candidates = items.keep_answers(renderings, candidates, work, most, query.budget, least)
    placement = places.placement(query, candidates, found.standing, layout, renderings)
    alloc = placement.place()
    # a recall's budget binds: what an answer left grows the extracts it cut, and it is placed
    # again
    if query.mode == "recall":
        alloc = places.place_spare(query, placement, alloc)
    for scored in alloc.over_budget:
        work.drop(scored, "budget")
    return ContextResult(
        text=alloc.text, tokens=alloc.tokens, budget=query.budget, frame=query.frame,
        mode=query.mode, intent={**query.intent.model_dump(), "plan": query.plan.model_dump()},
        sections=_sections(store, query, blocks, alloc, merged), dropped=work.dropped,
        session=req.session or SessionUse(id=None, used=0, cap=0, remaining=0),
        fingerprint=_fingerprint(query, alloc, available),
        notes=[req.cut_note] if req.cut_note else [],
    )  # fmt: skip


def _renderings(
    store: Store, query: Query, candidates: list[Scored], merged: dict[str, list[Scored]],
    short: dict[str, int],
) -> items.Renderings:  # fmt: skip
    """The renderings of the admitted items. Recall and turn: a merged item keeps the answer of
    each section that passed the gate on its own (its share grows, or the section leaves the
    item: `admitted` is the mode's floor); a chat start, whose tiers leave no room to grow,
    keeps its best section whole and then the others' extract."""
    lead = next((c for c in candidates if c.memory.id in merged), None)
    top = gates.best(query, candidates)
    answers = query.mode != "startup" and lead is not None
    return items.Renderings(
        store, query.terms, places.shares(query, candidates, short),
        items.successor_names(store, candidates), merged,
        admitted=gates.floor(query, lead.memory, top, False) if answers and lead else None,
    )  # fmt: skip


def _sections(
    store: Store, query: Query, blocks: list[Block], alloc: budget.Allocation,
    merged: dict[str, list[Scored]],
) -> list[Section]:  # fmt: skip
    """The answer's layers with what each holds (a layer with nothing in it is left out,
    unless it always shows)."""
    sections = []
    always = {layer.name for layer in query.config.layers if layer.always}
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
    return sections


def _fingerprint(query: Query, alloc: budget.Allocation, available: int) -> dict[str, object]:
    files = sorted({e for e in query.intent.entities if _PATHLIKE.search(e)})
    complexity = "complex" if len(files) > 5 else "moderate" if len(files) > 2 else "simple"
    full = sum(len(p.scored.memory.content) for p in alloc.placed) or 1
    shown = sum(len(p.line) for p in alloc.placed)
    tiers: dict[str, int] = {}
    for p in alloc.placed:
        tier = profiles.tier(p.scored.memory.kind, p.scored.memory.scope)
        tiers[tier] = tiers.get(tier, 0) + 1
    return {
        "frame": query.frame,
        "mode": query.mode,
        "complexity": complexity,
        "fileCount": len(files),
        "fileHash": hashlib.sha256("\n".join(files).encode()).hexdigest()[:16],
        "profile": query.profile_name,
        "totalTokens": alloc.tokens,
        "budget": query.budget,
        "kinds": sorted({p.scored.memory.kind for p in alloc.placed}),
        "compressionRatio": round(shown / full, 4),
        "tierCounts": tiers,
        "selected": len(alloc.placed),
        "available": available,
    }
