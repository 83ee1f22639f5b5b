"""CONTRIBUTING sections and "how to …" README sections → procedures (one per section)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from nous.workspace.harvest.model import Harvested, slug

_HEADING = re.compile(r"^(#{1,4})\s+(.*\S)\s*$", re.M)
_HOW_TO = re.compile(
    r"^(how to|how do|to \w+|getting started|setup|set up|installation|install|development|"
    r"developing|running tests|testing|build(ing)?|release|releasing|deploy(ing|ment)?|"
    r"contributing|usage|run|test)\b",
    re.I,
)
MAX_WORDS = 250


def matches(relpath: str) -> bool:
    name = PurePosixPath(relpath).name.lower()
    top = len(PurePosixPath(relpath).parts) <= 2
    return top and name in {"contributing.md", "contributing", "readme.md", "readme", "hacking.md"}


def harvest(relpath: str, text: str) -> list[Harvested]:
    contributing = "contributing" in relpath.lower() or "hacking" in relpath.lower()
    heads = list(_HEADING.finditer(text))
    out = []
    for n, head in enumerate(heads):
        title = head.group(2).strip()
        end = heads[n + 1].start() if n + 1 < len(heads) else len(text)
        body = text[head.end() : end]
        body = re.sub(r"```.*?\n(.*?)```", lambda m: m.group(1), body, flags=re.S)
        words = body.split()
        if len(words) < 5 or not (contributing or _HOW_TO.match(title)):
            continue
        content = f"{title}: " + " ".join(words[:MAX_WORDS])
        out.append(
            Harvested(
                kind="procedure", content=content, anchor=f"file:{relpath}#{slug(title)}",
                tags=["procedure", slug(title, 30)],
            )
        )  # fmt: skip
    return out
