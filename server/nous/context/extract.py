"""The query-relevant extract of a long record (the seeds' second tier, no LLM).

A record's content is split into units (sentences, list items with their lead-in, code blocks
with the sentence that introduces them, table rows with the header: `text.markdown.units`).
The units that share the most IDF weight with the query are kept, in document order, within the
item's share of the budget; a list item brings its lead-in ("Agents MUST NOT:") so a prohibition
never reads as a rule, and the record's heading path leads the line.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection
from dataclasses import dataclass

from nous.context.relevance import Query
from nous.memory import renderings
from nous.text.markdown import ENDS, Unit, units
from nous.text.tokens import TokenCounter

HEADING_SHARE = 0.5
"""A unit also scores this share of what its section's heading shares with the query …"""
FIRST_SHARE = 0.5
"""… and the section's first unit this much more."""

MIN_OVERLAP_SHARE = 0.2
"""A unit joins the extract when it holds at least this share of the best unit's overlap."""


def _render(heading: str, chosen: list[Unit], all_units: tuple[Unit, ...]) -> str:
    parts: list[str] = []
    section = heading.rsplit(" › ", 1)[-1]
    last_index = -2
    last_block = -1
    last_lead = None
    last_kind = ""
    for unit in chosen:
        index = unit.position  # its index in `all_units` (`units`)
        gap = index != last_index + 1
        piece = unit.text.rstrip(" ;") if unit.kind == "item" else unit.text  # no "a;; b"
        going_on = unit.kind == "more" and not gap  # the next sentence of the item just said
        owner = next((u.text for u in reversed(all_units[:index]) if u.kind == "heading"), "")
        owner = owner.rsplit(" › ", 1)[-1]
        if owner and owner != section:
            piece = f"[{owner}] {piece}" if not unit.lead else piece
            section = owner
        said = not gap and index > 0 and all_units[index - 1].text == unit.lead
        if (
            unit.kind in ("item", "code", "row", "more")
            and not going_on
            and unit.lead
            and not said
            and (unit.lead != last_lead or unit.block != last_block)
        ):
            lead = unit.lead if unit.lead.endswith(ENDS) else f"{unit.lead}:"
            piece = f"{lead} {piece}"
        if unit.kind in ("item", "code", "row", "more") and unit.lead:
            last_lead = unit.lead  # said once, by the unit itself or by the text just before
        if parts:
            joiner = " … " if gap and (unit.block != last_block or unit.kind == "more") else (
                "; " if unit.kind in ("item", "row", "more") and unit.block == last_block
                and not going_on else " "
            )  # fmt: skip
            if (
                joiner == " "
                and unit.block != last_block
                and last_kind == "sentence"
                and (not parts[-1].rstrip("*_`) ").endswith((".", "!", "?", ":", ";", ",")))
            ):
                joiner = ": "  # a line that only names a thing, then what is said of it
            parts.append(joiner)
        parts.append(piece)
        last_index, last_block, last_kind = index, unit.block, unit.kind
    body = "".join(parts)
    return f"{heading} — {body}" if heading else body


def _position(unit: Unit) -> int:
    return unit.position


Render = Callable[[str, list[Unit], tuple[Unit, ...]], str]
"""(record heading, chosen units in document order, all units) → the extract's text."""
one_line: Render = _render
"""The default: one line led by the heading path, items joined by "; "."""


@dataclass(frozen=True)
class Wants:
    """What an extract must leave out, say first or say at all, and how it is joined: units
    whose text is in `said` (the item already carries them) are left out; the unit whose text
    is `pinned` (a decision record's "Chosen option: …") is taken first, whatever it shares with
    the query; the units whose text is in `keep` (each merged section's own answer) come next,
    all of them or none. `render` joins the chosen units (one line by default; `rules.lines`
    for an instruction file's rules)."""

    said: frozenset[str] = frozenset()
    pinned: str | None = None
    keep: Collection[str] = ()
    render: Render = _render


def extract(
    content: str, query: Query, limit: int, counter: TokenCounter, wants: Wants = Wants()
) -> str | None:
    """The most query-relevant units of `content` within `limit` tokens, or None when no unit
    shares a word with the query (the summary serves then), or the units `wants` keeps do not
    all fit."""
    chosen = _choose(content, query, limit, counter, wants)
    return chosen[1] if chosen else None


def best_units(
    content: str, query: Query, limit: int, counter: TokenCounter, most: int | None = None
) -> list[str]:
    """The texts of the units `extract` ranks first in `content` alone, within `limit` tokens,
    with what they introduce but not the neighbours it adds to fill its room; when even the
    best unit is longer than `limit`, that unit alone if it is within `most` (a long list item
    is still an answer; a cut unit is none). Empty when no unit shares a word with the query."""
    chosen = _choose(content, query, limit, counter, Wants(), grow=False)
    texts = [u.text for u in chosen[0]] if chosen else []
    size = counter.count(only(content, texts)) if texts else 0
    return texts if texts and size <= max(limit, most or 0) else []


def only(content: str, texts: Collection[str], render: Render | None = None) -> str:
    """`content` rendered with just the units whose text is in `texts` (each said once)."""
    all_units = units(content)
    heading = ""
    if all_units and all_units[0].kind == "heading" and content.lstrip().startswith("# "):
        heading = all_units[0].text
    chosen: list[Unit] = []
    for unit in all_units:
        if unit.kind == "heading" or unit.text not in texts:
            continue
        if unit.kind in ("sentence", "item", "more") and any(c.text == unit.text for c in chosen):
            continue  # said once, as `extract` does
        chosen.append(unit)
    return (render or _render)(heading, chosen, all_units)


def _choose(
    content: str, query: Query, limit: int, counter: TokenCounter, wants: Wants, grow: bool = True
) -> tuple[list[Unit], str] | None:
    said, pinned, keep, render = wants.said, wants.pinned, wants.keep, wants.render
    all_units = units(content)
    heading = ""
    body = list(all_units)
    if body and body[0].kind == "heading" and content.lstrip().startswith("# "):
        heading = body.pop(0).text
    # A unit also counts half of what its section's heading shares with the query; a unit under
    # a later heading (sections merged from one document) says which section it is from.
    # A section's first unit (its topic sentence, often the rule: "Important: do not …") counts
    # it once more.
    under: dict[Unit, str] = {}
    first: set[Unit] = set()
    current = heading.rsplit(" › ", 1)[-1]  # the lead section's own units count its heading too
    opened = True
    for u in all_units[1:] if heading else all_units:
        if u.kind == "heading":
            current = u.text.rsplit(" › ", 1)[-1]
            opened = True
        else:
            under[u] = current
            if opened:
                first.add(u)
            opened = False
    body = [u for u in body if u.kind != "heading" and u.text not in said]
    # a unit's position is its index in `all_units` (`units`): order and membership by it
    in_body = {u.position for u in body}
    scored = [(query.overlap(f"{u.lead} {u.text}" if u.kind != "sentence" else u.text)
               + (HEADING_SHARE + FIRST_SHARE * (u in first)) * query.overlap(under.get(u, "")), u)
              for u in body]  # fmt: skip
    best = max((s for s, _ in scored), default=0.0)
    if best <= 0 and not keep:
        return None
    ranked = sorted(
        (pair for pair in scored
         if pair[0] >= best * MIN_OVERLAP_SHARE or pair[1].text == pinned or pair[1].text in keep),
        key=lambda pair: (pair[1].text != pinned, pair[1].text not in keep, -pair[0]),
    )  # fmt: skip
    chosen: list[Unit] = []
    text = ""
    for _, unit in ranked:
        if unit.kind in ("sentence", "item", "more") and any(
            c.text == unit.text and c.kind == unit.kind for c in chosen
        ):
            continue  # one sentence in two merged sections is said once
        trial = sorted([*chosen, unit], key=_position)
        candidate = render(heading, trial, all_units)
        if counter.count(candidate) <= limit:
            chosen, text = trial, candidate
        elif unit.text in keep:
            return None  # the answers to keep do not all fit: the caller decides
    if not chosen and not ranked:
        return None
    if not chosen:  # even the best unit alone is too long: fit it, cut at a sentence if we can
        unit = ranked[0][1]
        if render is not _render:  # lines: the last one is cut
            *above, last = render(heading, [unit], all_units).split("\n")
            room = limit - (counter.count("\n".join(above)) + 1 if above else 0)
            if room < 8:
                return None
            return [unit], "\n".join([*above, renderings.fit(last, room, counter)])
        room = limit - counter.count(f"{heading} — ") if heading else limit
        if room < 8:
            return None
        lead = f"{unit.lead} " if unit.lead and unit.kind != "sentence" else ""
        body_text = renderings.fit(f"{lead}{unit.text}", room, counter)
        return [unit], f"{heading} — {body_text}" if heading else body_text
    # What a chosen unit introduces ("… run:" then the command) comes with it when it fits.
    for unit in chosen.copy():
        index = unit.position
        follow = all_units[index + 1] if index + 1 < len(all_units) else None
        introduces = unit.text.rstrip().endswith(":") or (
            follow is not None and follow.lead == unit.text
        )
        if (follow is not None and follow.position in in_body
                and all(c is not follow for c in chosen) and introduces):  # fmt: skip
            trial = sorted([*chosen, follow], key=_position)
            candidate = render(heading, trial, all_units)
            if counter.count(candidate) <= limit:
                chosen, text = trial, candidate

    if not grow:
        return chosen, text

    # Room left: first what lies between chosen units of one block, then what follows a chosen
    # unit (an answer comes after the sentence that matches the question), then what precedes.
    def grow_to(near: int) -> None:
        nonlocal chosen, text
        unit = all_units[near] if 0 <= near < len(all_units) else None
        if unit is None or near not in in_body or any(c is unit for c in chosen):
            return
        trial = sorted([*chosen, unit], key=_position)
        candidate = render(heading, trial, all_units)
        if counter.count(candidate) <= limit:
            chosen, text = trial, candidate

    indexes = [u.position for u in chosen]
    for a, b in itertools.pairwise(indexes):
        if all_units[a].block == all_units[b].block:
            for near in range(a + 1, b):
                grow_to(near)
    for step in (1, 2, 3, -1):
        for unit in chosen.copy():
            index = unit.position
            if 0 <= index + step < len(all_units) and all_units[index + step].block == unit.block:
                grow_to(index + step)
    return chosen, text
