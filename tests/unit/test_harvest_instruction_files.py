"""Instruction files as the development repositories lay them out, harvested through the real
path (`Engine.harvest` on a temporary workspace of real files and real symlinks): a symlinked or
copied CLAUDE.md is stored once under the file it stands for, `@path` imports make the imported
file an instruction file, and nested lower-case `agents.md` files govern their subtree."""

from __future__ import annotations

from pathlib import Path

import pytest

from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.settings import Settings
from nous.workspace.harvest import candidates, instructions, sync

RULES = (
    "# Rules\n\n- Never push directly to main; open a pull request.\n"
    "- Run `make lint` before every commit you make.\n"
)


def write(ws: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)


def harvest(ws: Path, tmp_path: Path, embedder: OnnxEmbedder) -> Engine:
    engine = Engine(Settings(db=tmp_path / "memory.db"), ws, embedder=embedder)
    report = engine.harvest()
    assert report["errors"] == []
    return engine


def live(engine: Engine) -> list[tuple[str, str, str, str]]:
    """(source, kind, content, tags) of every live harvested row."""
    return [
        (str(s), str(k), str(c), str(t))
        for s, k, c, t in engine.store._conn.execute(
            "SELECT source, kind, content, tags FROM memories "
            "WHERE status != 'inactive' AND source LIKE 'file:%'"
        )
    ]


def holding(engine: Engine, phrase: str) -> list[tuple[str, str, str, str]]:
    return [row for row in live(engine) if phrase in row[2]]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def test_symlinked_claude_md_is_stored_once_under_agents_md(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    write(ws, {"AGENTS.md": RULES})
    (ws / "CLAUDE.md").symlink_to("AGENTS.md")
    engine = harvest(ws, tmp_path, real_embedder)
    [(source, kind, content, _tags)] = holding(engine, "Never push directly to main")
    assert source.startswith("file:AGENTS.md#") and content.startswith("# AGENTS.md: Rules")
    assert kind == "constraint"
    assert not [row for row in live(engine) if row[0].startswith("file:CLAUDE.md")]


def test_symlink_to_a_plain_doc_makes_it_the_instruction_file(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """`CLAUDE.md → docs/agent-rules.md`: the rules are the target's, stored once under its
    name as rules for the whole workspace (not also as a document of docs/)."""
    write(ws, {"docs/agent-rules.md": RULES})
    (ws / "CLAUDE.md").symlink_to("docs/agent-rules.md")
    engine = harvest(ws, tmp_path, real_embedder)
    [(source, kind, _content, tags)] = holding(engine, "Never push directly to main")
    assert source.startswith("file:docs/agent-rules.md#") and kind == "constraint"
    assert "instructions" in tags and "subtree:" not in tags


def test_byte_copies_in_one_folder_are_harvested_once_under_the_canonical_name(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """An evaluation copy flattens the symlink into a copy: AGENTS.md wins; without an
    AGENTS.md, the alphabetically first (CLAUDE.md before GEMINI.md)."""
    nested = RULES.replace("make lint", "make nested-lint")
    write(ws, {"CLAUDE.md": RULES, "AGENTS.md": RULES,
               "sub/GEMINI.md": nested, "sub/CLAUDE.md": nested})  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    assert [r[0].split("#")[0] for r in holding(engine, "make lint")] == ["file:AGENTS.md"]
    assert [r[0].split("#")[0] for r in holding(engine, "make nested-lint")] == [
        "file:sub/CLAUDE.md"
    ]


def test_a_file_that_becomes_a_copy_has_its_own_rules_retired(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    write(
        ws, {"AGENTS.md": RULES, "CLAUDE.md": "# Claude\n\n- Answer in British English please.\n"}
    )
    engine = harvest(ws, tmp_path, real_embedder)
    assert holding(engine, "British English")
    (ws / "CLAUDE.md").write_text(RULES)
    engine.harvest()
    assert not holding(engine, "British English")
    assert [r[0].split("#")[0] for r in holding(engine, "make lint")] == ["file:AGENTS.md"]


def test_flattened_symlink_names_the_instruction_file(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """git without symlink support checks a symlink out as a file holding the target's path
    (opendal's and sentry-cocoa's CLAUDE.md in the development set hold `AGENTS.md`)."""
    write(ws, {"docs/agent-rules.md": RULES, "CLAUDE.md": "docs/agent-rules.md"})
    assert sync.plan(ws).roles["CLAUDE.md"].alias_of == "docs/agent-rules.md"
    engine = harvest(ws, tmp_path, real_embedder)
    [(source, kind, _content, tags)] = holding(engine, "Never push directly to main")
    assert source.startswith("file:docs/agent-rules.md#") and kind == "constraint"
    assert "instructions" in tags


def test_import_line_makes_the_imported_file_an_instruction_file(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """fx-private-relay's AGENTS.md: "Read the following file immediately as it's relevant to
    all workflows: @.agents/agents.md." — here a name no instruction file has."""
    write(ws, {
        "AGENTS.md": "Read the following file immediately, it is relevant to all workflows: "
                     "@docs/agent-rules.md.\n",
        "docs/agent-rules.md": RULES,
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    [(source, kind, _content, tags)] = holding(engine, "Never push directly to main")
    assert source.startswith("file:docs/agent-rules.md#") and kind == "constraint"
    assert "instructions" in tags and "subtree:" not in tags


def test_nested_import_governs_the_importers_folder(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    write(ws, {"api/CLAUDE.md": "Also see @notes/api-rules.md\n", "api/notes/api-rules.md": RULES})
    engine = harvest(ws, tmp_path, real_embedder)
    [(_source, _kind, _content, tags)] = holding(engine, "Never push directly to main")
    assert "instructions" in tags and "subtree:api" in tags and "subtree:api/notes" not in tags


def test_a_file_of_only_import_lines_yields_no_memory_of_its_own(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    write(ws, {
        "CLAUDE.md": "@AGENTS.md\n@docs/agent-rules.md\n- @docs/more-rules.md.\n@.agents/x.md\n",
        "AGENTS.md": RULES,
        "docs/agent-rules.md": "# Style\n\n- Prefer small pure functions over classes.\n",
        "docs/more-rules.md": "# Tests\n\n- Every bug fix comes with a regression test.\n",
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    assert not [row for row in live(engine) if row[0].startswith("file:CLAUDE.md")]
    for phrase in ("Never push directly", "small pure functions", "regression test"):
        [(_source, _kind, _content, tags)] = holding(engine, phrase)
        assert "instructions" in tags


def test_imported_files_links_are_followed_first(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The imported file's Markdown links are read first when documents are capped, like an
    instruction file's own (fx-private-relay: AGENTS.md → @.agents/agents.md → the guides)."""
    monkeypatch.setattr(candidates, "MAX_DOCS", 1)
    write(ws, {
        "AGENTS.md": "@docs/agent-rules.md\n",
        "docs/agent-rules.md": RULES + "\nBackend work: see [the backend guide](backend.md).\n",
        "docs/backend.md": "# Backend\n\nMigrations are reviewed by two people before merging.\n",
        "README.md": "# Shop\n\nThe shop service sells things to people on the web.\n",
    })  # fmt: skip
    assert "docs/backend.md" in sync.candidates(ws) and "README.md" not in sync.candidates(ws)
    engine = harvest(ws, tmp_path, real_embedder)
    assert holding(engine, "reviewed by two people")


def test_imports_stay_inside_the_workspace_and_outside_code(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    ws = tmp_path / "ws"
    write(tmp_path, {"outside.md": "# Out\n\n- OUTSIDE-RULE must never be harvested here.\n"})
    write(ws, {
        "AGENTS.md": "@../outside.md\n@.env.local\n@link.md\n\n```\n@docs/in-code.md\n```\n"
                     "Mention `@docs/in-span.md` and ping @maintainers about it, please.\n",
        ".env.local": "- ENV-RULE never harvested.\n",
        "docs/in-code.md": "# Code\n\n- CODE-RULE is only a document here.\n",
        "docs/in-span.md": "# Span\n\n- SPAN-RULE is only a document here.\n",
    })  # fmt: skip
    (ws / "link.md").symlink_to(tmp_path / "outside.md")
    engine = Engine(Settings(db=tmp_path / "memory.db"), ws, embedder=real_embedder)
    engine.harvest()
    assert not holding(engine, "OUTSIDE-RULE") and not holding(engine, "ENV-RULE")
    for phrase in ("CODE-RULE", "SPAN-RULE"):
        [(_source, _kind, _content, tags)] = holding(engine, phrase)
        assert "instructions" not in tags


def test_nested_lower_case_agents_md_governs_its_subtree(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    write(ws, {
        "emails/agents.md": "# Emails app\n\n- Never send mail inside the web request cycle.\n",
        "api/Claude.md": "# API\n\n- Never expose internal ids in API responses.\n",
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    [(source, kind, _content, tags)] = holding(engine, "web request cycle")
    assert source.startswith("file:emails/agents.md#") and kind == "constraint"
    assert "instructions" in tags and "subtree:emails" in tags
    [(_source, kind, _content, tags)] = holding(engine, "internal ids")
    assert kind == "constraint" and "subtree:api" in tags


OTHER_AGENTS = {
    # (path, rule, the words a question that it answers would use)
    "AGENT.md": "# Rules\n\n- Never commit generated protobuf stubs; run `make proto` in CI.\n",
    ".windsurfrules": "- Do not add a runtime dependency without an ADR.\n- Use pnpm.\n",
    ".rules": "# Zed rules\n\n- Never edit files under migrations/ by hand.\n",
    ".claude/rules/testing.md": (
        '---\npaths: "**/*.py"\n---\n# Testing\n\n- Never mock the database in tests.\n'
    ),
    ".kiro/steering/tech.md": "# Tech\n\n- Do not use moment.js; use date-fns.\n",
    ".windsurf/rules/style.md": "# Style\n\n- Never use default exports.\n",
    ".roo/rules-code/naming.md": "# Naming\n\n- Do not abbreviate identifiers.\n",
    ".junie/guidelines.md": "# Guidelines\n\n- Never log personal data.\n",
    ".continue/rules/review.md": "# Review\n\n- Never merge your own pull request.\n",
}


def test_other_agents_instruction_files_are_rules(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """The names and rule folders other agents read (Amp's AGENT.md, Windsurf, Zed's root
    `.rules`, Claude Code's `.claude/rules/`, Kiro's steering, Roo, Junie, Continue) give the
    project's rules, not documents: tagged as instructions, prohibitions as constraints."""
    write(ws, {**OTHER_AGENTS, "docs/rules/notes.md": "# Notes\n\n- Never trust the cache.\n",
               "pkg/.rules": "- Never call the legacy API.\n"})  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    for path, text in OTHER_AGENTS.items():
        rule = text.split("- ", 1)[1].split(";")[0].split(".")[0]
        [(source, kind, _content, tags)] = holding(engine, rule)
        assert source.startswith(f"file:{path}#"), path
        assert kind == "constraint" and "instructions" in tags, (path, kind, tags)
        assert "subtree:" not in tags, path  # an agent folder at the root governs it all
    # a folder merely called rules, and `.rules` below the root, are not instruction files
    for phrase in ("Never trust the cache", "Never call the legacy API"):
        assert all("instructions" not in tags for *_, tags in holding(engine, phrase))


def test_a_claude_rule_file_scoped_by_paths_is_for_that_language() -> None:
    """Claude Code scopes a `.claude/rules/` file with `paths:` as Cursor does with `globs:`."""
    path = ".claude/rules/testing.md"
    [rule] = instructions.harvest(path, OTHER_AGENTS[path])
    assert rule.language == "python" and rule.kind == "constraint"


def test_pages_about_agents_and_example_skills_are_not_the_projects_rules(
    ws: Path, tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """openai-agents documents its Agent class in `docs/agents.md` and ships example apps with
    their own `SKILL.md`; fastmcp's docs site keeps skills under `docs/.mintlify/`. None of them
    says how to work on the repository: they were a third of its "Project Rules". An agent
    folder still makes a skill one, wherever it lies, and `AGENTS.md` spelled so is one anywhere."""
    write(ws, {
        "AGENTS.md": RULES,
        "docs/agents.md": "# Agents\n\n- Never give an agent more than 128 tools.\n",
        "examples/tools/skills/csv/SKILL.md": "# CSV\n\n- Never load a CSV over 10 MB.\n",
        "docs/.mintlify/skills/cli/SKILL.md": "# CLI\n\n- Never pass a token on the command line.\n",
        ".agents/skills/release/SKILL.md": "# Release\n\n- Never tag a release from a fork.\n",
        "examples/.claude/skills/demo/SKILL.md": "# Demo\n\n- Never run the demo against prod.\n",
        "examples/AGENTS.md": "# Examples\n\n- Never import private modules in an example.\n",
    })  # fmt: skip
    engine = harvest(ws, tmp_path, real_embedder)
    for phrase in ("128 tools", "over 10 MB", "token on the command line"):
        assert all("instructions" not in tags for *_, tags in holding(engine, phrase)), phrase
    for phrase in ("from a fork", "against prod", "private modules"):
        [(_source, kind, _content, tags)] = holding(engine, phrase)
        assert kind == "constraint" and "instructions" in tags, phrase


def test_translated_and_older_copies_of_a_page_are_not_read(ws: Path) -> None:
    """A page kept again per language (`docs/ja/x.md`, Docusaurus' `i18n/`) or per older version
    (`docs/v2/x.mdx`, `versioned_docs/`) is read once, as the page itself; a folder named like
    a language or a version that holds the only copy, or a code folder's own version, is read."""
    page = "# Contributing\n\nRun `make test` before you open a pull request.\n"
    write(ws, {
        "AGENTS.md": RULES,
        "docs/contributing.md": page, "docs/ja/contributing.md": page,
        "docs/zh-CN/contributing.md": page, "docs/v2/contributing.md": page,
        "docs/en/setup.md": page, "docs/fr/setup.md": page,
        "docs/v3/migration.md": page, "docs/go/contributing.md": page,
        "versioned_docs/version-1.0/contributing.md": page, "i18n/de/contributing.md": page,
        "api/v1/README.md": page, "api/README.md": page,
    })  # fmt: skip
    found = set(sync.candidates(ws))
    assert {
        "docs/contributing.md",
        "docs/en/setup.md",
        "docs/v3/migration.md",
        "docs/go/contributing.md",
        "api/v1/README.md",
        "api/README.md",
    } <= found
    assert not found & {
        "docs/ja/contributing.md", "docs/zh-CN/contributing.md", "docs/v2/contributing.md",
        "docs/fr/setup.md", "versioned_docs/version-1.0/contributing.md",
        "i18n/de/contributing.md",
    }  # fmt: skip
