"""Markdown as a document tree (markdown-it-py), and the *units* a record is made of.

The harvest reads instruction files, ADRs and docs through `parse` (sections with their heading
path; paragraphs, lists with their lead-in, code blocks with the sentence that introduces them,
tables), never line by line: `#` inside code is not a heading, a wrapped bullet stays whole, a
stray fence never leaks into text. A stored record's content is plain Markdown again (`render`),
so the same parser splits it into units (`units`) for the query-relevant extract at render time
and for the write-time summary. `sentences` knows abbreviations, numbered lists and emphasis.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it.token import Token


@functools.cache
def _md() -> Any:
    """The parser, built on first use: a command that parses no markdown (a recall over
    memories) does not pay for importing markdown-it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


_FRONT = re.compile(r"\A\ufeff?---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_FRONT_FIELD = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
LEAD_MAX_WORDS = 40
"""A paragraph right before a list is its lead-in when it ends with ':' or is this short."""


@dataclass
class Block:
    """One block of a section. `kind`: para, list, code, table, quote."""

    kind: str
    text: str = ""
    """para/quote: the text; code: the code; table: the rows as `a | b` lines."""
    items: list[str] = field(default_factory=list)
    """list: each item's whole text (nested items folded in as `; ` parts)."""
    lead: str = ""
    """list: the paragraph that introduces it; code: the sentence before it."""
    lang: str = ""
    ordered: bool = False


@dataclass
class Section:
    path: list[str]
    """Heading titles from the top (the document title first when there is one)."""
    level: int
    anchor: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.path[-1] if self.path else ""


@dataclass
class Document:
    front: dict[str, str]
    title: str
    sections: list[Section]
    links: list[str]
    """Link targets in the order they appear (relative paths and URLs as written)."""


def _inline(token: Token, links: list[str]) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type == "text":
            parts.append(child.content)
        elif child.type == "code_inline":
            parts.append(f"`{child.content}`")
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            if href:
                links.append(href)
        elif child.type == "image":
            parts.append(child.content or "")
        elif child.type == "html_inline":
            continue
    return " ".join("".join(parts).split())


def slug(text: str, limit: int = 60) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit] or "section"


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """(YAML-ish front matter fields, the body after it). Only `key: value` lines are read."""
    match = _FRONT.match(text)
    if not match:
        return {}, text
    fields: dict[str, str] = {}
    for line in match.group(1).splitlines():
        found = _FRONT_FIELD.match(line)
        if found:
            fields[found.group(1).lower()] = found.group(2).strip().strip("'\"")
    return fields, text[match.end() :]


def _list_items(tokens: list[Token], start: int, links: list[str]) -> tuple[list[str], int]:
    """The items of the list opening at `start` (nested lists folded into their item)."""
    depth = 0
    items: list[str] = []
    current: list[str] = []
    i = start
    while i < len(tokens):
        tok = tokens[i]
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
            if depth == 0:
                break
        elif tok.type == "list_item_open" and depth == 1:
            current = []
        elif tok.type == "list_item_close" and depth == 1:
            items.append(_join_parts(current))
        elif tok.type == "inline":
            current.append(_inline(tok, links))
        elif tok.type in ("fence", "code_block"):
            code = " ".join(
                f"`{line.strip()}`" for line in tok.content.splitlines() if line.strip()
            )
            current.append(code)
        i += 1
    return [item for item in items if item], i


def _join_parts(parts: list[str]) -> str:
    out = ""
    for part in (p for p in parts if p):
        if not out:
            out = part
        elif out.endswith((".", ":", ";", "!", "?")):
            out = f"{out} {part}"
        else:
            out = f"{out}; {part}"
    return out


CELLS = " | "
"""What joins a table row's cells in a block's text (and its units: `rules` splits them again)."""


def _table(tokens: list[Token], start: int, links: list[str]) -> tuple[str, int]:
    rows: list[list[str]] = []
    row: list[str] = []
    i = start
    while i < len(tokens) and tokens[i].type != "table_close":
        tok = tokens[i]
        if tok.type == "tr_open":
            row = []
        elif tok.type == "tr_close":
            rows.append(row)
        elif tok.type == "inline":
            row.append(_inline(tok, links))
        i += 1
    return "\n".join(CELLS.join(r) for r in rows), i


_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def outside_code(lines: list[str]) -> Iterator[tuple[int, str, bool]]:
    """(index, line, after code) of the lines outside fenced code blocks; `after code` says a
    code block ended just before this line. A fence closes on the same character at least as
    long as the one that opened it (CommonMark)."""
    fence = ""
    after = False
    for n, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence, after = opened.group(1), True
            continue
        yield n, line, after
        after = False


_MARKUP = re.compile(r"(?P<code>(`+)[^`].*?(?<!`)\2(?!`))|<!--.*?-->", re.S)
"""An inline code span (kept as it is) or an HTML comment (dropped)."""
_TASK = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)\[[ xX]\]\s+", re.M)


def _without_markup(body: str) -> str:
    """`body` less what a reader of the rendered page never sees: HTML comments (`<!-- TODO: add
    the deploy steps -->`, a template's hints, were rules of their own), and a task list's boxes
    (`- [ ] Run make check` is the item "Run make check"). Code, fenced or inline, is left as it
    is. Presentational tags (`<details>`, `<a name=…>` in a heading) stay as the text they are:
    dropping them too was measured (docs/benchmarks.md, twelfth pass) and left out."""
    if "<!--" not in body and "[ ]" not in body and "[x]" not in body and "[X]" not in body:
        return body  # most records: nothing to take out
    lines = body.splitlines(keepends=True)
    prose = {n for n, _, _ in outside_code(lines)}
    out: list[str] = []
    run: list[str] = []  # consecutive prose lines: a comment may span several
    for n, line in enumerate([*lines, ""]):  # "" closes the last run
        if n in prose:
            run.append(line)
            continue
        if run:
            text = _MARKUP.sub(lambda m: m["code"] or "", "".join(run))
            out.append(_TASK.sub(r"\1", text))
            run = []
        out.append(line)
    return "".join(out)


_HEADING_ATTRIBUTES = re.compile(r"\s*\{\s*[#.][^{}]*\}\s*$")
"""A heading's attribute list (MkDocs, Pandoc: `## Context {#context}`, `{.tabs}`): markup, not
words of the title."""


def parse(text: str) -> Document:
    """The document tree of a Markdown text (front matter read and removed; HTML comments and
    task boxes dropped, `_without_markup`)."""
    front, body = front_matter(text)
    tokens: list[Token] = _md().parse(_without_markup(body))
    links: list[str] = []
    title = front.get("title", "")
    sections: list[Section] = [Section(path=[], level=0, anchor="top")]
    stack: list[tuple[int, str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
            heading = _HEADING_ATTRIBUTES.sub("", _inline(tokens[i + 1], links)).strip()
            if level == 1 and not title:
                title = heading
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
            sections.append(Section([h for _, h in stack], level, slug(heading)))
            i += 3
            continue
        blocks = sections[-1].blocks
        if tok.type == "paragraph_open" and tok.level == 0:
            para = _inline(tokens[i + 1], links)
            if para:
                blocks.append(Block("para", para))
            i += 3
            continue
        if tok.type in ("bullet_list_open", "ordered_list_open") and tok.level == 0:
            items, i = _list_items(tokens, i, links)
            lead = ""
            if blocks and blocks[-1].kind == "para":
                prev = blocks[-1].text
                if prev.endswith(":") or len(prev.split()) <= LEAD_MAX_WORDS:
                    lead = blocks.pop().text
            blocks.append(Block("list", items=items, lead=lead,
                                ordered=tok.type == "ordered_list_open"))  # fmt: skip
        elif tok.type in ("fence", "code_block") and tok.level == 0:
            lead = ""
            lang = tok.info.split()[0] if tok.info.strip() else ""
            if lang.lower() in DIAGRAMS:
                pass  # a diagram introduces nothing: the sentence before it stays a sentence
            elif blocks and blocks[-1].kind == "para":
                lead = blocks.pop().text
            elif blocks and blocks[-1].kind == "list" and blocks[-1].items[-1].endswith(":"):
                lead = blocks[-1].items[-1]  # "- Verify coverage:" then an unindented block
            code = tok.content.rstrip("\n")
            if code.strip():
                blocks.append(Block("code", code, lead=lead, lang=lang))
            elif lead:
                blocks.append(Block("para", lead))
        elif tok.type == "table_open":
            table, i = _table(tokens, i, links)
            if table:
                blocks.append(Block("table", table))
        elif tok.type == "blockquote_open":
            depth, j, parts = 0, i, []
            while j < len(tokens):
                if tokens[j].type == "blockquote_open":
                    depth += 1
                elif tokens[j].type == "blockquote_close":
                    depth -= 1
                    if depth == 0:
                        break
                elif tokens[j].type == "inline":
                    parts.append(_inline(tokens[j], links))
                j += 1
            if parts:
                blocks.append(Block("quote", " ".join(parts)))
            i = j
        i += 1
    if title and sections[0].blocks:
        sections[0].path = [title]
    for section in sections[1:]:
        if title and section.path and section.path[0] != title:
            section.path = [title, *section.path]
    return Document(front, title, [s for s in sections if s.blocks or s.level], links)


# -- rendering a record and splitting it into units --------------------------------------------


def render_block(block: Block) -> str:
    """Plain Markdown for one block (what a stored record's content holds)."""
    if block.kind == "list":
        marker = "1." if block.ordered else "-"
        lines = [f"{marker} {item}" for item in block.items]
        return "\n".join([block.lead, *lines] if block.lead else lines)
    if block.kind == "code":
        fence = f"```{block.lang}\n{block.text}\n```"
        return f"{block.lead}\n{fence}" if block.lead else fence
    if block.kind == "quote":
        return f"> {block.text}"
    if block.kind == "table":  # the delimiter row too: without it the text is no table again
        rows = block.text.splitlines()
        if not rows:
            return ""
        columns = rows[0].count(CELLS) + 1
        delimiter = "|" + " --- |" * columns
        return "\n".join([f"| {rows[0]} |", delimiter, *(f"| {row} |" for row in rows[1:])])
    return block.text


def render(blocks: list[Block]) -> str:
    return "\n\n".join(render_block(b) for b in blocks)


DIAGRAMS = frozenset({"mermaid", "plantuml", "puml", "dot", "graphviz", "ditaa", "svgbob"})
"""Fenced languages that draw: an extract never takes their lines one by one."""


@dataclass(frozen=True)
class Unit:
    """The smallest piece an extract is made of: a sentence, a list item (with its lead-in), a
    code block (with its introducing sentence) or a table row (with the header). A list item of
    LONG_ITEM characters or more is its first sentence (`item`) and each further sentence
    (`more`, with the item's lead-in): an extract can say the sentence that answers without the
    whole paragraph-long rule, which would not fit its room."""

    kind: str
    text: str
    lead: str = ""
    block: int = 0
    """Index of the block it came from (units of one block render together)."""
    position: int = 0
    """Index among the record's units: two equal lines of one code block stay two units."""


_PLAIN = re.compile(
    r"[A-Za-z](?:[^\x00\r\n`\\&<>\[\]*~_]"
    r"|`[^\s`](?:[^\x00\r\n`]*[^\s`])?`"
    r"|(?<=[A-Za-z0-9])_(?=[A-Za-z0-9]))*"
)
"""One paragraph that Markdown leaves as it is: a single line that starts with a letter (no
block syntax), its inline code single-backticked with no space at either end, and none of
the characters inline syntax needs (escapes, entities, HTML, links, emphasis; `_` only inside
a word, where it cannot emphasise)."""


ENDS = (":", "：", ".", "。", "!", "！", "?", "？")
"""A lead-in ending so is said as it is ("… in the test. `make tests`", "配置：…"), not with one
more colon ("test.:", "：:")."""

LONG_ITEM = 400
"""A list item this long (about 100 tokens) is read sentence by sentence (`Unit`): longer than
the smallest room an extract has (`gate.item_min`), it could only be said whole or not at all."""


@functools.lru_cache(maxsize=8192)
def units(content: str, long_items: bool = True) -> tuple[Unit, ...]:
    """The units of a stored record's content, in document order; without `long_items`, a long
    list item stays one unit (the gate's features were fitted on items whole)."""
    if _PLAIN.fullmatch(content):  # what `parse` makes of it, without parsing (most memories)
        return tuple(Unit("sentence", s, "", 0, i) for i, s in enumerate(sentences(content)))
    out: list[Unit] = []
    doc = parse(content)
    n = 0
    for section in doc.sections:
        if section.level and section.title:
            out.append(Unit("heading", section.title, block=n))
            n += 1
        for block in section.blocks:
            if block.kind == "list":
                for item in block.items:
                    long = long_items and len(item) >= LONG_ITEM
                    first, *more = sentences(item) if long else [item]
                    out.append(Unit("item", first, block.lead, n))
                    out += [Unit("more", s, block.lead, n) for s in more]
            elif block.kind == "code" and block.lang.lower() in DIAGRAMS:
                pass  # a diagram's lines are not facts ("LEG[Legacy Code]" matched "new code")
            elif block.kind == "code":  # line by line: an extract keeps the relevant commands
                lines = [line.strip() for line in block.text.splitlines() if _says(line)]
                out += [Unit("code", f"`{line}`", block.lead, n) for line in lines]
            elif block.kind == "table":
                rows = block.text.splitlines()
                header = rows[0] if rows else ""
                out += [Unit("row", row, header, n) for row in rows[1:]] or [
                    Unit("row", header, "", n)
                ]
            else:
                out += [Unit("sentence", s, "", n) for s in sentences(block.text)]
            n += 1
    return tuple(dataclasses.replace(u, position=i) for i, u in enumerate(out))


def _says(line: str) -> bool:
    """A code line says something: it holds a letter or a digit. A line of closing brackets
    (`)`, `}`, `});`) is not a unit: an extract drew them as "… navigation graph: `)` `}` `}`"."""
    return any(c.isalnum() for c in line)


_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf approx incl e.t.c mr mrs ms dr no nr fig al resp esp ca viz st jr sr "
    "a.k.a u.s dept est min max".split()
)
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_`]*[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """Sentences of a paragraph: no split after abbreviations (e.g., i.e., vs.), initials, a
    list number (`1.`) or a version number, nor inside inline code."""
    text = " ".join(text.split())
    if not text:
        return []
    out: list[str] = []
    start = 0
    code_spans = [m.span() for m in re.finditer(r"`[^`]*`", text)]
    for match in _SPLIT.finditer(text):
        cut = match.start()
        if any(a < cut < b for a, b in code_spans):
            continue
        before = text[start:cut]
        word = before.rsplit(None, 1)[-1] if before.split() else ""
        bare = word.strip("*_\"'()[]").rstrip(".").lower()
        if bare in _ABBREVIATIONS or re.fullmatch(r"[a-z]|\d{1,3}|[ivx]{1,4}", bare):
            continue
        out.append(text[start:cut].strip())
        start = match.end()
    out.append(text[start:].strip())
    return [s for s in out if s]
