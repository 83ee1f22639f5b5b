"""The workspace's own instruction rules render as rules, one `- ` line a rule led by its lead-in
(design §2.8), in every detail and layer; every section of every manifest reports the cap it had
(design §2.9). A tiny workspace harvested for real: an AGENTS.md and one ADR."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from nous import cli
from nous.context import chat, items, relevance, rules
from nous.context import config as configs
from nous.context.render import FENCE, fence_open, item_line
from nous.context.score import Scored
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.protocol import ContextParams, ContextResult, RecallParams
from nous.settings import Settings

AGENTS_MD = """# Agent rules
Agents MUST NOT:
- commit secrets or .env files;
- add a runtime dependency without an ADR;
- edit generated migrations in `db/migrations/`
## Testing
Run `make test` before every push.
"""
ADR = """# 1. Use httpx for HTTP calls

Status: accepted

## Context

The service calls two payment providers over HTTP. We need timeouts, retries and async support.

## Decision

Chosen option: httpx, because it supports sync and async clients with one API.

## Consequences

The requests library must not be added; use httpx everywhere.
"""
RULES = (
    "- MUST NOT: commit secrets or .env files\n"
    "- MUST NOT: add a runtime dependency without an ADR\n"
    "- MUST NOT: edit generated migrations in `db/migrations/`"
)
ASKED = [
    ("startup", ""),
    ("startup", "fix the checkout bug"),
    ("turn", "can I add the requests library?"),
    ("turn", "How do we handle HTTP retries?"),
    ("recall", "can I add the requests library?"),
]


def write_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "docs/adr").mkdir(parents=True)
    (ws / "AGENTS.md").write_text(AGENTS_MD)
    (ws / "docs/adr/0001-use-httpx.md").write_text(ADR)
    return ws


@pytest.fixture
def engine(tmp_path: Path, real_embedder: OnnxEmbedder) -> Iterator[Engine]:
    e = Engine(Settings(db=tmp_path / "m.db"), write_workspace(tmp_path), embedder=real_embedder)
    e.harvest()
    yield e
    e.store.close()


def ask(engine: Engine, mode: str, text: str) -> ContextResult:
    if mode == "recall":
        return chat.recall(engine, RecallParams(query=text, budget=500))
    return chat.context(engine, ContextParams(input=text, mode=mode))  # type: ignore[arg-type]


def rule_item_text(result: ContextResult) -> str:
    [text] = [i.text for s in result.sections for i in s.items if "AGENTS.md" in i.source]
    return text


def test_a_rule_block_reads_one_rule_a_line_with_its_lead_in(engine: Engine) -> None:
    result = ask(engine, "startup", "")
    assert RULES + "\n- [Testing] Run `make test` before every push." in result.text
    assert ";;" not in result.text and "; add a runtime" not in result.text
    assert "WARN" not in rule_item_text(result)  # the rules say their own MUST NOT


@pytest.mark.parametrize(("mode", "text"), ASKED)
def test_rules_are_rule_lines_wherever_they_render(engine: Engine, mode: str, text: str) -> None:
    """The rules layer (unfenced: the project's own words) and the censors layer (fenced) both
    take the rule lines; inside a fence every line is still one `- ` list item."""
    result = ask(engine, mode, text)
    if not any("AGENTS.md" in i.source for s in result.sections for i in s.items):
        pytest.skip(f"no rule of AGENTS.md admitted in {mode} for {text!r}")
    assert RULES[2:] in rule_item_text(result) and ";;" not in result.text
    inside = False
    for line in result.text.split("\n"):
        if line in (fence_open(), FENCE):
            inside = line == fence_open()
        elif inside:
            assert line.startswith("- "), line


def test_extract_and_summary_of_a_rule_block_are_rule_lines(engine: Engine) -> None:
    """Too long for its share, a rule block gives the rules that answer (extract) or its first
    rules (summary), still one line each, never a run-on line."""
    rows = engine.store.sources.live_from_source("file:AGENTS.md#agent-rules", engine.project.scope)
    [memory] = engine.store.get_many([i for i, _, _ in rows]).values()
    query = relevance.query("can I add a runtime dependency?", {}, 0)
    counter = engine.store.counter
    options = dict(
        items.Renderings(engine.store, query, {memory.id: 25}, {}).of(Scored(memory, 1.0))
    )
    assert set(options) == {"extract", "summary", "micro"}
    lines = item_line(memory.kind, options["extract"], [memory.kind], rules=True).split("\n")
    assert "- MUST NOT: add a runtime dependency without an ADR" in lines, lines
    assert set(lines) < set(RULES.split("\n")), lines  # whole rules, one a line, not all of them
    assert counter.count(options["extract"]) <= 25
    summary = dict(
        items.Renderings(engine.store, None, {memory.id: 25}, {}).of(Scored(memory, 1.0))
    )
    lines = item_line(memory.kind, summary["summary"], [memory.kind], rules=True).split("\n")
    assert lines[:3] == RULES.split("\n"), lines


def test_the_micro_of_a_rule_block_is_the_rule_nearest_the_input(engine: Engine) -> None:
    """A censor squeezed to a micro (a small censors cap) says the one rule the input is
    nearest, on one line, not the first rules run together with `;`."""
    rows = engine.store.sources.live_from_source("file:AGENTS.md#agent-rules", engine.project.scope)
    [memory] = engine.store.get_many([i for i, _, _ in rows]).values()
    query = relevance.query("can I edit the generated migrations?", {}, 0)
    options = dict(
        items.Renderings(engine.store, query, {memory.id: 8}, {}).of(Scored(memory, 1.0))
    )
    micro = options["micro"]
    assert "migrations" in micro and ";" not in micro and "\n" not in micro, micro
    assert engine.store.counter.count(micro) <= 20
    plain = dict(items.Renderings(engine.store, None, {memory.id: 8}, {}).of(Scored(memory, 1.0)))
    assert "secrets" in plain["micro"] and "\n" not in plain["micro"], plain["micro"]


def test_a_lead_in_is_shortened_to_its_modal_phrase_only_when_it_tells_the_reader() -> None:
    assert rules.lead_in("Agents MUST NOT:") == "MUST NOT:"
    assert rules.lead_in("AI agents should never:") == "should never:"
    assert rules.lead_in("Agents MUST use:") == "MUST use:"
    assert rules.lead_in("Options MUST NOT:") == "Options MUST NOT:"  # the subject matters
    assert (
        rules.lead_in("Before making changes, agents MUST:")
        == "Before making changes, agents MUST:"
    )
    assert rules.lead_in("Testing libraries") == "Testing libraries:"


def test_a_table_row_is_one_rule_each_cell_led_by_its_header() -> None:
    from nous.text.markdown import units

    content = (
        "# AGENTS.md: API › Prohibited\n\n| Don't | Why |\n| --- | --- |\n"
        "| Call `println` | use the logger |\n| Edit a migration | checksums fail |\n"
    )
    found = units(content)
    body = [u for u in found if u.kind != "heading"]
    assert rules.lines(found[0].text, body, found).split("\n") == [
        "[Prohibited] Don't: Call `println`; Why: use the logger",
        "Don't: Edit a migration; Why: checksums fail",
    ]
    # an empty cell is left out
    found = units("# T\n\n| Rule | Why |\n| --- | --- |\n| no globals |\n")
    assert rules.lines("T", [u for u in found if u.kind != "heading"], found) == "Rule: no globals"


@pytest.mark.parametrize(("mode", "text"), ASKED)
def test_every_section_reports_the_cap_it_had(engine: Engine, mode: str, text: str) -> None:
    result = ask(engine, mode, text)
    for section in result.sections:
        assert section.used <= section.cap <= result.budget, (
            section.layer,
            section.used,
            section.cap,
        )
        if section.items:
            assert section.cap > 0, section.layer


def test_a_startup_section_has_the_tiers_its_items_drew_on(engine: Engine) -> None:
    """At startup the first pass fills scope tiers, not layers: the rules (project memories)
    report the project tier, not 0 (`[rules] 94/0` before)."""
    result = ask(engine, "startup", "")
    startup = configs.defaults().startup
    tiers = sum(startup.model_dump().values())
    project = startup.project * result.budget // tiers
    [section] = [s for s in result.sections if s.layer == "rules"]
    assert 0 < section.used <= section.cap == project


def test_the_cli_manifest_prints_each_sections_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = write_workspace(tmp_path)
    where = ["--workspace", str(ws), "--db", str(tmp_path / "m.db")]
    assert cli.main([*where, "harvest"]) == 0
    capsys.readouterr()
    assert cli.main([*where, "context", "--mode", "startup", ""]) == 0
    out = capsys.readouterr().out
    shown = dict(re.findall(r"^ +\[(\w+)\] (\d+/\d+)$", out, re.M))
    used, cap = (int(n) for n in shown["rules"].split("/"))
    assert 0 < used <= cap, out
    assert all(int(u) <= int(c) for u, c in (v.split("/") for v in shown.values())), out
