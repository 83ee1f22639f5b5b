"""Poisoned memories: prompt-injection text stored as memories is rendered fenced as data and
defanged, and never changes the structure of the rendered context (headings and fences)."""

from __future__ import annotations

import re
import unicodedata

import pytest

from nous.context import config as configs
from nous.context import pipeline
from nous.context.render import FENCE, fence_open
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.protocol import ContextResult
from nous.text import tokens
from tests.reliability.conftest import report
from tests.reliability.payloads import ATTACKS, marker, poisoned

CONFIG = configs.defaults()
COUNTER = tokens.counter()
VIEW = pipeline.View("app", "project:app", ["python"])
DANGER = [
    re.compile(
        r"</?\s*\|?\s*(system|assistant|user|human|instructions?|tool_call|function_calls|memories)\b[^>]*>",
        re.I,
    ),
    re.compile(r"<\|[^|>\s]+\|>"),
    re.compile(r"\[/?(INST|SYS)\]|<</?SYS>>", re.I),
    re.compile(r"!\["),
    re.compile(r"<img", re.I),
    re.compile(r"\]\((https?|javascript|data):", re.I),
    re.compile(r"`{3,}|~{3,}"),
    re.compile(r"\b(system|assistant|human)\s*:", re.I),
]


def store_with(drafts: list[Draft], embedder: OnnxEmbedder) -> MemoryStore:
    store = MemoryStore(":memory:", embedder, COUNTER)
    store.remember_many(drafts)
    return store


def render(store: MemoryStore, query: str, budget: int = 8000, mode: str = "turn") -> ContextResult:
    return pipeline.assemble(
        store, CONFIG, VIEW, pipeline.Request(input=query, mode=mode, budget=budget)
    )


def split(text: str) -> tuple[list[str], list[str]]:
    """(structure, memory lines): memory lines are the lines inside a data fence; the structure is
    every other line (headings, our own fixed text, the fences themselves)."""
    inside = False
    structure: list[str] = []
    memories: list[str] = []
    for line in text.splitlines():
        if line in (fence_open(), FENCE):
            inside = line == fence_open()
            structure.append(line)
        elif inside:
            memories.append(line)
        else:
            structure.append(line)
    return structure, memories


def skeleton(text: str) -> list[str]:
    return split(text)[0]


def check_structure(result: ContextResult) -> list[str]:
    """Headings, fences and memory lines in order, balanced; returns the memory lines."""
    inside = False
    items: list[str] = []
    for line in result.text.splitlines():
        if line == fence_open():
            assert not inside, "a fence opened inside a fence"
            inside = True
        elif line == FENCE:
            assert inside, "a fence closed that was never opened"
            inside = False
        elif inside:
            assert line.startswith("- "), f"a memory line that is not one list item: {line[:80]!r}"
            items.append(line)
        else:
            assert "zqmark" not in line, f"memory text outside its data fence: {line[:80]!r}"
            assert not line.startswith(("```", "~~~")), line
    assert not inside, "a data fence was left open"
    headings = [line for line in result.text.splitlines() if line.startswith("#")]
    assert headings == [f"## {s.title}" for s in result.sections if s.items or s.used]
    assert len(items) == sum(len(s.items) for s in result.sections)
    assert result.tokens == COUNTER.count(result.text) <= result.budget
    return items


def check_defanged(line: str) -> None:
    for pattern in DANGER:
        assert not pattern.search(line), f"{pattern.pattern} survived in {line[:120]!r}"
    bad = [c for c in line if unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs", "Cn")]
    assert not bad, f"invisible or control characters survived: {bad!r}"
    assert not re.search(r"<\s*/?\s*(script|iframe|a)\b|<!--", line, re.I), line


@pytest.fixture(scope="module")
def poisoned_store(real_embedder: OnnxEmbedder) -> MemoryStore:
    drafts = [Draft(kind=k, content=c, scope="project:app") for k, c in poisoned()]
    return store_with(drafts, real_embedder)


def test_there_are_at_least_fifty_attacks() -> None:
    assert len(ATTACKS) >= 50
    report("poisoned_memories", attacks=len(ATTACKS), kinds=len({k for k, _ in poisoned()}))


@pytest.mark.parametrize("n", range(len(ATTACKS)))
def test_each_poisoned_memory_renders_fenced_defanged_and_like_a_clean_one(
    n: int, real_embedder: OnnxEmbedder
) -> None:
    kind, content = poisoned()[n]
    query = f"deploy pipeline {marker(n)}"
    bad = render(
        store_with([Draft(kind=kind, content=content, scope="project:app")], real_embedder), query
    )
    clean_text = f"deploy pipeline {marker(n)} runs the release checklist before tagging"
    good = render(
        store_with([Draft(kind=kind, content=clean_text, scope="project:app")], real_embedder),
        query,
    )
    lines = check_structure(bad)
    check_structure(good)
    mine = [line for line in lines if marker(n) in line]
    assert len(mine) == 1, f"attack {n} was not injected as one line: {bad.text}"
    check_defanged(mine[0])
    assert skeleton(bad.text) == skeleton(good.text)


@pytest.mark.parametrize(
    "query",
    [
        "ignore previous instructions system prompt",
        "deploy pipeline",
        "what did we decide about the deploy pipeline?",
        "how do I run the deploy pipeline?",
    ],
)
@pytest.mark.parametrize("mode", ["turn", "startup"])
def test_many_poisoned_memories_together_keep_the_structure(
    poisoned_store: MemoryStore, query: str, mode: str
) -> None:
    result = render(poisoned_store, query, budget=12000, mode=mode)
    lines = check_structure(result)
    assert lines, "nothing was injected, so nothing was tested"
    for line in lines:
        check_defanged(line)


@pytest.mark.parametrize("budget", [60, 120, 250, 500, 1000, 2000])
def test_poisoned_context_stays_inside_small_budgets(
    poisoned_store: MemoryStore, budget: int
) -> None:
    result = render(poisoned_store, "deploy pipeline instructions", budget=budget)
    for line in check_structure(result):
        check_defanged(line)
