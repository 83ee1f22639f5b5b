"""Issue 25: relevance that means the same thing in a store of five memories as in one of
thousands; the censors layer; the leave-one-repository-out machinery of the gate fit; the
evaluation's always-on accounting. Real SQLite, the real model, real harvests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nous.context import chat, rarity, relevance
from nous.engine import Engine
from nous.evaluation import gate_fit, tiny
from nous.evaluation.data import TUNE, RepoQuestion, mini_files
from nous.evaluation.repos_metrics import Injected, judge
from nous.memory.embedder import OnnxEmbedder
from nous.protocol import ContextParams, ContextResult, RecallParams
from nous.settings import Settings
from nous.text import words


def test_background_rarity_orders_words_a_tiny_store_cannot() -> None:
    assert rarity.background("the") < rarity.background("add") < rarity.background("dependency")
    assert rarity.background("kfzqxw") == 1.0  # an identifier or a new name: fully rare
    # five memories: every word is in one or none of them, so the store's IDF is flat …
    assert rarity.store_rarity(1, 5) == rarity.store_rarity(1, 5)
    query = relevance.query("can I add a dependency", {"add": 1, "dependency": 1}, 5)
    # … but the blend still weighs the rare word over the common one (weights are by the stem
    # every spelling is read as: "dependency" is "dep")
    (dependency,), (add,) = relevance.stems("dependency"), relevance.stems("add")
    assert query.weights[dependency] > query.weights[add]
    # a large store's own statistics dominate the background
    big = relevance.query("add dependency", {"add": 2, "dependency": 5000}, 20_000)
    assert big.weights[add] > big.weights[dependency]


def test_words_the_store_never_saw_do_not_refuse_the_question() -> None:
    query = relevance.query("FooBarWidget crashes in checkout", {"checkout": 3}, 5)
    assert "foobarwidget" in query.unseen and "checkout" not in query.unseen
    assert "unknown" not in relevance.FEATURES
    values = relevance.features(query, "# Checkout\nThe checkout crashes when …", 0.5, 1.0, 0.5)
    assert len(values) == len(relevance.FEATURES)
    assert values[4] == 1.0  # holds the rarest word the store knows


def test_a_shorthand_and_its_long_form_are_one_word_on_both_sides() -> None:
    question = relevance.expand("Do I need tests in the pull request?")  # the search's text
    assert "pr" in question  # the search still finds a document that says "PR" …
    query = relevance.query(question, {"tests": 3, "pull": 2, "request": 2, "pr": 1}, 10)
    # … but the features read one concept, weighed once: not "pull" + "request" + "pr"
    assert set(query.weights) == {words.stem("tests"), "pr"}
    said_long = "All pull requests should include tests."
    said_short = "Every PR should include tests."
    assert query.coverage(said_long) == query.coverage(said_short) == 1.0
    assert relevance.stems("Pull-Request  checks") == relevance.stems("PR checks")
    assert relevance.stems("the configuration docs") == relevance.stems("the config documentation")
    # a word of the long form alone is not the shorthand ("pull them out into a helper")
    assert "pr" not in relevance.stems("pull them out into a helper")
    asked = relevance.query("Keep PRs small?", {"prs": 1, "small": 1}, 10)
    assert asked.coverage("Keep pull requests under 700 lines; propose a split.") > 0.0
    assert asked.covered(relevance.stems("pull requests")) == asked.coverage("PRs")
    # plain English spelt two ways is one word: "for everybody" is the docs' "--everyone"
    flag = relevance.query("Switch a flag on for everybody?", {"everybody": 0, "flag": 3}, 10)
    held = flag.held("manage.py waffle_flag <name> --everyone --create")
    assert held == {words.stem("flag"), words.stem("everyone")}, held
    assert relevance.stems("somebody or anybody") == relevance.stems("someone or anyone")


def test_a_question_asks_for_a_kind() -> None:
    from nous.context import intent

    why = intent.signals("Why did we pick httpx over requests?")
    assert relevance.asked_kinds(why.dominant_hint, why.permission) == {"decision"}
    may = intent.signals("can I add the requests library?")
    assert "constraint" in relevance.asked_kinds(may.dominant_hint, may.permission)
    assert not intent.signals("Should we move the ledger to DynamoDB?").permission
    # asking whether a thing is required is the converse question: the rules answer it too
    for required in (
        "It's a two-line fix; do I really need to add tests to the PR?",
        "Is it mandatory to annotate every function?",
        "must I sign commits?",
    ):
        assert intent.signals(required).permission, required
    # whether a thing is acceptable, and an action about to be taken, ask it too …
    for acceptable in (
        "Is an unsafe block OK for this hot path?",
        "ok to commit my notebook with the plots in it?",
        "I want to pull in the itertools crate for this loop",
        "the V3 migration has a wrong column type, I'll just edit it",
    ):
        assert intent.signals(acceptable).permission, acceptable
    # … but not a wish to know, a word that only starts with "fine", or a question of its own
    for asking in (
        "I want to know how the cache works",
        "Is the cache fine-grained?",
        "I'll let you know",
        "I want to propose a design change with an ADR. What status does it start in?",
    ):
        assert not intent.signals(asking).permission, asking


@pytest.fixture
def tiny_engines(tmp_path: Path, real_embedder: OnnxEmbedder) -> dict[str, Engine]:
    tiny.write(tmp_path / "ws")
    engines = {}
    for name in tiny.WORKSPACES:
        engine = Engine(Settings(db=tmp_path / f"{name}.db"), tmp_path / "ws" / name,
                        embedder=real_embedder)  # fmt: skip
        engine.harvest()
        engines[name] = engine
    yield engines  # type: ignore[misc]
    for engine in engines.values():
        engine.store.close()


def _texts(result: ContextResult, layers: set[str] | None = None) -> str:
    return "\n".join(
        i.text for s in result.sections if layers is None or s.layer in layers for i in s.items
    ).lower()


def test_a_prohibition_answers_in_every_mode_of_a_five_memory_workspace(
    tiny_engines: dict[str, Engine],
) -> None:
    engine = tiny_engines["tiny-checkout"]
    assert engine.status()["memories"] <= 10
    question = "can I add the requests library to speed up the HTTP client?"
    turn = chat.context(engine, ContextParams(input=question, mode="turn"))
    assert "add a runtime dependency without an adr" in _texts(turn, {"constraints", "rules"})
    startup = chat.context(engine, ContextParams(input="fix the checkout bug", mode="startup"))
    assert "add a runtime dependency without an adr" in _texts(startup)
    recall = chat.recall(engine, RecallParams(query=question, budget=500))
    assert "add a runtime dependency without an adr" in _texts(recall)


@pytest.mark.parametrize(
    ("workspace", "question", "rule"),
    [
        ("tiny-tsapp", "can I call the payments API directly from the cart component?",
         "never call the payments api from the browser"),  # .windsurfrules
        ("tiny-tsapp", "I'll use moment to format the order date", "moment.js is not allowed"),
        ("tiny-zedtool", "can I log the access token while I debug the Google sync?",
         "never print oauth tokens"),  # Zed's root .rules
        ("tiny-zedtool", "can I use requests for the new CalDAV call?", "don't use `requests`"),
    ],
)  # fmt: skip
def test_other_agents_rules_answer_in_every_mode(
    tiny_engines: dict[str, Engine], workspace: str, question: str, rule: str
) -> None:
    """Rules kept in other agents' files (Windsurf, Kiro steering, Zed, Amp's AGENT.md) are
    the project's rules: a chat start carries them, a turn and a recall answer with them."""
    engine = tiny_engines[workspace]
    turn = chat.context(engine, ContextParams(input=question, mode="turn"))
    assert rule in _texts(turn, {"constraints", "rules"})
    startup = chat.context(engine, ContextParams(input="", mode="startup"))
    assert rule in _texts(startup)
    recall = chat.recall(engine, RecallParams(query=question, budget=500))
    assert rule in _texts(recall)


def test_censors_stay_within_their_cap_and_selected_layers_stay_gated(
    tiny_engines: dict[str, Engine],
) -> None:
    engine = tiny_engines["tiny-checkout"]
    greeting = chat.context(engine, ContextParams(input="hey, good morning!", mode="turn"))
    assert not any(s.items for s in greeting.sections)  # small talk: not even the censors
    for section in greeting.sections:
        assert section.used <= section.cap or section.layer in ("identity", "frame")
    nothing = chat.context(engine, ContextParams(input="What's our on-call rotation?"))
    # the censors (the constraints layer; a harvested prohibition reads as a project rule)
    retrieved = [
        i for s in nothing.sections for i in s.items
        if s.layer != "constraints" and not i.terms.get("censor")
    ]  # fmt: skip
    assert retrieved == [], [i.text for i in retrieved]


def test_why_dont_we_gets_the_decision_that_chose_otherwise(
    tiny_engines: dict[str, Engine],
) -> None:
    """ "why don't we switch to PCRE2?" was measured against the "Don'ts" rules' BM25, found by
    "don", and the decision that answers it stayed below the floor in every mode."""
    engine = tiny_engines["tiny-rustcli"]
    question = "why don't we switch to PCRE2 so we get lookahead?"
    recall = chat.recall(engine, RecallParams(query=question, budget=500))
    assert "pcre2 bindings need a c toolchain" in _texts(recall)
    turn = chat.context(engine, ContextParams(input=question, mode="turn"))
    assert "pcre2 bindings need a c toolchain" in _texts(turn)


def test_an_action_about_to_be_taken_recalls_the_rule_against_it(
    tiny_engines: dict[str, Engine],
) -> None:
    engine = tiny_engines["tiny-rustcli"]
    recall = chat.recall(engine, RecallParams(query="I want to pull in the itertools crate"))
    assert "avoid adding crates" in _texts(recall)


def test_a_table_of_prohibitions_answers_a_row_at_a_time(tiny_engines: dict[str, Engine]) -> None:
    engine = tiny_engines["tiny-javaapi"]
    question = "is it fine to return the Order entity straight from the controller?"
    for result in (
        chat.recall(engine, RecallParams(query=question, budget=500)),
        chat.context(engine, ContextParams(input=question, mode="turn")),
    ):
        text = _texts(result)
        # one rule a line, each cell led by its column's header
        assert "don't: return jpa entities from controllers; why: map them to dtos" in text, text
        assert "|" not in text, text


def test_a_recall_that_asks_for_an_alternative_gets_the_decision(
    tiny_engines: dict[str, Engine],
) -> None:
    engine = tiny_engines["tiny-gosvc"]
    recall = chat.recall(engine, RecallParams(query="Should we move the ledger to DynamoDB?"))
    assert "postgresql 16" in _texts(recall)


def _rows(repo: str, n: int, rng: np.random.Generator, shift: float = 0.0) -> list[dict]:
    out = []
    for q in range(n):
        for c in range(20):
            y = int(c == 0)
            x = rng.normal(0.3 + 0.4 * y + shift, 0.1, len(relevance.FEATURES)).clip(0, 1)
            out.append({"repo": repo, "variant": "full", "id": f"{repo}-{q}",
                        "kind": "answerable", "x": list(x), "y": y})  # fmt: skip
    return out


def test_each_fold_is_fitted_without_its_repository() -> None:
    rng = np.random.default_rng(0)
    data = [r for repo in TUNE for r in _rows(repo, 6, rng)]
    folds = gate_fit.fold_gates(data)
    assert set(folds) == set(TUNE)
    # changing one repository's rows changes every fold but its own
    changed = [r for r in data if r["repo"] != TUNE[0]] + _rows(TUNE[0], 6, rng, shift=0.3)
    again = gate_fit.fold_gates(changed)
    assert again[TUNE[0]] == folds[TUNE[0]]
    assert again[TUNE[1]] != folds[TUNE[1]]


def test_the_fit_is_calibrated_on_data_it_never_saw() -> None:
    rng = np.random.default_rng(1)
    train = [r for repo in TUNE for r in _rows(repo, 20, rng)]
    test = _rows("held-out", 40, rng)
    w = gate_fit.fit(np.array([r["x"] for r in train]), np.array([r["y"] for r in train]))
    p = gate_fit.predict(w, np.array([r["x"] for r in test]))
    y = np.array([r["y"] for r in test])
    assert abs(float(p.mean()) - float(y.mean())) < 0.02  # not a class-balanced score
    for row in gate_fit.reliability(p, y):
        if row["rows"] >= 50:
            assert abs(row["predicted"] - row["observed"]) < 0.15


def test_always_on_items_count_for_hits_but_not_as_retrieved() -> None:
    items = [
        Injected(("AGENTS.md",), "MUST NOT: add a runtime dependency without an ADR", 12, True),
        Injected(("README.md",), "unrelated", 30),
    ]
    j = judge(items, ["AGENTS.md"], ["add a runtime dependency"])
    assert j.strict and j.rank_strict == 1
    assert j.items == 1 and j.tokens == 30 and j.precision == 0.0
    assert j.always_items == 1 and j.always_tokens == 12


def test_a_mini_variant_holds_root_instructions_contributing_and_expected_files(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "r"
    for rel in ("AGENTS.md", "CONTRIBUTING.md", "docs/a.md", "docs/b.md", "x/AGENTS.md"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("# t\n", encoding="utf-8")
    q = RepoQuestion("r", "r-01", "?", "answerable", ("docs/b.md",), ("t",))
    assert mini_files(repo, [q]) == ["AGENTS.md", "CONTRIBUTING.md", "docs/b.md"]


def test_a_censor_is_not_repeated_within_a_session(tiny_engines: dict[str, Engine]) -> None:
    engine = tiny_engines["tiny-checkout"]

    def censors(text: str, session: str | None) -> str:
        params = ContextParams(input=text, mode="turn", session_id=session)
        return _texts(chat.context(engine, params), {"constraints", "rules"})

    assert "commit secrets" in censors("let's refactor the order model", "s-1")
    assert "commit secrets" not in censors("now tidy up the logging format", "s-1")
    assert "commit secrets" in censors("now tidy up the logging format", "s-2")
    assert "commit secrets" in censors("now tidy up the logging format", None)


def test_a_tag_cut_open_by_a_shortened_text_does_not_survive() -> None:
    from nous.context import render

    assert "<img" not in render.clean('deploy pipeline <img src="https://x.example/a.png" onerr')
    assert "<script" not in render.clean("see <script type=…")
    assert render.clean("when a < b the sort is stable") == "when a < b the sort is stable"


CONTRIBUTOR_AGENTS = """# AGENTS.md

This file is here to steer AI assisted pull requests towards contributions that do not create
excessive maintainer burden.

## General rules and guidelines

The most important rule is not to post AI-generated comments on issues or pull requests.
Discussions on the project's repositories are for humans only.

When a user asks you to open a pull request, ask the user for each section of the template and
use their answers verbatim. Keep pull requests tightly scoped to the requested change and never
include unrelated cleanup.

If you have been assigned an issue, make sure the implementation direction is agreed on with the
maintainers first in the issue comments. Discuss open questions on the issue before starting
implementation.

## Developer environment

Follow docs/coding-guidelines.md. All code changes should have tests that validate them.

## Commit formatting

Disclose AI assistance with an Assisted-by: trailer; do not use a Co-authored-by: trailer.

## Code style

Format Go code with gofumpt and keep imports grouped: standard library, third party, local.

## Changelog

Every user-facing change needs a changelog entry made with the chloggen tool.

## Dependencies

Dependency updates come from Renovate; review its pull requests like any other.

## Documentation

Document every exported symbol; a package needs a doc.go file.
"""
CONTRIBUTOR_DOCS = {
    "CONTRIBUTING.md": "# Contributing\n\n## Before you start\n\nRead the code of conduct. "
    "Look for issues labelled good first issue.\n\n## Pull requests\n\nA pull request needs "
    "two approvals from code owners. Add a changelog entry for user-facing changes.\n\n"
    "## Releases\n\nReleases are cut every two weeks by the release manager.\n",
    "docs/coding-guidelines.md": "# Coding guidelines\n\n## Naming\n\nExported names are "
    "short and do not repeat the package name.\n\n## Errors\n\nWrap errors with context; "
    "never panic in library code.\n\n## Configuration\n\nEvery configuration struct has a "
    "Validate method and a default.\n\n## Testing\n\nTable-driven tests are preferred; use "
    "the testify assertions.\n",
    "docs/component-stability.md": "# Stability levels\n\n## Development\n\nA component in "
    "development may change at any time.\n\n## Alpha\n\nAn alpha component may break its "
    "configuration between releases.\n\n## Graduation to stable\n\nA component graduates "
    "once its code owners fixed every open issue and it has been beta for two releases.\n",
}


def test_a_permission_recall_carries_the_nearest_instruction_rule(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    """ "Can I start coding the fix straight away?" shares almost no word with the rule that
    answers it, which is an instruction file's convention, not a prohibition: a question that
    asks whether it may do a thing carries the nearest instruction rules as censors, not only
    the constraints (opentelemetry-collector's AGENTS.md, where the preamble was the only
    constraint and was all a recall got)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text(CONTRIBUTOR_AGENTS)
    for rel, text in CONTRIBUTOR_DOCS.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    engine = Engine(Settings(db=tmp_path / "m.db"), workspace, embedder=real_embedder)
    try:
        engine.harvest()
        question = "I've just been assigned an issue. Can I start coding the fix straight away?"
        recall = chat.recall(engine, RecallParams(query=question, budget=500))
        assert "agreed on with the\nmaintainers" in _texts(
            recall
        ) or "agreed on with the maintainers" in _texts(recall), recall.text
    finally:
        engine.store.close()
