"""Decision records not called ADRs, harvested through the real path (`Engine.harvest` on a
temporary workspace of real files): a single file of numbered decisions, RFC folders without a
status field, and later records that say they reverse earlier ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.settings import Settings

DECISIONS = """# Decision Log

## Table of Contents

- [1. Not capturing screenshots for crashes](#1-not-capturing-screenshots-for-crashes)
- [2. Manually installing iOS 12 simulators](#2-manually-installing-ios-12-simulators)
- [3. Remove running unit tests on iOS 12 simulators](#3-remove-running-unit-tests-on-ios-12-simulators)
- [4. Deserializing events](#4-deserializing-events)

## 1. Not capturing screenshots for crashes

Date: April 21st 2022
Contributors: @philipphofmann

We decided against capturing screenshots for crashes because we must only call async-safe
functions in signal handlers.

## 2. Manually installing iOS 12 simulators <a name="ios-12-simulators"></a>

Date: October 21st 2022

GH actions removes the image with an iOS 12 simulator, so we install the iOS 12 simulator by hand
on every CI run and keep running the unit tests there.

## 3. Remove running unit tests on iOS 12 simulators

Date: April 12th 2023

Installing the simulator takes up to 15 minutes and makes CI slow. We run UI tests on an iPhone
with iOS 12 instead of unit tests. This decision reverts
[manually installing iOS 12 simulators](#ios-12-simulators).

## 4. Deserializing events

Date: January 16, 2025

Decision: we add a Swift decoder beside the Objective-C classes and keep them public.

### Background

Hybrid SDKs send events as JSON that we must turn back into the protocol classes.
"""

RFC = """# {title}

## Summary

{summary}

## Motivation

Users keep asking for this because the current behaviour surprises them in production.

## Proposal

{proposal}
"""


def write(ws: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)


def rfc(title: str, summary: str, proposal: str = "Implement it in the core crate.") -> str:
    return RFC.format(title=title, summary=summary, proposal=proposal)


def harvest(ws: Path, tmp_path: Path, embedder: OnnxEmbedder) -> Engine:
    engine = Engine(Settings(db=tmp_path / "memory.db"), ws, embedder=embedder)
    report = engine.harvest()
    assert report["errors"] == []
    return engine


def rows(engine: Engine, prefix: str) -> dict[str, tuple[str, str, str, str, str | None]]:
    """{source: (id, kind, status, content, superseded_by)} of the live rows of one file."""
    return {
        str(s): (str(i), str(k), str(st), str(c), sb)
        for i, s, k, st, c, sb in engine.store._conn.execute(
            "SELECT id, source, kind, status, content, superseded_by FROM memories "
            "WHERE status != 'inactive' AND source LIKE ?",
            (f"file:{prefix}%",),
        )
    }


def tags_of(engine: Engine, source: str) -> list[str]:
    [(memory_id,)] = engine.store._conn.execute(
        "SELECT id FROM memories WHERE source = ? AND status != 'inactive'", (source,)
    ).fetchall()
    return engine.store.get(str(memory_id)).tags


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def test_decision_log_entries_become_decision_records(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    write(ws, {"develop-docs/DECISIONS.md": DECISIONS})
    engine = harvest(ws, tmp_path, real_embedder)
    found = rows(engine, "develop-docs/DECISIONS.md#")
    mains = {s.split("#")[1]: r for s, r in found.items() if s.split("#")[1].count("-") == 1}
    assert sorted(mains) == ["adr-1", "adr-2", "adr-3", "adr-4"]
    assert all(kind == "decision" for _i, kind, _s, _c, _sb in found.values())
    assert mains["adr-1"][3].startswith("# Decision 1: Not capturing screenshots for crashes")
    assert "async-safe" in mains["adr-1"][3]
    assert "Swift decoder" in mains["adr-4"][3]  # the entry's decision leads its main record
    # a short entry stays whole: its answer is not split between two records
    assert "15 minutes" in mains["adr-3"][3] and "This decision reverts" in mains["adr-3"][3]
    background = found["file:develop-docs/DECISIONS.md#adr-4-background"][3]
    assert background.startswith("# Decision 4: Deserializing events › Background")
    main_tags = tags_of(engine, "file:develop-docs/DECISIONS.md#adr-4")
    assert "adr" in main_tags and "adr-4" in main_tags and "adr-section" not in main_tags
    assert "adr-section" in tags_of(engine, "file:develop-docs/DECISIONS.md#adr-4-background")
    assert not any("Table of Contents" in c for _i, _k, _s, c, _sb in found.values())


def test_decision_log_entry_that_reverts_an_earlier_one_supersedes_it(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    write(ws, {"develop-docs/DECISIONS.md": DECISIONS})
    engine = harvest(ws, tmp_path, real_embedder)
    found = rows(engine, "develop-docs/DECISIONS.md#")
    old, new = (
        found["file:develop-docs/DECISIONS.md#adr-2"],
        found["file:develop-docs/DECISIONS.md#adr-3"],
    )
    assert old[2] == "superseded" and old[4] == new[0]
    assert new[2] == "recorded" and new[4] is None
    assert found["file:develop-docs/DECISIONS.md#adr-1"][2] == "recorded"
    engine.harvest()  # unchanged: stays as it is
    assert (
        rows(engine, "develop-docs/DECISIONS.md#adr-2")["file:develop-docs/DECISIONS.md#adr-2"][2]
        == "superseded"
    )


def test_rfc_folder_without_status_fields_is_decision_records(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """opentelemetry-collector's docs/rfcs/: unnumbered names, no status field, a README that
    says the folder holds accepted design documents; a template is no decision."""
    write(ws, {
        "docs/rfcs/README.md": "# Collector RFCs\n\nThis folder contains accepted design "
                               "documents for the Collector.\n",
        "docs/rfcs/env-vars.md": rfc("Stabilizing environment variable resolution",
                                     "The naked syntax supported in bash is not supported."),
        "docs/rfcs/template.md": rfc("Title of the RFC", "One paragraph explanation."),
        "rfcs/2020-04-06-1858-request-limits.md": rfc(
            "RFC 1858 - 2020-04-06 - Automatically Adjust Request Limits",
            "Adjust the request limits of sinks automatically, like TCP congestion control."),
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    env = rows(engine, "docs/rfcs/env-vars.md#")
    main = env["file:docs/rfcs/env-vars.md#adr-0"]
    assert main[1] == "decision" and main[2] == "reviewed"
    assert main[3].startswith(
        "# RFC: Stabilizing environment variable resolution (status: accepted)"
    )
    assert not rows(engine, "docs/rfcs/template.md")
    dated = rows(engine, "rfcs/2020-04-06-1858-request-limits.md#")
    main = dated["file:rfcs/2020-04-06-1858-request-limits.md#adr-1858"]
    assert main[2] == "recorded"  # no README says what a merged RFC is
    assert main[3].startswith("# RFC 1858: Automatically Adjust Request Limits\n")


def test_numbered_folder_of_records_is_found_by_shape(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    write(ws, {
        "design/0001-object-api.md": rfc("Object API", "Expose objects instead of paths."),
        "design/0002-error-handling.md": rfc("Error handling", "Return typed errors."),
        "design/0003-streaming.md": rfc("Streaming", "Stream bodies instead of buffering."),
        "design/0000_example.md": rfc("Example", "Copy this file to start an RFC."),
        "design/notes.md": "# Notes\n\nThe meeting notes of the design group live here.\n",
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    main = rows(engine, "design/0002-error-handling.md#")[
        "file:design/0002-error-handling.md#adr-2"
    ]
    assert main[1] == "decision" and main[3].startswith("# ADR 2: Error handling")
    assert not rows(engine, "design/0000_example.md")
    assert {k for _i, k, _s, _c, _sb in rows(engine, "design/notes.md#").values()} == {"fact"}


def test_rfc_that_says_it_supersedes_another_links_it(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    readme = "# RFCs\n\nOnce the RFC is accepted, the PR will be merged and the RFC will become 'active'.\n"
    write(ws, {
        "rfcs/README.md": readme,
        "rfcs/0599_blocking_api.md": rfc("Blocking API", "We are adding a blocking API."),
        "rfcs/6189_remove_native_blocking.md": rfc(
            "Remove native blocking", "Use block_on in the async runtime instead.",
            "This RFC supersedes RFC 0599. All native blocking implementations go."),
        "rfcs/2779_list_with_metakey.md": rfc("List with metakey", "Let list take a metakey."),
        "rfcs/5314_remove_metakey.md": rfc(
            "Remove metakey", "Services declare their metadata capabilities instead.",
            "This RFC replaces [RFC-2779](./2779_list_with_metakey.md) entirely."),
        "rfcs/0112_path_normalization.md": rfc("Path normalization", "Normalize every path."),
        "rfcs/7799_path_hardening.md": rfc(
            "Path hardening", "Preserve all characters within a path.",
            "This RFC removes the `trim()` call. RFC 3986 defines how to remove dot segments."),
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)

    def main(rel: str) -> tuple[str, str, str, str, str | None]:
        return rows(engine, f"rfcs/{rel}#")[f"file:rfcs/{rel}#adr-{int(rel.split('_')[0])}"]

    for old, new in (("0599_blocking_api.md", "6189_remove_native_blocking.md"),
                     ("2779_list_with_metakey.md", "5314_remove_metakey.md")):  # fmt: skip
        sections = rows(engine, f"rfcs/{old}#")
        assert len(sections) > 1
        assert {(st, sb) for _i, _k, st, _c, sb in sections.values()} == {
            ("superseded", main(new)[0])
        }
        assert main(new)[2] == "reviewed" and main(new)[4] is None
    assert main("0112_path_normalization.md")[2] == "reviewed"  # never said to be replaced


def test_adr_whose_status_says_superseded_after_implemented_is_superseded(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """celestia-app's ADR-009: "Implemented. Superseded by [ADR-013](./adr-013-….md)."."""
    adr = "# ADR {n}: {t}\n\n## Status\n\n{s}\n\n## Context\n\nBlobs need padding between them.\n\n## Decision\n\n{d}\n"
    write(ws, {
        "docs/architecture/adr-009-reduced-padding.md": adr.format(
            n="009", t="Reduced padding", d="Place blobs at multiples of the min square size.",
            s="Implemented. Superseded by [ADR-013](./adr-013-zero-padding.md)."),
        "docs/architecture/adr-013-zero-padding.md": adr.format(
            n="013", t="Zero padding", d="Place blobs right after each other.", s="Implemented"),
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    old = rows(engine, "docs/architecture/adr-009")
    new = rows(engine, "docs/architecture/adr-013")[
        "file:docs/architecture/adr-013-zero-padding.md#adr-13"
    ]
    assert {(st, sb) for _i, _k, st, _c, sb in old.values()} == {("superseded", new[0])}


def test_rfc_marked_archived_or_reverted_is_not_labelled_accepted(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """vector's `> **Archived:** This RFC is kept for historical reference only.` and opendal's
    `**Reverted**` say more than the folder README; opendal's RFCs open with `# Summary`, so
    the file names the record."""
    archived = "> **Archived:** This RFC is kept for historical reference only.\n\n"
    write(ws, {
        "rfcs/README.md": "# RFCs\n\n3. Once approved, self-merge your RFC.\n",
        "rfcs/2020-05-25-2685-dev-workflow.md": rfc("RFC 2685 - 2020-05-28 - Dev Workflow",
                                                    archived + "Add a dev container."),
        "rfcs/0191_async_streaming_io.md": "- Proposal Name: `async_streaming_io`\n\n"
            "**Reverted**\n\n# Summary\n\nUse Stream and Sink instead of AsyncRead in the "
            "accessor trait.\n\n# Motivation\n\nThe accessor wraps every reader twice over.\n",
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    main = rows(engine, "rfcs/2020-05-25")["file:rfcs/2020-05-25-2685-dev-workflow.md#adr-2685"]
    assert main[3].startswith("# RFC 2685: Dev Workflow (status: Archived)\n\n> Archived: This RFC")
    assert main[2] == "recorded"
    main = rows(engine, "rfcs/0191")["file:rfcs/0191_async_streaming_io.md#adr-191"]
    assert main[3].startswith("# RFC 191: async streaming io (status: Reverted)")


MADR = """# Use {name} for the event store

## Status

Accepted

## Context

We need transactions across the event log and the projections.

## Decision

We store events in {name}, one table per aggregate type.
"""


def test_adr_names_other_tools_give_are_decision_records(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """log4brains' `20240115-….md`, a bare `ADR-0003.md`, and an unnumbered record in an ADR
    folder (found by its Status and Context/Decision sections) are decisions; the folder's
    README is not."""
    ws = tmp_path / "ws"
    (ws / "docs" / "adr").mkdir(parents=True)
    files = {
        "docs/adr/20240115-use-postgresql.md": MADR.format(name="PostgreSQL"),
        "docs/adr/ADR-0003.md": MADR.format(name="EventStoreDB"),
        "docs/adr/use-kafka.md": MADR.format(name="Kafka"),
        "docs/adr/README.md": "# Decisions\n\n## Status\n\nSee below.\n\n## Decision log\n\n- [x](x.md)\n",
    }
    for rel, text in files.items():
        (ws / rel).write_text(text)
    engine = Engine(Settings(db=tmp_path / "memory.db"), ws, embedder=real_embedder)
    try:
        assert engine.harvest()["errors"] == []
        rows = engine.store._conn.execute(
            "SELECT source, kind, content FROM memories WHERE source LIKE 'file:docs/adr/%'"
        ).fetchall()
        decisions = {s.split("#")[0]: c for s, k, c in rows if k == "decision"}
        assert set(decisions) == {f"file:{rel}" for rel in files if "README" not in rel}
        assert decisions["file:docs/adr/20240115-use-postgresql.md"].startswith(
            "# ADR 2024-01-15: Use PostgreSQL"
        )
        assert decisions["file:docs/adr/ADR-0003.md"].startswith("# ADR 3: Use EventStoreDB")
    finally:
        engine.store.close()
