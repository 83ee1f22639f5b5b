"""How the rules of the workspace's own instruction files read in a context: one rule a line.

A harvested rule block (`workspace.harvest.instructions`: a section of AGENTS.md, CLAUDE.md, …)
holds lists under a lead-in ("Agents MUST NOT:" then the prohibitions), sentences and commands.
Flattened into one line they ran together ("Agents MUST NOT: a; b; c Run `make test` …"); here
each list item is its own line led by its lead-in, shortened to the modal phrase where it is one
("MUST NOT: commit secrets or .env files"), a paragraph is one line and a code block one line with
the sentence that introduces it. The lines are joined by newlines; `render.item_line` makes each
of them a `- ` line (so a fenced layer keeps one list item a line, design §2.8).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nous.memory import renderings
from nous.memory.model import Memory
from nous.text import markdown
from nous.text.markdown import Unit
from nous.text.tokens import TokenCounter

TAG = "instructions"
"""The tag the harvest puts on every record of an instruction file."""

LONG_LEAD_WORDS = 8
"""A lead-in of more words than this is said once, on its own line, before its items (repeated
before each item it would cost more than the rules)."""

_RFC = r"MUST(?: NOT)?|SHALL(?: NOT)?|SHOULD(?: NOT)?|MAY(?: NOT)?|NEVER|ALWAYS|DO NOT|CANNOT"
_MODAL = r"(?:must|shall|should)(?:\s+(?:not|never|always|only))?|mustn['’]t|shouldn['’]t|never"
_READER = (
    r"(?:all\s+)?(?:the\s+)?(?:ai\s+)?(?:coding\s+)?(?:agents?|assistants?|llms?)|you|we"
    r"|contributors|developers|claude|copilot"
)
"""Who an instruction file addresses: the reader of the context, so the lead-in can drop it."""
_MODAL_LEAD = re.compile(
    rf"^(?i:{_READER})\s+((?:(?-i:{_RFC})|(?i:{_MODAL}))(?:\s+[\w`'’/-]+){{0,3}}):$"
)  # "Agents MUST NOT:", "AI agents should never:", "Agents MUST use:"; not "Options MUST NOT:"


def is_rule(memory: Memory) -> bool:
    """A record harvested from the workspace's instruction files."""
    return TAG in memory.tags


def lead_in(lead: str) -> str:
    """A list's lead-in as it leads each rule: its modal phrase when it tells the reader (the
    agent) what it must do ("Agents MUST NOT:" → "MUST NOT:", "Agents MUST use:" → "MUST use:"),
    else the lead-in itself ("Options MUST NOT:" keeps its subject), ending with a colon."""
    lead = lead.strip()
    found = _MODAL_LEAD.match(lead)
    if found:
        return f"{found.group(1)}:"
    return lead if lead.endswith(markdown.ENDS) else f"{lead}:"


def _rule(text: str) -> str:
    """An item as one rule: without the ';' or ',' that chained it to the next in the file."""
    return text.rstrip().rstrip(";,").rstrip()


def lines(heading: str, chosen: Sequence[Unit], all_units: tuple[Unit, ...]) -> str:
    """The `chosen` units of a record (in document order) as rule lines joined by newlines.

    The record's own section is named once ("[Testing] …") when it is a subsection, and so is
    every further section merged into the item; a document's top section is not (the layer's
    heading already says the rules come from the instruction files)."""
    section = heading.rsplit(" › ", 1)[-1] if " › " in heading else ""
    named: str | None = None
    out: list[str] = []
    last_index, last_block = -2, -1
    said_leads: set[tuple[int, str]] = set()
    last_text = ""
    for unit in chosen:
        index = all_units.index(unit)
        owner = next((u.text for u in reversed(all_units[:index]) if u.kind == "heading"), "")
        name = section if not owner or owner == heading else owner.rsplit(" › ", 1)[-1]
        tag = f"[{name}] " if name and name != named else ""
        named = name
        adjacent = index == last_index + 1
        said = adjacent and last_text == unit.lead  # "- Verify coverage:" then its command
        text = _rule(unit.text) if unit.kind == "item" else unit.text
        if unit.kind == "more" and not adjacent:
            text = f"… {text}"  # a later sentence of a long rule, said without the ones before
        if (
            out
            and not tag
            and unit.block == last_block
            and (unit.kind in ("sentence", "code") or (unit.kind == "more" and adjacent))
        ):
            out[-1] += (" " if adjacent else " … ") + text  # one paragraph, one code block
        elif out and not tag and said:
            out[-1] += f" {text}"
        elif unit.kind in ("item", "more") and unit.lead:
            lead = lead_in(unit.lead)
            if len(lead.split()) <= LONG_LEAD_WORDS:
                out.append(f"{tag}{lead} {text}")
            else:
                if (unit.block, unit.lead) not in said_leads:
                    out.append(f"{tag}{lead}")
                    tag = ""
                out.append(f"{tag}{text}")
            said_leads.add((unit.block, unit.lead))
        elif unit.kind == "row" and unit.lead and (paired := _paired(unit.lead, text)):
            out.append(f"{tag}{paired}")  # "Don't: Call `println`; Why: use the logger"
        elif unit.kind == "row" and unit.lead:
            if (unit.block, unit.lead) not in said_leads:
                out.append(f"{tag}{unit.lead}")
                tag = ""
            said_leads.add((unit.block, unit.lead))
            out.append(f"{tag}{text}")
        elif unit.kind == "code" and unit.lead:
            lead = unit.lead if unit.lead.endswith(markdown.ENDS) else f"{unit.lead}:"
            out.append(f"{tag}{lead} {text}")
        else:
            out.append(f"{tag}{text}")
        last_index, last_block, last_text = index, unit.block, unit.text
    return "\n".join(out)


def _paired(header: str, row: str) -> str | None:
    """A table row as one rule, each cell led by its column's header ("Don't: Change a
    published Flyway migration; Why: checksums fail"): a row under a header line of its own
    read as "Don't | Why" then "Change a published … | checksums fail". None when the row's
    cells do not match the header's."""
    heads, cells = header.split(markdown.CELLS), row.split(markdown.CELLS)
    if len(heads) < 2 or len(heads) != len(cells):
        return None
    return "; ".join(f"{h}: {c}" if h.strip() else c for h, c in zip(heads, cells, strict=True)
                     if c.strip())  # fmt: skip


def summary(
    heading: str, all_units: tuple[Unit, ...], limit: int, counter: TokenCounter
) -> str | None:
    """The record's first rules, in document order, within `limit` tokens, the last one cut to
    fill what is left, as the write-time summary is (None when not even the first rule can be
    cut to fit: the write-time summary serves then)."""
    body = [u for u in all_units if u.kind != "heading"]
    text = ""
    for n in range(1, len(body) + 1):
        candidate = lines(heading, body[:n], all_units)
        if counter.count(candidate) <= limit:
            text = candidate
            continue
        *above, last = candidate.split("\n")
        kept = "\n".join(above)
        room = limit - (counter.count(kept) + 1 if kept else 0)
        if room >= 8:
            cut = "\n".join([*above, renderings.fit(last, room, counter)])
            text = cut if counter.count(cut) <= limit else text
        break
    return text or None
