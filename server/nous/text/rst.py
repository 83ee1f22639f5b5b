"""reStructuredText → Markdown, so a Python project's `CONTRIBUTING.rst`, `docs/*.rst` and RST
decision records go through the same Markdown harvest as everyone else's.

Parsed by docutils (the reference RST parser, the one Sphinx builds on) into its document tree,
then written back as the Markdown the harvest reads: sections as `#` headings by depth, lists as
`- ` items, literal and code blocks fenced (with their language), admonitions as a paragraph led
by their name ("Note: …"), definition and field lists as `term: definition` items, tables as pipe
tables. Nothing is read beyond the text itself: `include`, `raw`, `literalinclude` and every
other directive that reads a file or the network are off (a workspace file may not pull in
`/etc/passwd`). Sphinx's own roles (`:ref:`, `:class:` …) keep their text; its directives keep
their content (`versionadded`, `seealso`, `only` …) or are left out when they only build the
site (`toctree`, `automodule` …). Never raises: a text docutils cannot read comes back as is.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

log = logging.getLogger(__name__)

_ADMONITIONS = {
    "note": "Note", "warning": "Warning", "important": "Important", "tip": "Tip",
    "hint": "Hint", "caution": "Caution", "attention": "Attention", "danger": "Danger",
    "error": "Error", "seealso": "See also", "todo": "To do",
}  # fmt: skip
_VERSIONED = {"versionadded": "Added in", "versionchanged": "Changed in",
              "deprecated": "Deprecated since", "versionremoved": "Removed in"}  # fmt: skip
_CONTAINERS = ("only", "glossary", "hlist", "tab", "tabs", "group-tab", "code-tab", "centered",
               "tabularcolumns", "rst-class", "cssclass")  # fmt: skip
_SITE_ONLY = ("toctree", "automodule", "autoclass", "autofunction", "automethod",
              "autoattribute", "autodata", "autoexception", "autosummary", "literalinclude",
              "highlight", "currentmodule", "module", "index", "productionlist", "graphviz",
              "plot", "program", "option", "envvar", "describe", "jinja", "mermaid", "uml",
              "spelling", "ifconfig", "galleryitem", "card", "grid", "grid-item-card")  # fmt: skip
_ROLES_AS_CODE = ("class", "func", "meth", "mod", "attr", "exc", "data", "obj", "const",
                  "file", "command", "program", "option", "envvar", "samp", "kbd", "py:class",
                  "py:func", "py:meth", "py:mod", "py:attr", "py:exc", "py:data", "py:obj",
                  "c:func", "c:type", "c:macro", "cpp:func", "cpp:class", "js:func",
                  "setting", "makevar", "regexp", "confval")  # fmt: skip
_TARGET = re.compile(r"\s*<[^<>]*>$")
_ROLE = re.compile(r"(?<![\w`]):(?P<role>[A-Za-z][\w:.+-]*):`(?P<text>[^`\n]+)`(?!`)")
"""An interpreted-text role (`:ref:`install``, `:pypi:`flake8``): Sphinx and its extensions
define hundreds, so they are read before docutils sees the text (`_roles`)."""


def _roles(text: str) -> str:
    """Every role said plainly: a code-like one as inline code, `:pep:` / `:rfc:` with their
    name, any other as its text (a link's target left out)."""

    def plain(match: re.Match[str]) -> str:
        role = match["role"].lower()
        said = _TARGET.sub("", match["text"]).lstrip("~!")
        if role in ("pep", "rfc"):
            return f"{role.upper()} {said}"
        if role in _ROLES_AS_CODE or role.rsplit(":", 1)[-1] in _ROLES_AS_CODE:
            return f"``{said}``"
        return said

    return _ROLE.sub(plain, text)


_SECTION_LIKE = re.compile(r"^\s*([=\-~^\"'`#*+:._])\1{3,}\s*$", re.M)


def looks_like_rst(text: str) -> bool:
    """Whether `text` has shapes only RST has (a title's underline of one punctuation mark
    repeated, a `.. ` directive or comment): a `.txt` document is read as RST only then."""
    return bool(_SECTION_LIKE.search(text)) or "\n.. " in f"\n{text}"


@functools.cache
def _registered() -> bool:
    """Sphinx's directives taught to docutils once per process."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives
    from docutils.parsers.rst.directives.body import CodeBlock

    class Container(Directive):
        """A Sphinx directive whose content is ordinary text: kept, its name dropped."""

        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec = None  # any option is accepted and ignored

        def run(self) -> list[Any]:
            node = nodes.container()
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    class Versioned(Container):
        required_arguments = 1
        optional_arguments = 1

        def run(self) -> list[Any]:
            lead = f"{_VERSIONED.get(self.name, self.name)} {self.arguments[0]}"
            node = nodes.container()
            if len(self.arguments) > 1:  # the text on the directive's own lines
                said, _ = self.state.inline_text(" ".join(self.arguments[1].split()), self.lineno)
                node += nodes.paragraph("", "", *said)
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, node)
            first = node.children[0] if node.children else None
            if isinstance(first, nodes.paragraph):
                first.insert(0, nodes.Text(f"{lead}: "))
            else:
                node.insert(0, nodes.paragraph("", lead))
            return [node]

    class SiteOnly(Directive):
        optional_arguments = 10
        final_argument_whitespace = True
        has_content = True
        option_spec = None

        def run(self) -> list[Any]:
            return []

    class Admonition(Container):
        def run(self) -> list[Any]:
            node = nodes.container(classes=[f"admonition-{self.name}"])
            text = "\n".join(self.arguments)
            if text:
                node += nodes.paragraph("", text)
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    for name in ("code-block", "sourcecode"):
        directives.register_directive(name, CodeBlock)
    for name in _CONTAINERS:
        directives.register_directive(name, Container)
    for name in _VERSIONED:
        directives.register_directive(name, Versioned)
    for name in _SITE_ONLY:
        directives.register_directive(name, SiteOnly)
    for name in ("seealso", "todo"):
        directives.register_directive(name, Admonition)
    return True


def to_markdown(text: str) -> str:
    """`text` (RST) as Markdown; `text` itself when docutils cannot read it."""
    try:
        from docutils.core import publish_doctree

        _registered()
        tree = publish_doctree(
            _roles(text),
            settings_overrides={
                "report_level": 5, "halt_level": 5, "warning_stream": False,
                "file_insertion_enabled": False, "raw_enabled": False,
                "doctitle_xform": True, "sectsubtitle_xform": False,
                "character_level_inline_markup": False, "input_encoding": "unicode",
                "_disable_config": True, "syntax_highlight": "none",
            },
        )  # fmt: skip
        return _Writer().document(tree)
    except Exception as exc:
        log.debug("reStructuredText not converted: %s", exc)
        return text


class _Writer:
    """The docutils tree as Markdown blocks separated by blank lines."""

    def document(self, tree: Any) -> str:
        blocks: list[str] = []
        title = tree.get("title") or ""
        if title:
            blocks.append(f"# {title}")
        self._body(tree, 1 if title else 0, blocks)
        return "\n\n".join(b for b in blocks if b.strip()) + "\n"

    def _body(self, parent: Any, depth: int, out: list[str]) -> None:
        from docutils import nodes

        children: list[Any] = list(parent.children)  # docutils' nodes, read loosely
        for child in children:
            if isinstance(child, nodes.title):
                continue
            if isinstance(child, nodes.section):
                title = next((c for c in child.children if isinstance(c, nodes.title)), None)
                level = min(depth + 1, 6)
                if title is not None:
                    out.append(f"{'#' * level} {self._inline(title)}")
                self._body(child, level, out)
            elif isinstance(child, nodes.paragraph):
                out.append(self._inline(child))
            elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
                found: list[str] = list(child.get("classes", []))
                classes = [c for c in found if c != "code"]
                lang = classes[0] if classes else ""
                code = child.astext().rstrip("\n")
                fence = "````" if "```" in code else "```"
                out.append(f"{fence}{lang}\n{code}\n{fence}")
            elif isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
                out.append(self._list(child, 0))
            elif isinstance(child, nodes.definition_list):
                items = []
                for item in child.children:
                    term = " ".join(self._inline(t) for t in item.children
                                    if isinstance(t, nodes.term))  # fmt: skip
                    body = " ".join(self._flat(d) for d in item.children
                                    if isinstance(d, nodes.definition))  # fmt: skip
                    items.append(f"- {term}: {body}" if body else f"- {term}")
                out.append("\n".join(items))
            elif isinstance(child, nodes.field_list):
                items = []
                for field in child.children:
                    name = self._inline(field.children[0])
                    body = self._flat(field.children[1]) if len(field.children) > 1 else ""
                    items.append(f"- {name}: {body}")
                out.append("\n".join(items))
            elif isinstance(child, nodes.Admonition) or any(
                c.startswith("admonition-") for c in child.get("classes", [])
            ):
                tags: list[str] = list(child.get("classes", []))
                name = next((c.removeprefix("admonition-") for c in tags
                             if c.startswith("admonition-")), str(child.tagname))  # fmt: skip
                label = _ADMONITIONS.get(name, name.capitalize())
                inner: list[str] = []
                self._body(child, depth, inner)
                if inner and not inner[0].startswith(("#", "-", "```", "|")):
                    inner[0] = f"{label}: {inner[0]}"
                else:
                    inner.insert(0, f"{label}:")
                out.extend(inner)
            elif isinstance(child, nodes.table):
                out.append(self._table(child))
            elif isinstance(child, (nodes.block_quote, nodes.container, nodes.compound,
                                    nodes.line_block, nodes.topic, nodes.sidebar)):  # fmt: skip
                if isinstance(child, nodes.line_block):
                    out.append(" ".join(self._inline(line) for line in child.children))
                else:
                    self._body(child, depth, out)
            elif isinstance(child, (nodes.comment, nodes.target, nodes.substitution_definition,
                                    nodes.system_message, nodes.raw, nodes.image,
                                    nodes.pending, nodes.transition, nodes.footnote,
                                    nodes.citation, nodes.docinfo, nodes.decoration)):  # fmt: skip
                continue
            else:
                text = self._flat(child)
                if text:
                    out.append(text)

    def _list(self, node: Any, indent: int) -> str:
        from docutils import nodes

        lines = []
        ordered = isinstance(node, nodes.enumerated_list)
        for n, item in enumerate(node.children, start=1):
            marker = f"{n}." if ordered else "-"
            head: list[str] = []
            nested: list[str] = []
            for part in item.children:
                if isinstance(part, (nodes.bullet_list, nodes.enumerated_list)):
                    nested.append(self._list(part, indent + 2))
                elif isinstance(part, nodes.literal_block):
                    head.append(f"`{part.astext().strip()}`")
                else:
                    head.append(self._flat(part))
            lines.append(f"{' ' * indent}{marker} {' '.join(h for h in head if h)}")
            lines += nested
        return "\n".join(lines)

    def _table(self, node: Any) -> str:
        from docutils import nodes

        rows = []
        for row in node.findall(nodes.row):
            cells = [self._flat(e).replace("|", "/") for e in row.children]
            rows.append(f"| {' | '.join(cells)} |")
        if not rows:
            return ""
        width = rows[0].count(" | ") + 1
        return "\n".join([rows[0], "|" + " --- |" * width, *rows[1:]])

    def _flat(self, node: Any) -> str:
        """A node's text on one line (paragraphs of an item or a definition joined)."""
        from docutils import nodes

        if isinstance(node, nodes.paragraph):
            return self._inline(node)
        if isinstance(node, nodes.Text):
            return " ".join(str(node).split())
        parts = [self._flat(c) for c in node.children] if node.children else []
        return " ".join(p for p in parts if p)

    def _inline(self, node: Any) -> str:
        from docutils import nodes

        out = []
        for child in node.children:
            if isinstance(child, nodes.Text):
                out.append(str(child))
            elif isinstance(child, nodes.literal):
                code = child.astext()
                tick = "``" if "`" in code else "`"
                out.append(f"{tick}{code}{tick}")
            elif isinstance(child, nodes.strong):
                out.append(f"**{self._inline(child)}**")
            elif isinstance(child, nodes.emphasis):
                out.append(f"*{self._inline(child)}*")
            elif isinstance(child, nodes.title_reference):
                out.append(f"`{child.astext()}`")
            elif isinstance(child, (nodes.target, nodes.footnote_reference,
                                    nodes.citation_reference, nodes.substitution_reference,
                                    nodes.system_message, nodes.image)):  # fmt: skip
                continue
            else:
                out.append(self._inline(child) if child.children else child.astext())
        return " ".join("".join(out).split())
