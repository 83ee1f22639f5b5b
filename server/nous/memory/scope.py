"""Scopes: who a memory is for. One home for their spelling; everyone else asks this module.

A scope is stored as text (`universal`, `language:<id>`, `project:<key>`) in the `memories` table
and the team store; in code it is a `Scope` when it is taken apart or built, and `kind` answers
"which of the three" without parsing (the hot path asks it per candidate). The SQL filters spell
the project prefix themselves (`scope NOT LIKE 'project:%'`, in memory/ only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from nous.errors import InvalidMemory

Kind = Literal["universal", "language", "project"]
UNIVERSAL: Final = "universal"
PROJECT: Final = "project"
LANGUAGE: Final = "language"
_PATTERN = re.compile(r"^(universal|language:[a-z0-9_+#.-]{1,40}|project:[^\s]{1,200})$")


@dataclass(frozen=True)
class Scope:
    """A parsed scope: its kind and, for a language or a project, its id / key."""

    kind: Kind
    name: str = ""

    def __str__(self) -> str:
        return UNIVERSAL if self.kind == UNIVERSAL else f"{self.kind}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> Scope:
        """A stored or given scope (stripped); `InvalidMemory` naming the three forms when it
        is none of them."""
        text = check(text)
        if text == UNIVERSAL:
            return cls(UNIVERSAL)
        head, _, name = text.partition(":")
        return cls(PROJECT if head == PROJECT else LANGUAGE, name)


def check(text: str) -> str:
    """`text` stripped, if it is a scope; `InvalidMemory` otherwise."""
    text = text.strip()
    if not _PATTERN.match(text):
        raise InvalidMemory(
            f"invalid scope {text!r}: use 'universal', 'language:<id>' or 'project:<id>'"
        )
    return text


def project(key: str) -> str:
    """The scope of a project key (`project:<key>`)."""
    return f"{PROJECT}:{key}"


def language(name: str) -> str:
    """The scope of a language id (`language:<id>`)."""
    return f"{LANGUAGE}:{name}"


def kind(text: str) -> str:
    """`project`, `language` or `universal`; `""` for any other text. Exactly
    `text.startswith("project:")` / `startswith("language:")` / `== "universal"`, without
    parsing (asked per candidate)."""
    head, sep, _ = text.partition(":")
    if sep and head in (PROJECT, LANGUAGE):
        return head
    return UNIVERSAL if text == UNIVERSAL else ""


def is_project(text: str) -> bool:
    """A project's scope (`project:<key>`)."""
    return kind(text) == PROJECT


def name(text: str) -> str:
    """The id / key after the prefix (`python` of `language:python`), `""` for `universal`."""
    return text.partition(":")[2] if kind(text) in (PROJECT, LANGUAGE) else ""


def readable(project_scope: str, languages: Iterable[str]) -> list[str]:
    """What a read from a project may see: the project, its languages, universal (never another
    project), in that order."""
    return [project_scope, *(language(x) for x in languages), UNIVERSAL]


def languages_of(scopes: Sequence[str]) -> list[str]:
    """The language ids among `scopes`, in order."""
    return [name(s) for s in scopes if kind(s) == LANGUAGE]
