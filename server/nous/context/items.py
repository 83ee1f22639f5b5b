"""What each admitted item becomes before allocation: the drops that keep an answer lean
(a superseded memory whose successor is in, a short paraphrase of another admitted memory's
sentence, further sections of a document already in a recall) and the renderings an item may
take (whole, query-relevant extract, summary, micro). Every drop goes through `Work` with a
reason, so nothing is excluded silently."""

from __future__ import annotations

from dataclasses import dataclass, field

from nous.context import extract, relevance, rules
from nous.context.score import Scored
from nous.memory import renderings
from nous.memory.interface import Store
from nous.memory.model import Memory
from nous.protocol import Dropped
from nous.text.markdown import units


@dataclass
class Work:
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def dropped_ids(self) -> set[str]:
        return {d.id for d in self.dropped}

    def undrop(self, memory_id: str) -> None:
        """An item dropped (merged into another) is its own again."""
        self.dropped = [d for d in self.dropped if d.id != memory_id]

    def drop(self, s: Scored, reason: str, detail: str = "") -> None:
        self.dropped.append(
            Dropped(id=s.memory.id, kind=s.memory.kind, reason=reason,
                    score=round(s.score, 4), detail=detail)
        )  # fmt: skip


def supersession(kept: list[Scored], work: Work) -> list[Scored]:
    """A superseded memory whose successor is in the answer is left out (design §2.8)."""
    ids = {c.memory.id for c in kept}
    out = []
    for c in kept:
        successor = c.memory.superseded_by
        if c.memory.status == "superseded" and successor and successor in ids:
            work.drop(c, "duplicate", f"superseded by {successor}, which is included")
            continue
        out.append(c)
    return out


def paraphrases(kept: list[Scored], work: Work, containment: float) -> list[Scored]:
    """A short memory that one sentence or item of another admitted memory already says (an
    AGENTS.md rule and the same rule remembered in chat; one sentence repeated by templated
    ADRs) takes no slot of its own: the memory that holds it stays (design §2.6)."""

    def unit_stems(memory: Memory) -> list[frozenset[str]]:
        found = units(memory.content)
        return [relevance.stems(f"{u.lead} {u.text}") for u in found if u.kind != "heading"]

    pieces = {c.memory.id: unit_stems(c.memory) for c in kept}
    files = {c.memory.id: (c.memory.source or "").split("#")[0] for c in kept}
    out = []
    for c in kept:
        own = pieces[c.memory.id]
        words = frozenset().union(*own) if own else frozenset()
        holder = None
        harvested = (c.memory.source or "").startswith("file:")
        if 3 <= len(words) <= 30 and len(own) <= 2:
            dropped = work.dropped_ids  # nothing is dropped while `c` is compared
            for other in kept:
                if other is c or other.memory.id in dropped:
                    continue
                same_file = files[other.memory.id] == files[c.memory.id]
                templated = "adr" in c.memory.tags and "adr" in other.memory.tags and not same_file
                if harvested and not templated:
                    continue  # a document's own sections are not paraphrases of each other
                theirs = pieces[other.memory.id]
                if len(theirs) > len(own) and any(
                    len(u) >= 4 and len(words & u) >= max(3, containment * min(len(words), len(u)))
                    for u in theirs
                ):
                    holder = other
                    break
        if holder is None:
            out.append(c)
        else:
            work.drop(c, "duplicate", f"paraphrase of {holder.memory.id}")
    return out


def sources(lead: Scored, merged: dict[str, list[Scored]]) -> list[str]:
    others = merged.get(lead.memory.id, [])
    return [lead.memory.source, *(m.memory.source for m in others)] if others else []


def document_of(memory: Memory) -> str | None:
    """The harvested file a memory is a section of (None for anything else)."""
    source = memory.source or ""
    return source.split("#", 1)[0] if source.startswith("file:") else None


def merge_documents(kept: list[Scored], work: Work) -> tuple[list[Scored], dict[str, list[Scored]]]:
    """Admitted sections of one harvested document become one item (its best section leads; the
    extract draws on all of them), so a document does not spend its heading path and the budget
    several times over. Returns (items, {lead id: the sections merged into it})."""
    leads: dict[str, Scored] = {}
    merged: dict[str, list[Scored]] = {}
    out: list[Scored] = []
    for c in kept:
        document = document_of(c.memory)
        lead = leads.get(document) if document else None
        if lead is None or "superseded" in (lead.memory.status, c.memory.status):
            if document:
                leads[document] = c
            out.append(c)
            continue
        merged.setdefault(lead.memory.id, []).append(c)
        work.drop(c, "duplicate", f"merged into {lead.memory.id} (same document)")
    return out, merged


SHORT_DOCUMENT_SECTIONS = 6
"""A document of more sections than this is never completed, however short."""


def complete_short_documents(
    store: Store, kept: list[Scored], merged: dict[str, list[Scored]], limit: int
) -> dict[str, int]:
    """A short harvested document whose section was admitted comes whole: its other sections
    join the item (rendered whole when it fits the item's share, else the extract draws on
    them). "Increase square size" answers in its last three-line section, which shares no word
    with "bigger blocks than the max square size allows" and stays below the sibling floor.
    Returns {lead id: the document's tokens} for the documents completed."""
    completed: dict[str, int] = {}
    for lead in kept:
        document = document_of(lead.memory)
        if document is None or lead.memory.status == "superseded":
            continue
        rows = store.sources.live_from_source(f"{document}#", lead.memory.scope)
        if len(rows) > SHORT_DOCUMENT_SECTIONS:
            continue
        group = [lead.memory, *(m.memory for m in merged.get(lead.memory.id, []))]
        have = {m.id for m in group}
        missing = [i for i, _kind, status in rows if i not in have and status != "superseded"]
        if not missing:
            continue
        rows_of = store.get_many(missing)
        found = [rows_of[i] for i in missing if i in rows_of]  # in the document's source order
        size = sum(store.counter.count(m.content) for m in [*group, *found])
        if size <= limit:
            merged.setdefault(lead.memory.id, []).extend(
                Scored(m, 0.0, {"relevance": 0.0}) for m in found
            )
            completed[lead.memory.id] = size
    return completed


def with_decisions(store: Store, kept: list[Scored], merged: dict[str, list[Scored]]) -> None:
    """A decision record's section admitted without its main record (title, status, decision)
    brings it along, for its decision (`_decision`) to be said: "could we ship spans to Datadog
    APM?" matched a rejected RFC's "In scope" section, and only its main record says the team
    decided not to, and why."""
    present = {c.memory.id for c in kept} | {m.memory.id for ms in merged.values() for m in ms}
    wanted: list[tuple[Memory, str]] = []  # (an admitted section, its main record's id)
    for lead in kept:
        memory = lead.memory
        document = document_of(memory)
        if document is None or "adr-section" not in memory.tags:
            continue
        number = next((t for t in memory.tags if t.startswith("adr-") and t != "adr-section"),
                      "adr-0")  # fmt: skip
        found = store.sources.id_of_source(f"{document}#{number}", memory.scope)
        if found:
            wanted.append((memory, found))
    mains = store.get_many([found for _, found in wanted]) if wanted else {}
    for memory, found in wanted:
        main = mains.get(found)
        if main is None or main.id in present or main.status == "inactive" or not _is_main(main):
            continue  # an item already says it (its own, or merged into one)
        merged.setdefault(memory.id, []).append(Scored(main, 0.0, {"relevance": 0.0}))
        present.add(main.id)


def successor_names(store: Store, kept: list[Scored]) -> dict[str, str]:
    """{superseded memory id: its successor's one-line rendering}."""
    wanted = {c.memory.id: c.memory.superseded_by for c in kept if c.memory.superseded_by}
    if not wanted:
        return {}
    found = store.get_many([i for i in wanted.values() if i])
    return {old: found[new].micro for old, new in wanted.items() if new in found}


SHORT_SECTION_TOKENS = 120
"""An admitted sibling section this short is said whole in a merged item: "Use build tags — …
most packages are meant to be imported … discarded, as the usage would have been too
difficult" answers "couldn't we just use build tags?" in sentences that share no word with it.
Chosen leave-one-repository-out over 0, 40, 80, 120 and 200 on the tune split (recall and turn
strict hits): five folds of six chose 120 (docs/benchmarks.md)."""
ANSWER_TOKENS = 40
"""What one section's own answer in a merged item may take (`extract.best_units` over that
section alone): a sentence or two, a rule with its lead-in, a command with its sentence (a
longer unit up to twice this). On the nine development repositories 60 lost more strict hits
in recall than 40: larger answers crowd out the next item."""


class Renderings:
    """The renderings an item may take, best first: its whole text when it fits the item's
    share, else the extract most relevant to the input (design §2.7's second tier), then the
    write-time summary and micro. A superseded memory says so, with its successor. An item of
    several sections of one document (`merge_documents`) keeps each admitted section's own
    answer (`answers`), its best section first of all: when no section passed the gate but the
    best (a censor's document: the most relevant rule's section leads), that section's answer
    is still said before what its siblings share with the question; an instruction file's rules
    read one rule a line (`context.rules`)."""

    def __init__(
        self, store: Store, query: relevance.Query | None, shares: dict[str, int],
        successors: dict[str, str], merged: dict[str, list[Scored]] | None = None,
        admitted: float | None = None,
    ) -> None:  # fmt: skip
        self.counter = store.counter
        self.query = query
        self.shares = shares
        self.successors = successors
        self.merged = merged if merged is not None else {}
        self.admitted = admitted
        """A merged section whose relevance reaches this passed the gate on its own (the mode's
        floor) and keeps its own answer; None: none does (the best section whole, then the
        extract of the others, `_lead_then_rest`)."""
        self._cache: dict[str, list[tuple[str, str]]] = {}
        self._best: dict[str, list[str]] = {}

    def of(self, scored: Scored) -> list[tuple[str, str]]:
        memory = scored.memory
        cached = self._cache.get(memory.id)
        if cached is not None:
            return cached
        share = self.shares.get(memory.id, 100)
        label = f"{renderings.label(memory.kind)}: "
        options: list[tuple[str, str]] = []
        content = self._content(scored)
        rule = rules.is_rule(memory)
        whole = _whole(content, rule)
        if self.counter.count(whole) <= share:
            if rule or self.counter.count(whole) > self.counter.count(memory.summary):
                options.append(("content", label + whole))
        elif self.query is not None:
            said = _decision(memory, *(m.memory for m in self.merged.get(memory.id, [])))
            text = self._merged(scored, share - self.counter.count(label))
            text = text or self._extract(scored, content, share, *_pin(said))
            if text:
                options.append(("extract", label + text))
        if rule:  # the first rules, one a line, within a summary's size
            found = units(content)
            heading = found[0].text if found and content.startswith("# ") else ""
            first = rules.summary(heading, found, renderings.SUMMARY_TOKENS -
                                  self.counter.count(label), self.counter)  # fmt: skip
            options.append(("summary", label + first if first else memory.summary))
        else:
            options.append(("summary", memory.summary))
        micro = None
        if rule:  # the rule the input is nearest, one line, not the first rules run together
            room = renderings.MICRO_TOKENS - self.counter.count(label)
            micro = self._extract(scored, memory.content, room) if self.query else None
            micro = micro or rules.summary(heading, found, room, self.counter)
        options.append(("micro", label + micro if micro else memory.micro))
        if memory.status == "superseded":
            mark = (
                f"(superseded by: {self.successors[memory.id]}) "
                if memory.id in self.successors
                else "(superseded) "
            )
            options = [(d, t.replace(label, label + mark, 1) if t.startswith(label) else mark + t)
                       for d, t in options]  # fmt: skip
        self._cache[memory.id] = options
        return options

    def _content(self, scored: Scored, decision_first: bool = False) -> str:
        others = self.merged.get(scored.memory.id, [])
        if decision_first:  # an ADR's decision record merged in goes first
            others = sorted(others, key=lambda m: not _is_main(m.memory))
        return "\n\n".join([scored.memory.content, *(m.memory.content for m in others)])

    def _extract(
        self, scored: Scored, content: str, limit: int, pinned: str | None = None,
        keep: frozenset[str] = frozenset(),
    ) -> str | None:  # fmt: skip
        if self.query is None:
            return None
        render = rules.lines if rules.is_rule(scored.memory) else extract.one_line
        wants = extract.Wants(pinned=pinned, keep=keep, render=render)
        return extract.extract(content, self.query, limit, self.counter, wants)

    def admitted_siblings(self, scored: Scored) -> list[Scored]:
        """The sections merged into `scored` that passed the gate themselves, best first (a
        short document's further sections, `complete_short_documents`, did not)."""
        if self.admitted is None:
            return []
        found = [m for m in self.merged.get(scored.memory.id, [])
                 if m.terms.get("relevance", 0.0) >= self.admitted]  # fmt: skip
        return sorted(found, key=lambda m: -m.terms.get("relevance", 0.0))

    def answers(self, scored: Scored) -> list[str]:
        """The units a merged item must say: the lead section's and each admitted sibling's own
        best units (the extract over that section alone, ranked by the query), so a sibling
        that answers the question is not crowded out by one that only repeats its words."""
        if self.query is None:
            return []
        out: list[str] = []
        for section in [scored, *self.admitted_siblings(scored)]:
            memory = section.memory
            best = self._best.get(memory.id)
            if best is None:
                first, _, _ = memory.content.partition("\n")
                heading = self.counter.count(first) if first.startswith("# ") else 0
                body = [u.text for u in units(memory.content) if u.kind != "heading"]
                if (
                    section is not scored
                    and self.counter.count(extract.only(memory.content, body))
                    <= SHORT_SECTION_TOKENS + heading
                ):
                    best = body  # a short section is its own answer: its reasons too
                else:
                    best = extract.best_units(memory.content, self.query,
                                              ANSWER_TOKENS + heading, self.counter,
                                              2 * ANSWER_TOKENS + heading)  # fmt: skip
                self._best[memory.id] = best
            out += [text for text in best if text not in out]
        return out

    def answer_cost(self, scored: Scored, whole_lead: bool = False) -> int:
        """The tokens of a merged item that says just its `answers` (and an ADR's decision),
        with its best section whole when `whole_lead`."""
        memory = scored.memory
        keep = [*_decision(memory, *(m.memory for m in self.merged.get(memory.id, []))),
                *self.answers(scored)]  # fmt: skip
        if whole_lead:
            keep += [u.text for u in units(memory.content) if u.kind != "heading"]
        render = rules.lines if rules.is_rule(memory) else None
        text = extract.only(self._content(scored, decision_first=True), keep, render)
        return self.counter.count(f"{renderings.label(memory.kind)}: ") + self.counter.count(text)

    def lead_cost(self, scored: Scored) -> int:
        """The tokens of an item's best section whole."""
        label = f"{renderings.label(scored.memory.kind)}: "
        whole = _whole(scored.memory.content, rules.is_rule(scored.memory))
        return self.counter.count(label) + self.counter.count(whole) + 2

    def forget(self, memory_id: str) -> None:
        """Drop what was worked out for an item whose sections changed."""
        self._cache.pop(memory_id, None)

    def _merged(self, scored: Scored, room: int) -> str | None:
        """A merged item within `room`: its best section whole when that fits beside the other
        sections' answers, else every admitted section's answer (the best section's alone when
        no other passed the gate); then, in what is left, the document's other most relevant
        units. An ADR's decision ("Chosen option: …") is said
        whatever the question's words: "why X?" is answered by the decision."""
        if not self.merged.get(scored.memory.id) or self.query is None:
            return None
        others = self.merged[scored.memory.id]
        said = _decision(scored.memory, *(m.memory for m in others))  # the lead's own too
        pinned = said[0] if said else None
        content = self._content(scored, decision_first=True)
        must = list(said)
        answers = self.answers(scored)  # the best section's, and each admitted sibling's
        if not self.admitted_siblings(scored):  # the best section whole, else its answer first
            whole = self._lead_then_rest(scored, room)
            return whole or self._extract(scored, content, room, pinned, frozenset(must + answers))
        lead = [u.text for u in units(scored.memory.content) if u.kind != "heading"]
        for keep in (must + lead + answers, must + answers):
            text = self._extract(scored, content, room, pinned, frozenset(keep))
            if text:
                return text
        return None

    def _lead_then_rest(self, scored: Scored, share: int) -> str | None:
        """A document's best section whole when it fits, then the extract of its other admitted
        sections in what is left: the section that passed the gate first is never crowded out
        by siblings that only repeat the question's words."""
        others = self.merged.get(scored.memory.id)
        if not others or self.query is None:
            return None
        rule = rules.is_rule(scored.memory)  # one rule a line (`rules.lines`), then the others'
        lead = _whole(scored.memory.content, rule)
        room = share - self.counter.count(lead) - 2
        if room < 0:
            return None
        # A decision record merged in (an ADR's "Chosen option: …") goes first and says its
        # decision whatever the question's words: "why X?" is answered by the decision.
        others = sorted(others, key=lambda m: not _is_main(m.memory))
        said = _decision(*(m.memory for m in others))
        if said and room < self.counter.count(" ".join(said)) + 20:
            return None  # the whole lead section would crowd the decision out: extract from all
        rest = "\n\n".join(m.memory.content for m in others)
        said_here = frozenset(u.text for u in units(scored.memory.content))
        render = rules.lines if rule else extract.one_line
        extra = (
            extract.extract(
                rest,
                self.query,
                room,
                self.counter,
                extract.Wants(said_here, *_pin(said), render=render),
            )
            if room >= 40
            else None
        )
        if not extra:
            return lead
        if rule:
            return f"{lead}\n{extra}"
        first, _, _ = rest.partition("\n")
        if first.startswith("# ") and extra.startswith(f"{first[2:].strip()} — "):
            section = first[2:].strip()
            extra = f"[{section.rsplit(' › ', 1)[-1]}] {extra[len(section) + 3 :]}"
        return f"{lead} … {extra}"


def keep_answers(
    renderings: Renderings, candidates: list[Scored], work: Work, most: int, total: int,
    least: int,
) -> list[Scored]:  # fmt: skip
    """Each admitted section merged into an item keeps its own answer (`Renderings.answers`):
    when the item's share cannot hold them all, the share grows to what they need (its best
    section whole beside them when it came whole before), up to `most` and to what the items
    ranked before it leave of the `total`; failing that, the least relevant admitted section
    leaves the item and is its own again (with its own answer's share, at least `least`), until
    the rest fit. Returns the items, a section that left placed after its document's item."""
    out = list(candidates)
    claimed = 0
    for lead in candidates:
        siblings = renderings.admitted_siblings(lead)
        lead_id = lead.memory.id
        bound = max(renderings.shares.get(lead_id, 100), min(most, total - claimed))
        while siblings:
            share = renderings.shares.get(lead_id, 100)
            whole = renderings.answer_cost(lead, whole_lead=True)
            need = renderings.answer_cost(lead)
            fits = renderings.lead_cost(lead) <= share  # the best section came whole before …
            if whole <= share:
                break
            if fits and whole <= bound:  # … and still does, beside every section's answer
                renderings.shares[lead_id] = whole
                break
            if need <= share:
                break
            if need <= bound:
                renderings.shares[lead_id] = need
                break
            split = siblings.pop()
            renderings.merged[lead_id].remove(split)
            if not renderings.merged[lead_id]:
                del renderings.merged[lead_id]
            work.undrop(split.memory.id)
            own = max(least, renderings.answer_cost(split))  # its own answer, at the least
            renderings.shares[split.memory.id] = own
            claimed += own
            at = out.index(lead) + 1
            while at < len(out) and out[at].score >= split.score:
                at += 1
            out.insert(at, split)
        renderings.forget(lead_id)
        claimed += renderings.shares.get(lead_id, 100)
    return out


def _whole(content: str, rule: bool) -> str:
    """A record's whole text: one line led by its heading path, or its rules one a line."""
    if rule:
        found = units(content)
        heading = found[0].text if found and content.startswith("# ") else ""
        return rules.lines(heading, [u for u in found if u.kind != "heading"], found)
    heading, body = renderings.flat(content)
    return f"{heading} — {body}" if heading else body


def _pin(said: tuple[str, ...]) -> tuple[str | None, frozenset[str]]:
    """A decision statement (`_decision`) as an extract's pinned unit and the units kept with it."""
    return (said[0] if said else None), frozenset(said[1:])


def _is_main(memory: Memory) -> bool:
    """An ADR's main record (title, status, decision), not one of its sections."""
    return memory.kind == "decision" and "adr" in memory.tags and "adr-section" not in memory.tags


NAMED_ONLY_WORDS = 16
"""A decision's first unit that is no sentence (no full stop) and this short only names the
option chosen ("Buffer Logs in Memory and Write Them Once the Primary Logger Exists", a link
under "Accepted Solution"): the sentence after it says why, and comes with it (`_decision`)."""


DECISION_WORDS = 60
"""A decision statement is its first paragraph up to this many words: "The team decided not to
move forward with this change." says what; the sentence after it says why."""


def _decision(*memories: Memory) -> tuple[str, ...]:
    """The decision statement of the first ADR main record among `memories`: its first
    paragraph's sentences (DECISION_WORDS), or its first unit and the next when the first only
    names the option chosen (NAMED_ONLY_WORDS); () when none is."""
    for memory in memories:
        if _is_main(memory):
            found = [u for u in units(memory.content) if u.kind != "heading"]
            if not found:
                return ()
            first = found[0].text
            named = not first.rstrip("*_ )").endswith((".", "!", "?"))
            if named and len(first.split()) < NAMED_ONLY_WORDS:
                return tuple(u.text for u in found[:2])
            said, words = [first], len(first.split())
            for unit in found[1:]:  # the rest of its paragraph, within DECISION_WORDS
                words += len(unit.text.split())
                if (
                    unit.block != found[0].block
                    or unit.kind != "sentence"
                    or words > DECISION_WORDS
                ):
                    break
                said.append(unit.text)
            return tuple(said)
    return ()
