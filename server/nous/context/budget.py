"""Layered allocation (design §2.7) under a hard ceiling.

Items arrive best first. Pass 1 fills each bucket up to its cap (summary if it fits, else micro);
pass 2 lets unused budget flow to the deferred items in frame-priority order; a final exact count
of the rendered document removes the lowest-scored items until it fits. Buckets are layers in
turn mode and scope tiers / note tags in startup mode; rendering always groups by layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from nous.context import rules
from nous.context.render import FENCE, Block, document, fence_open, item_line
from nous.context.score import Scored
from nous.text.tokens import TokenCounter


@dataclass
class Placed:
    scored: Scored
    layer: str
    bucket: str
    detail: str
    line: str
    tokens: int
    cost: int = 0
    """What it took of its bucket (its line, the newline, the heading and fence it opened)."""
    first: bool = True
    """Placed within its bucket's cap (pass 1), not by the budget that flowed (pass 2)."""


@dataclass
class Allocation:
    text: str
    tokens: int
    placed: list[Placed] = field(default_factory=list)
    over_budget: list[Scored] = field(default_factory=list)
    bucket_used: dict[str, int] = field(default_factory=dict)
    caps: dict[str, int] = field(default_factory=dict)
    """The cap each layer actually had (`section_caps`)."""


def scale(caps: dict[str, int], total: int) -> dict[str, int]:
    """Caps scaled proportionally so they sum to `total`."""
    whole = sum(caps.values()) or 1
    return {name: cap * total // whole for name, cap in caps.items()}


@dataclass
class Layout:
    """Where a request's items may go: the layers (`blocks`) and the kinds each lists, the
    buckets' caps and the bucket of an item in a layer, the order unused budget flows to the
    layers in (pass 2), and the hard ceiling."""

    blocks: list[Block]
    layer_kinds: dict[str, list[str]]
    caps: dict[str, int]
    bucket_of: Callable[[Scored, str], str]
    flow_order: list[str]
    total: int
    micro_first: bool = False
    """Try an item's one-liner first (a profile that compresses hard)."""
    best_first: bool = False
    """Pass 2 places the deferred items best first, not by the layers' flow order."""


def allocate(
    items: list[tuple[Scored, str]],
    layout: Layout,
    counter: TokenCounter,
    choices: Callable[[Scored], list[tuple[str, str]]] | None = None,
    capped: frozenset[str] = frozenset(),
) -> Allocation:
    """Place (scored, layer) items into the layout's blocks within its total tokens of rendered
    text. An item whose id is `capped` goes in only within its bucket's cap (it is in by its
    layer, not by relevance: spare budget does not flow to it)."""
    blocks, layer_kinds, caps = layout.blocks, layout.layer_kinds, layout.caps
    bucket_of, flow_order, total = layout.bucket_of, layout.flow_order, layout.total
    micro_first, best_first = layout.micro_first, layout.best_first
    by_name = {b.name: b for b in blocks}
    fixed_text = document(blocks)
    used = counter.count(fixed_text) if fixed_text else 0
    while used > total and any(b.fixed for b in blocks):
        # Too small even for the fixed parts: drop them, least important (last) first.
        next(b for b in reversed(blocks) if b.fixed).fixed = ""
        fixed_text = document(blocks)
        used = counter.count(fixed_text) if fixed_text else 0
    heading_cost = {b.name: counter.count(f"## {b.title}\n") + 1 for b in blocks}
    fence_cost = counter.count(f"{fence_open()}\n") + counter.count(f"\n{FENCE}") + 1
    bucket_used: dict[str, int] = {}
    placed: list[Placed] = []
    deferred: list[tuple[Scored, str]] = []

    def cost_of(layer: str, line: str) -> int:
        block = by_name[layer]
        opening = 0 if (block.lines or block.fixed) else heading_cost[layer]
        if not block.lines and block.fenced:  # the first memory of a layer opens its fence
            opening += fence_cost
        return counter.count(line) + 1 + opening

    def try_place(scored: Scored, layer: str, cap_check: bool, micro: bool = False) -> bool:
        nonlocal used
        bucket = bucket_of(scored, layer)
        memory = scored.memory
        details = (
            choices(scored) if choices else [("summary", memory.summary), ("micro", memory.micro)]
        )
        if micro_first:
            details = [d for d in details if d[0] == "micro"] + [
                d for d in details if d[0] != "micro"
            ]
        for detail, text in details:
            if cap_check and not micro and detail == "micro" and len(details) > 1:
                continue  # a one-liner only when nothing richer fits what is left in the end
            line = item_line(memory.kind, text, layer_kinds.get(layer, []), rules.is_rule(memory))
            cost = cost_of(layer, line)
            within_cap = bucket_used.get(bucket, 0) + cost <= caps.get(bucket, 0)
            if used + cost <= total and (within_cap or not cap_check):
                by_name[layer].lines.append(line)
                bucket_used[bucket] = bucket_used.get(bucket, 0) + cost
                used += cost
                placed.append(Placed(scored, layer, bucket, detail, line, counter.count(line),
                                     cost, cap_check))  # fmt: skip
                return True
        return False

    for scored, layer in items:
        if not try_place(scored, layer, cap_check=True):
            deferred.append((scored, layer))
    rank = {name: i for i, name in enumerate(flow_order)}
    deferred.sort(key=lambda pair: (-pair[0].score if best_first else rank.get(pair[1], len(rank)),
                                    -pair[0].score))  # fmt: skip
    over: list[Scored] = []
    for scored, layer in deferred:
        if scored.memory.id in capped:  # in by its layer: within the cap, as a one-liner if need be
            placed_here = try_place(scored, layer, cap_check=True, micro=True)
        else:
            placed_here = try_place(scored, layer, cap_check=False)
        if not placed_here:
            over.append(scored)

    text = document(blocks)
    tokens = counter.count(text) if text else 0
    while tokens > total and placed:
        worst = min(placed, key=lambda p: p.scored.score)
        placed.remove(worst)
        by_name[worst.layer].lines.remove(worst.line)
        bucket_used[worst.bucket] -= worst.tokens
        over.append(worst.scored)
        text = document(blocks)
        tokens = counter.count(text) if text else 0
    if tokens > total:  # only fixed text left and still too long: cut it hard
        text = counter.truncate(text, total)
        tokens = counter.count(text)
        while tokens > total:
            text = text[:-1]
            tokens = counter.count(text)
    layer_caps = section_caps(blocks, placed, caps, total, counter)
    return Allocation(text, tokens, placed, over, bucket_used, layer_caps)


def section_caps(
    blocks: list[Block], placed: list[Placed], caps: dict[str, int], total: int,
    counter: TokenCounter,
) -> dict[str, int]:  # fmt: skip
    """The cap each layer actually had, so that its used ≤ cap: the caps of the buckets its
    items drew on in pass 1 (in turn and recall a layer is its own bucket and has its cap even
    when empty; at startup the buckets are scope tiers and note tags, and a tier that items of
    two layers drew on counts in both), plus what it holds beyond them: its fixed text and
    heading, which go in before any cap, and the unused budget that flowed to it in pass 2.
    Never more than the total."""
    out: dict[str, int] = {}
    for block in blocks:
        mine = [p for p in placed if p.layer == block.name and p.first]
        drawn = {p.bucket for p in mine} | ({block.name} & caps.keys())
        rendered = block.render()
        used = counter.count(rendered) if rendered else 0
        beyond = max(0, used - sum(p.cost for p in mine))
        out[block.name] = min(total, sum(caps[b] for b in drawn if b in caps) + beyond)
    return out
