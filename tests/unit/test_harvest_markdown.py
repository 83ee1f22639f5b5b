"""The harvest reads Markdown as a tree: rule shapes from the real development repositories
(`../shared/eval/repos`) keep their polarity, wrapped bullets and code stay whole, ADR statuses
are read in every form those repositories use, and no ADR summary is a bare title."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nous.context import extract, relevance
from nous.memory import lifecycle, renderings
from nous.text import markdown, tokens
from nous.workspace.harvest import adr, instructions, procedures, sync
from nous.workspace.harvest.model import Harvested

REPOS = Path(__file__).resolve().parents[3] / "shared" / "eval" / "repos"
if not REPOS.is_dir():  # CI has ../shared beside the clone; without it these cannot run
    if os.environ.get("CI"):
        raise RuntimeError(f"development repositories missing at {REPOS}")
    pytest.skip(f"no development repositories at {REPOS}", allow_module_level=True)


def harvest(repo: str, rel: str) -> list[Harvested]:
    text = (REPOS / repo / rel).read_text(encoding="utf-8")
    if instructions.matches(rel):
        return instructions.harvest(rel, text)
    if adr.matches(rel, text):
        return adr.harvest(rel, text)
    return procedures.harvest(rel, text)


def holding(items: list[Harvested], phrase: str) -> Harvested:
    [found] = [h for h in items if phrase in h.content]
    return found


def test_must_not_list_items_stay_prohibitions() -> None:
    record = holding(harvest("thunderbird-android", "AGENTS.md"), "Add telemetry, analytics")
    assert record.kind == "constraint"
    assert (
        "Agents MUST NOT:\n- Add telemetry, analytics, ads, or tracking of any kind"
        in record.content
    )
    # every item of the list sits under its lead-in, none is a free-standing positive rule
    body = record.content.split("Agents MUST NOT:\n", 1)[1].split("\n\n", 1)[0]
    assert all(line.startswith("- ") for line in body.splitlines()) and len(body.splitlines()) == 7


def test_extract_of_a_prohibition_keeps_its_lead_in() -> None:
    record = holding(harvest("thunderbird-android", "AGENTS.md"), "Add telemetry, analytics")
    counter = tokens.counter()
    query = relevance.query("Can I add an analytics SDK?", {}, 0)
    text = extract.extract(record.content, query, 80, counter)
    assert text is not None and "Agents MUST NOT: Add telemetry, analytics" in text
    assert counter.count(text) <= 80


def test_a_stored_table_is_read_back_as_rows() -> None:
    """A table is stored with its delimiter row, so the stored record is a table again: one
    unit a row with the header as its lead, never one run-on "| Don't | Why | | Call …"; its
    rows are prohibitions when its header says so."""
    text = (
        "# Orders API\n\n## Prohibited\n\n| Don't | Why |\n|---|---|\n"
        "| Call `System.out.println` | use the SLF4J logger |\n"
        "| Change a published Flyway migration | checksums fail |\n"
    )
    [record] = [h for h in instructions.harvest("AGENTS.md", text) if "Flyway" in h.content]
    assert "| --- | --- |" in record.content
    assert record.kind == "constraint"  # a table whose header says "Don't" lists prohibitions
    rows = [u for u in markdown.units(record.content) if u.kind == "row"]
    assert [(u.lead, u.text) for u in rows] == [
        ("Don't | Why", "Call `System.out.println` | use the SLF4J logger"),
        ("Don't | Why", "Change a published Flyway migration | checksums fail"),
    ]


def test_never_inside_a_bullet_makes_a_constraint() -> None:
    record = holding(harvest("celestia-app", "CLAUDE.md"), "Never force push")
    assert record.kind == "constraint"
    assert (
        "Merge upstream, fix conflicts, then push. Never force push unless absolutely necessary."
        in record.content
    )


def test_must_not_in_a_nested_agents_file() -> None:
    items = harvest("agent-framework", "python/AGENTS.md")
    record = holding(items, "must not update")
    assert record.anchor.startswith("file:python/AGENTS.md#")
    assert "subtree:python" in record.tags and "instructions" in record.tags


def test_wrapped_bullet_stays_whole_and_code_comments_are_not_headings() -> None:
    doc = markdown.parse(
        "# T\n\n- first line of a rule\n  that wraps here\n- second\n\n```sh\n# not a heading\nmake build\n```\n"
    )
    [section] = doc.sections
    assert section.blocks[0].items == ["first line of a rule that wraps here", "second"]
    assert section.blocks[1].kind == "code" and "# not a heading" in section.blocks[1].text
    items = harvest("celestia-app", "CLAUDE.md")
    assert not any(
        h.content.startswith("# CLAUDE.md: CLAUDE.md › Build multiplexer") for h in items
    )
    building = holding(items, "# Build v10-only version (no embedded binaries)")
    assert (
        "When editing Go code, always run `make build`" in building.content
    )  # code keeps its intro


def test_stray_fence_never_leaks_into_text() -> None:
    doc = markdown.parse("# T\n\nSome text.\n\n```\nunclosed code\n")
    assert all(
        "```" not in (b.text or "") for s in doc.sections for b in s.blocks if b.kind != "code"
    )


@pytest.mark.parametrize(
    ("repo", "rel", "status", "written"),
    [
        ("thunderbird-android", "docs/engineering/adr/0003-switch-test-assertions-from-truth-to-assertk.md", "reviewed", "Accepted"),
        ("agent-framework", "docs/decisions/0012-python-typeddict-options.md", "pending", "proposed"),
        ("agent-framework", "docs/decisions/0002-agent-tools.md", "pending", "{proposed}"),
        ("celestia-app", "docs/architecture/adr-019-strict-inflation-schedule.md", "reviewed", "Implemented in"),
        ("celestia-app", "docs/architecture/adr-draft-spectrum-spec.md", None, None),
    ],
)  # fmt: skip
def test_adr_status_in_every_form(
    repo: str, rel: str, status: str | None, written: str | None
) -> None:
    assert adr.matches(rel)
    main = harvest(repo, rel)[0]
    if written is not None:
        assert main.status == status and f"(status: {written}" in main.content.split("\n", 1)[0]


def test_adr_leads_with_the_chosen_option_not_the_drivers() -> None:
    """MADR's "Decision Drivers" start with "Decision" but are the forces, not the decision: the
    main record leads with "Chosen option: …" (the answer to "why was X moved?")."""
    main = harvest("agent-framework", "docs/decisions/0021-provider-leading-clients.md")[0]
    _heading, body = renderings.flat(main.content)
    assert body.startswith('Chosen option: "Extract OpenAI, place Azure wrappers in azure-ai"')
    assert "Discoverability-first" not in main.content


LOGGING_RFC = """# How To Log Before Config Resolution

## Overview

The collector cannot create its primary logger until the configuration is resolved. There is a
need to write logs during startup, before the primary logger is instantiated, such as during
configuration resolution or validation. This document describes why logging during startup
matters, the current behavior of the collector and different solutions to the problem.

## Solutions

### Buffer Logs in Memory

A temporary logger keeps the logs in memory until the primary logger exists.

### Create a Logger Using the Defaults

The collector could create a logger from the default values very early in startup and use it
until the primary logger is instantiated. Benefits: the order of the messages is preserved.
Downsides: messages may be written in a format that differs from the primary logger's.

## Accepted Solution

[Buffer Logs in Memory](#buffer-logs-in-memory)

This solution allows the collector to write out the logs in the user-specified format whenever
possible.
"""


@pytest.mark.parametrize("heading", ["Accepted Solution", "Agreed solution", "Resolution"])
def test_an_rfcs_accepted_solution_is_its_decision(heading: str) -> None:
    """RFC templates name the decision "Accepted Solution" (opentelemetry-collector), "Agreed
    solution" (sentry-cocoa) or "Resolution": the main record says it, not the overview."""
    text = LOGGING_RFC.replace("## Accepted Solution", f"## {heading}")
    records = adr.harvest("docs/rfcs/logging-before-config-resolution.md", text)
    _heading, body = renderings.flat(records[0].content)
    assert body.startswith("Buffer Logs in Memory This solution allows the collector"), body
    anchors = [r.anchor for r in records]
    assert not any(a.endswith(heading.lower().replace(" ", "-")) for a in anchors), anchors
    assert any(a.endswith("#adr-0-overview") for a in anchors)


TRACING_RFC = """# RFC 8025 - 2021-08-13 - Internal Tracing

## Status

The team decided not to move forward with this change. Implementing tracing within the agent is
not a worthy goal in itself, and there is a clearer, cheaper path to addressing the pain points
laid out in this RFC via more granular timing metrics.

## Scope

### In scope

- Instrumenting components with tracing spans
- Sending internal tracing spans to Datadog APM via the Datadog Agent

### Out of scope

- Sending internal traces anywhere other than Datadog APM

## Motivation

Diagnosing performance issues in deployed pipelines is slow: users report that throughput drops,
and we have no view of where inside the topology the time goes.
"""


def test_a_status_said_in_sentences_is_the_decision() -> None:
    """vector's RFC 8025 says what was decided, and why, in its Status section: the main record
    leads with it, and its title says the state in a word ("decided not to" is Rejected, not
    the sentence's first eight words). A status that is only a word ("Rejected") is the
    record's state, not its decision; a rejected proposal is a decision made, kept in context
    (the record that chose otherwise answers "could we do X?"), a withdrawn one is not."""
    records = adr.harvest("rfcs/2021-08-13-8025-internal-tracing.md", TRACING_RFC)
    heading, body = renderings.flat(records[0].content)
    assert body.startswith("The team decided not to move forward with this change."), body
    assert "more granular timing metrics" in body
    assert heading == "RFC 8025: Internal Tracing (status: Rejected)", heading
    assert records[0].status == "reviewed"
    assert not lifecycle.is_excluded("decision", records[0].status)
    said = TRACING_RFC[TRACING_RFC.index("The team") : TRACING_RFC.index("## Scope")]
    for status, state in (("Rejected", "reviewed"), ("Declined", "reviewed"),
                          ("Withdrawn", "inactive")):  # fmt: skip
        records = adr.harvest("rfcs/2021-08-13-8025-internal-tracing.md",
                              TRACING_RFC.replace(said, f"{status}\n\n"))  # fmt: skip
        assert records[0].status == state, status
        heading, body = renderings.flat(records[0].content)
        assert f"(status: {status})" in heading and status not in body
    agreed = TRACING_RFC.replace("decided not to move forward with", "decided to go ahead with")
    heading, _body = renderings.flat(adr.harvest("rfcs/8025-tracing.md", agreed)[0].content)
    assert heading.endswith("(status: Decided)"), heading


def test_a_status_word_before_the_sentences_stays_in_the_title() -> None:
    """kitsune's ADR 6 (tune split): "Proposed — pending policy approval." then what holds until
    then. The state is the title's; the decision is the paragraph that says what holds."""
    text = TRACING_RFC.replace(
        "The team decided",
        "Proposed — pending restricted-content policy approval.\n\nThe team decided",
    )
    main = adr.harvest("rfcs/2021-08-13-8025-internal-tracing.md", text)[0]
    title, body = renderings.flat(main.content)
    assert "(status: Proposed — pending restricted-content policy approval" in title
    assert main.status == "pending"
    assert body.startswith("The team decided not to move forward with this change."), body


BATCHING_RFC = """# Migration for batching

## Overview

The Collector now offers two batching mechanisms:

1. The batch processor component, used in pipelines for many years.
2. The exporterhelper queue/batch sender, ready to replace it.

We find a small number of users still require a batch processor, for example when several
exporters share one batching step.

At the same time, the batch processor has several known defects.

Our goal is to migrate most users away from the batch processor and
enable batching by default for all exporterhelper users.

## Background

This supersedes an unmerged draft.
"""


def test_a_record_without_a_decision_leads_with_its_stated_goal() -> None:
    """opentelemetry-collector's batching RFC (check split) has no decision section; its
    overview states the goal after four blocks of background. The main record says the goal
    first, then the opening block; a record whose first blocks already say what it proposes
    keeps them."""
    main = adr.harvest("docs/rfcs/batching-migration.md", BATCHING_RFC)[0]
    _title, body = renderings.flat(main.content)
    assert body.startswith("Our goal is to migrate most users away from the batch processor"), body
    assert "offers two batching mechanisms" in body
    assert "known defects" not in body
    plain = BATCHING_RFC.replace("Our goal is to", "Later, we may")
    _title, body = renderings.flat(adr.harvest("docs/rfcs/batching-migration.md", plain)[0].content)
    assert body.startswith("The Collector now offers two batching mechanisms"), body
    assert "Later, we may" not in body


def test_a_main_record_split_for_size_is_one_decision() -> None:
    """A decision too long for one record is split; its further parts are sections of it: they
    bring the first part (which says the decision) when admitted, and never stand for it."""
    reason = "the queue keeps each event until the sink acknowledges it: a restart loses nothing"
    reasons = "\n".join(f"- Reason {n}: {reason} ({n})." for n in range(30))
    decision = f"## Decision\n\nWe buffer on disk.\n\n{reasons}\n"
    text = f"# 7. Use a disk buffer\n\n## Status\n\nAccepted\n\n{decision}"
    records = adr.harvest("docs/adr/0007-disk-buffer.md", text)
    parts = [r for r in records if "#adr-7" in r.anchor and "adr-section" not in r.tags]
    assert [r.anchor for r in parts] == ["file:docs/adr/0007-disk-buffer.md#adr-7"]
    more = [r for r in records if "-decision-" in r.anchor]
    assert more and all("adr-section" in r.tags and "adr-7" in r.tags for r in more)
    assert all(r.importance == 0.8 for r in [*parts, *more])


def test_no_adr_summary_is_a_bare_title() -> None:
    counter = tokens.counter()
    seen = 0
    for repo in ("thunderbird-android", "agent-framework", "celestia-app"):
        root = REPOS / repo
        for rel in sync.candidates(root):
            text = (root / rel).read_text(encoding="utf-8")
            if instructions.matches(rel) or not adr.matches(rel, text):
                continue
            main = adr.harvest(rel, text)[0]
            seen += 1
            _heading, body = renderings.flat(main.content)
            summary = renderings.summary("decision", main.content, None, 1.0, counter)
            assert len(body.split()) >= 8, rel
            assert len(summary.split(" — ", 1)[-1].split()) >= 8, rel
    assert seen >= 70


def test_linked_docs_and_nested_instruction_files_are_found() -> None:
    found = sync.candidates(REPOS / "agent-framework")
    assert "python/packages/mem0/AGENTS.md" in found
    assert "dotnet/.github/skills/build-and-test/SKILL.md" in found
    assert "docs/decisions/adr-template.md" not in found or not adr.matches(
        "docs/decisions/adr-template.md"
    )
    assert "x/forwarding/CLAUDE.md" in sync.candidates(REPOS / "celestia-app")


def test_sentences_know_abbreviations_and_numbers() -> None:
    text = "Use a fake, e.g. a stub. See step 1. Then run it. Version 2.0 is out."
    assert markdown.sentences(text) == [
        "Use a fake, e.g. a stub.",
        "See step 1. Then run it.",
        "Version 2.0 is out.",
    ]
    counter = tokens.counter()
    micro = renderings.micro(
        "fact",
        "Prefer fakes, e.g. hand-written stubs, over mocks in every unit test you write.",
        None,
        1.0,
        counter,
    )
    assert "e.g." not in micro or "stubs" in micro


def test_a_headings_attribute_list_is_not_part_of_its_title() -> None:
    """MkDocs and Pandoc write `## Context {#context}`: openai-agents' translated pages showed
    "[컨텍스트 {#context}]". Braces that are words of the title stay."""
    from nous.text import markdown

    doc = markdown.parse("# Guide\n\n## 컨텍스트 {#context}\n\nA.\n\n## Tabs {.tabs #x}\n\nB.\n\n"
                         "## Keep {braces} here\n\nC.\n")  # fmt: skip
    titles = [s.path[-1] for s in doc.sections if len(s.path) == 2]
    assert titles == ["컨텍스트", "Tabs", "Keep {braces} here"]


def test_a_lead_in_that_ends_a_sentence_takes_no_second_colon() -> None:
    """ "… in the test.: `make tests`" and a full-width "配置：:" read as typos."""
    from nous.context import extract, relevance, rules
    from nous.text import tokens

    assert rules.lead_in("配置：") == "配置：" and rules.lead_in("Run it") == "Run it:"
    content = ("# T: Tests\n\nDocument that boundary in the test.\n\n```sh\nmake tests\n```\n\n"
               "- 配置：\n  - set `X=1`\n")  # fmt: skip
    text = extract.extract(content, relevance.query("make tests boundary", {}, 0), 200,
                           tokens.counter())  # fmt: skip
    assert text is not None and "make tests" in text and ".:" not in text, text
