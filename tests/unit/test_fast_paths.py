"""The request path's shortcuts give exactly what the long way gives: a plain paragraph's units
without the Markdown parser, the gate's features from a text read once, the secret rules'
long words by one regular expression."""

from __future__ import annotations

import dataclasses
import random

import pytest

from nous.context import relevance
from nous.text import markdown
from nous.text.secrets import rules


def parsed_units(content: str) -> tuple[markdown.Unit, ...]:
    """`markdown.units` the long way: always through the parser."""
    out: list[markdown.Unit] = []
    n = 0
    for section in markdown.parse(content).sections:
        if section.level and section.title:
            out.append(markdown.Unit("heading", section.title, block=n))
            n += 1
        for block in section.blocks:
            if block.kind == "list":
                out += [markdown.Unit("item", item, block.lead, n) for item in block.items]
            elif block.kind == "code" and block.lang.lower() in markdown.DIAGRAMS:
                pass
            elif block.kind == "code":
                lines = [
                    ln.strip() for ln in block.text.splitlines() if any(c.isalnum() for c in ln)
                ]
                out += [markdown.Unit("code", f"`{line}`", block.lead, n) for line in lines]
            elif block.kind == "table":
                rows = block.text.splitlines()
                header = rows[0] if rows else ""
                out += [markdown.Unit("row", row, header, n) for row in rows[1:]] or [
                    markdown.Unit("row", header, "", n)
                ]
            else:
                out += [markdown.Unit("sentence", s, "", n) for s in markdown.sentences(block.text)]
            n += 1
    return tuple(dataclasses.replace(u, position=i) for i, u in enumerate(out))


PLAIN = [
    "The search indexer must stay under 44 ms at p95. Local runs need `python -m x.replay` first.",
    "Nothing else reads audit_entries.report_ref directly; go through render_webhook().",
    "Use `a *b* c` now. See e.g. the docs. Version 1.2 is out! Then `x` and `y`.",
    "a `a``b` c",
    "tabs\tand  spaces   ",
]
NOT_PLAIN = [
    "# A heading",
    "- an item",
    "1. first",
    "Two\nlines",
    "Some *emphasis* here",
    "A [link](x.md) here",
    "An &amp; entity",
    "An escape \\* here",
    "a _word_ here",
    "a `` b `` c",
    "a ` b` c",
    "<b>html</b>",
]


@pytest.mark.parametrize("content", PLAIN)
def test_a_plain_paragraph_takes_the_shortcut_and_gives_the_parsers_units(content: str) -> None:
    assert markdown._PLAIN.fullmatch(content)
    assert markdown.units(content) == parsed_units(content)


@pytest.mark.parametrize("content", NOT_PLAIN)
def test_markdown_syntax_goes_through_the_parser(content: str) -> None:
    assert not markdown._PLAIN.fullmatch(content)
    assert markdown.units(content) == parsed_units(content)


def test_random_texts_give_the_same_units_either_way() -> None:
    rng = random.Random(1)
    alphabet = [*"abcXY _`*\\&<>[]!#-1.?:;|~()\t\"'", "e.g. ", "A. ", " `x` ", "``", "&amp;"]
    plain = 0
    for _ in range(20_000):
        text = rng.choice("abAZ") + "".join(rng.choices(alphabet, k=rng.randint(0, 25)))
        if markdown._PLAIN.fullmatch(text):
            plain += 1
            assert markdown.units(text) == parsed_units(text), text
    assert plain > 500


def old_features(query: relevance.Query, content: str) -> list[float]:
    """The text-dependent features as `relevance.features` computed them one call at a time."""
    heading = content[2:].split("\n", 1)[0] if content.startswith("# ") else ""
    total = query.total if query.total > 0 else 1.0
    best = max((query.overlap(f"{u.lead} {u.text}") for u in markdown.units(content)), default=0.0)
    rarest = query.rarest
    return [
        query.coverage(content),
        query.coverage(heading) if heading else 0.0,
        min(1.0, best / total),
        1.0 if rarest is not None and rarest in relevance.stems(content) else 0.0,
    ]


@pytest.mark.parametrize(
    "content",
    [
        "# Release › Checklist\n\n- Tag the release: `git tag v1`\n- Push the tag\n\nThen wait.",
        "Deploy the search indexer with Envoy. The indexer needs Redis.",
        "# Empty",
        "",
        "| a | b |\n|---|---|\n| deploy | indexer |",
    ],
)
def test_features_read_once_equal_features_read_each_time(content: str) -> None:
    query = relevance.query(
        "how do we deploy the search indexer release tag?",
        {"deploy": 3, "search": 40, "indexer": 2, "release": 9, "tag": 5},
        100,
    )
    values = relevance.features(query, content, 0.4, 0.5, 0.6)
    assert values[1:5] == old_features(query, content)


def test_long_words_are_split_words_of_twenty_characters() -> None:
    def by_split(text: str) -> list[tuple[int, int]]:
        out, pos = [], 0
        for word in text.split():
            at = text.find(word, pos)
            pos = at + len(word)
            if len(word) >= 20:
                out.append((at, pos))
        return out

    spaces = [chr(c) for c in range(0x3100) if chr(c).isspace()]
    rng = random.Random(3)
    for _ in range(5_000):
        parts = ["a" * rng.randint(1, 25), rng.choice(spaces), "é", "🙂", "x"]
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 12)))
        assert rules._long_words(text) == by_split(text), repr(text)
