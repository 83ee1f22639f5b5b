"""Where admitted items go (design §2.7): the layers a mode renders (`blocks`), the layer and the
bucket of each item, the buckets' caps scaled to the budget (`layout`), each item's share of the
budget for its extract (`shares`), and the placement itself (`Placement`), placed again when a
recall's unspent budget grows the extracts it cut (`place_spare`)."""

from __future__ import annotations

from dataclasses import dataclass

from nous.context import budget, items, retrieval
from nous.context.query import Query
from nous.context.render import Block, code, defang, defang_lines
from nous.context.score import Scored
from nous.memory import scope as scopes
from nous.text.tokens import TokenCounter

RULES_LAYER = "rules"
CENSORS_LAYER = "constraints"
RECALL_LAYER = "recall"
CENSOR_OVERHEAD = 25
"""Tokens of a layer's heading and fence, kept free when a censor's extract is sized."""
SPARE_STEP = 40
"""The least an extract grows by when an answer left budget unspent (a sentence or two)."""


def blocks(query: Query) -> list[Block]:
    """The layers `query`'s mode renders, in order, with their fixed text."""
    # Titles, names, file names, languageIds and frame text come from the workspace or the
    # client: each is defanged (one inert line) before it is put in the rendered text.
    config, view = query.config, query.view
    if query.mode == "recall":  # best first: the project's rules, then one list of everything
        rules = next((x for x in config.layers if x.name == RULES_LAYER), None)
        head = [Block(rules.name, defang(rules.title, 80), fenced=False)] if rules else []
        return [*head, Block(RECALL_LAYER, "Recalled Memories")]
    out = [
        Block(layer.name, defang(layer.title, 80), fenced=layer.fenced) for layer in config.layers
    ]
    by_name = {b.name: b for b in out}
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
    if query.mode == "turn":
        by_name["frame"].title = f"Current Approach: {defang(query.frame, 40).capitalize()}"
        by_name["frame"].fixed = defang_lines(config.frames.text.get(query.frame, ""))
    return out


def layer_of(query: Query, scored: Scored, standing: frozenset[str] = frozenset()) -> str:
    """Rules from the workspace's own instruction files render as the project's rules; in a
    turn, the standing constraints (prohibitions included) form the censors layer."""
    config, mode = query.config, query.mode
    rules = any(layer.name == RULES_LAYER for layer in config.layers)
    harvested_rule = rules and "instructions" in scored.memory.tags
    if mode == "turn" and scored.memory.id in standing and scored.memory.kind == "constraint":
        # the workspace's own prohibitions read as its rules (unfenced, design §2.8), drawing on
        # the censors' cap (`_turn_bucket`); remembered constraints are fenced data
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
    if scopes.is_project(m.scope):
        return "project"
    return "language" if scopes.kind(m.scope) == scopes.LANGUAGE else "universal"


def _recall_bucket(scored: Scored, layer: str) -> str:
    return layer


def _flow_order(query: Query) -> list[str]:
    priorities = query.config.frames.priorities.get(query.frame, {})

    def best(layer_kinds: list[str]) -> float:
        return max((priorities.get(k, 0.0) for k in layer_kinds), default=0.0)

    layers = sorted(query.config.layers, key=lambda layer: -best(layer.kinds))
    return [layer.name for layer in layers]


def layout(query: Query, rendered: list[Block]) -> budget.Layout:
    """The caps and buckets of `query`'s mode over the layers `rendered`: a chat start's scope
    tiers and note tags, a recall's one list, a turn's layers."""
    config, total = query.config, query.budget
    layer_kinds = {layer.name: layer.kinds for layer in config.layers}
    layer_kinds[RULES_LAYER] = list(config.plan.kinds)
    if query.mode == "startup":
        s = config.startup
        caps = budget.scale(
            {"universal": s.universal, "language": s.language, "project": s.project,
             "reserve": s.reserve, "notes_impl": s.notes_impl, "notes_dec": s.notes_dec,
             "notes_block_next": s.notes_block_next},
            total,
        )  # fmt: skip
        bucket_of = _startup_bucket
    elif query.mode == "recall":
        caps = {block.name: total for block in rendered}
        bucket_of = _recall_bucket
        layer_kinds[RECALL_LAYER] = []
    else:
        caps = budget.scale({layer.name: layer.cap for layer in config.layers}, total)
        bucket_of = _turn_bucket
    return budget.Layout(
        rendered, layer_kinds, caps, bucket_of, _flow_order(query), total,
        micro_first=query.profile.compression > 0.7, best_first=query.mode == "recall",
    )  # fmt: skip


def most(query: Query) -> int:
    """The most tokens one item's extract may take (`gate.item_max`; a chat start's own)."""
    gate = query.config.gate
    return gate.startup_item_max if query.mode == "startup" else gate.item_max


def room(query: Query, scored: Scored) -> int:
    """The most tokens `scored`'s extract may take: an item's most (`most`), cut in proportion
    to its relevance below `gate.confident`, never under `gate.item_min`. An item the gate barely
    admitted is shown briefly: on a question the store cannot answer, what clears the floor is
    near-misses, and a whole record of each is noise. A chat start, an empty input, a censor, a
    pinned memory and a conversation turn (calibrated apart) keep the full room."""
    gate, top = query.config.gate, most(query)
    if gate.confident <= 0 or query.mode == "startup" or not query.input.strip():
        return top
    memory = scored.memory
    if scored.terms.get("censor") or memory.pinned or retrieval.apart(query, memory):
        return top
    confidence = min(1.0, scored.terms.get("relevance", 0.0) / gate.confident)
    return max(gate.item_min, min(top, round(top * confidence)))


def shares(query: Query, candidates: list[Scored], short: dict[str, int]) -> dict[str, int]:
    """Each item's share of the budget for its extract: the budget split over what was
    admitted, weighted by rank (1/r), so the best item has room to carry its answer and a long
    tail of admitted items still fits; a short document (`short`: its tokens) has room to come
    whole. No share passes the item's `room`."""
    gate = query.config.gate
    harmonic = sum(1 / r for r in range(1, len(candidates) + 1)) or 1.0
    first = query.budget * gate.item_share / harmonic
    out = {
        c.memory.id: min(room(query, c), max(gate.item_min, int(first / r)))
        for r, c in enumerate(candidates, start=1)
    }
    for memory_id, size in short.items():
        out[memory_id] = max(out.get(memory_id, 0), size)
    return out


@dataclass
class Placement:
    """The admitted items in their layers, placed (`place`) within the layout."""

    layout: budget.Layout
    placing: list[tuple[Scored, str]]
    renderings: items.Renderings
    counter: TokenCounter
    censors: frozenset[str] = frozenset()
    """The items in by the censors layer alone (only within its cap)."""

    def place(self) -> budget.Allocation:
        for block in self.layout.blocks:
            block.lines = []
        return budget.allocate(
            self.placing, self.layout, self.counter, self.renderings.of, self.censors
        )


def placement(
    query: Query, candidates: list[Scored], standing: frozenset[str], layout: budget.Layout,
    renderings: items.Renderings,
) -> Placement:  # fmt: skip
    """Each item in its layer; a censor (in by its layer alone) has its extract cut to its
    bucket's cap, and the censors take their cap in order of relevance (design: the censors
    layer is ordered by relevance), each in the place one of them had: by the composite score, a
    review skill's procedure at relevance 0.024 took fastmcp's turn cap ahead of the AGENTS.md
    rule that answered, at 0.046."""
    placing = [(c, layer_of(query, c, standing)) for c in _censors_by_relevance(candidates)]
    least = query.config.gate.item_min // 2
    for c, layer in placing:
        if c.terms.get("censor"):
            room = layout.caps.get(layout.bucket_of(c, layer), 0) - CENSOR_OVERHEAD
            renderings.shares[c.memory.id] = max(least, min(renderings.shares[c.memory.id], room))
    censors = frozenset(c.memory.id for c in candidates if c.terms.get("censor"))
    return Placement(layout, placing, renderings, renderings.counter, censors)


def _censors_by_relevance(candidates: list[Scored]) -> list[Scored]:
    """`candidates` with the censors among them reordered by relevance in the places they hold."""
    places = [i for i, c in enumerate(candidates) if c.terms.get("censor")]
    if len(places) < 2:
        return candidates
    out = list(candidates)
    ranked = sorted((candidates[i] for i in places), key=lambda c: -c.terms.get("relevance", 0.0))
    for i, c in zip(places, ranked, strict=True):
        out[i] = c
    return out


def place_spare(query: Query, placement: Placement, alloc: budget.Allocation) -> budget.Allocation:
    """A recall's answer placed again after its unspent budget grew the extracts it cut
    (`spend_spare`), unless growing costs an item admitted on its relevance part of its
    rendering (`_cost`): then the growth is what is left after that cost, or none. A 36-token
    rule ("… is a separate git repository. Always clone with `--recurse-submodules`.") was cut
    to its micro line when the extract before it took the whole spare and the layers' headings
    the rest."""
    renderings = placement.renderings
    before = dict(renderings.shares)
    spare = query.budget - alloc.tokens
    placed_again = False
    for _ in range(3):
        if not spend_spare(query, alloc, renderings, spare):
            break
        again = placement.place()
        placed_again = True
        cost = _cost(alloc, again, placement.censors)
        if cost == 0:
            return again
        _restore(renderings, before)
        spare -= cost
    if not placed_again:  # nothing grew: the first placement stands (its blocks are as placed)
        return alloc
    _restore(renderings, before)
    return placement.place()


def _cost(before: budget.Allocation, after: budget.Allocation, censors: frozenset[str]) -> int:
    """The tokens the items placed `before` lost in `after` (all of an item no longer placed).
    An item in by the censors layer alone may shrink (it is in by its layer, not by relevance:
    as a one-liner if need be) but not leave."""
    now = {p.scored.memory.id: p.tokens for p in after.placed}
    lost = 0
    for p in before.placed:
        memory_id = p.scored.memory.id
        if memory_id not in censors or memory_id not in now:
            lost += max(0, p.tokens - now.get(memory_id, 0))
    return lost


def _restore(renderings: items.Renderings, shares: dict[str, int]) -> None:
    for memory_id, share in shares.items():
        if renderings.shares.get(memory_id) != share:
            renderings.shares[memory_id] = share
            renderings.forget(memory_id)


def spend_spare(
    query: Query, alloc: budget.Allocation, renderings: items.Renderings, spare: int
) -> bool:
    """`spare` tokens a recall left unspent go to the extracts that were cut, best first, each
    up to the item's `room`: the answer is often the next sentences of a section the question's
    words led to. True when a share grew (the answer is placed again)."""
    grown = False
    for placed in alloc.placed:
        if spare < SPARE_STEP:
            break
        memory_id = placed.scored.memory.id
        if placed.detail != "extract" or placed.scored.terms.get("censor"):
            continue
        grow = min(room(query, placed.scored) - renderings.shares.get(memory_id, 0), spare)
        if grow < SPARE_STEP:
            continue
        renderings.shares[memory_id] = renderings.shares.get(memory_id, 0) + grow
        spare -= grow
        renderings.forget(memory_id)
        grown = True
    return grown
