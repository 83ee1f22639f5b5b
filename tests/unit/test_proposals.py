"""A proposal ("should we move the memory store to Postgres?") is answered by the decision that
chose otherwise, which never names the alternative: the alternative's words weigh less in the
gate and the lexical search is on the subject. Real SQLite, the real model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nous.context import chat, intent, pipeline, relevance
from nous.context import config as configs
from nous.engine import Engine
from nous.evaluation.repos import ALWAYS_ON
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.protocol import ContextParams, RecallParams
from nous.settings import Settings
from nous.text import words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Should we move the memory store to Postgres?", ["move", "Postgres"]),
        ("Should we rewrite vdev in Python so it's quicker to iterate?", ["rewrite", "Python"]),
        ("why not use redis for the cache?", ["redis"]),
        ("Could we switch the build to Bazel", ["switch", "Bazel"]),
        # a how-to is no proposal, and neither is a statement
        ("How do I switch a waffle flag on for everybody on stage?", []),
        ("We moved the memory store to Postgres last week.", []),
        # an alternative of many words is a subject, not a name
        ("Should we move it to the thing the other team built last year?", []),
    ],
)
def test_a_proposal_names_its_alternative(text: str, expected: list[str]) -> None:
    assert intent.alternative(text) == expected
    assert intent.signals(text).alternative == expected


def test_the_alternative_weighs_less_than_the_subject() -> None:
    plain = relevance.query("move the memory store to postgres", {"postgres": 1}, 5)
    proposal = relevance.query(
        "move the memory store to postgres", {"postgres": 1}, 5, alternative=["move", "Postgres"]
    )
    postgres = words.stem("postgres")
    assert proposal.weights[postgres] == pytest.approx(
        relevance.ALTERNATIVE_WEIGHT * plain.weights[postgres]
    )
    assert proposal.weights[words.stem("memory")] == plain.weights[words.stem("memory")]
    adr = (
        "# ADR 1: One SQLite file in WAL mode as the memory store\n\nKeep all memories in one file."
    )
    assert proposal.coverage(adr) > plain.coverage(adr) + 0.2


def test_without_drops_the_alternatives_words_only() -> None:
    text = "Should we move the memory store to Postgres?"
    assert relevance.without(text, ["move", "Postgres"]) == "Should we the memory store to"
    assert relevance.without(text, []) == text


VIEW = pipeline.View("nous", "project:nous", ["python"])
DECISION = (
    "# ADR 1: One SQLite file in WAL mode as the memory store (status: Accepted)\n\n"
    "Keep all memories in one SQLite file per user, with journal_mode=WAL and BEGIN IMMEDIATE "
    "for every write. Several editor windows share one user's memory; no server to run."
)
OTHERS = [  # sections that name Postgres for other reasons: a team store, protocol examples
    ("README.md#team", "# README.md: Team memory (a shared PostgreSQL store)\n\nA team points "
     "Nous at a PostgreSQL server with pgvector: export NOUS_TEAM_STORE=postgresql://db/nous. "
     "Memories in scope team go to Postgres; every answer merges them."),
    ("README.md#update", "# README.md: Protocol › nous/update\n\nChange a memory in place: "
     '{"method": "nous/update", "params": {"id": "…", "content": "Orders live in Postgres '
     '16"}}. The store keeps the old text in the memory\'s history.'),
    ("docs/bench.md#team", "# docs/bench.md: Team store beside SQLite\n\nPostgres with "
     "pgvector answers a team query in 9 ms; the local store in 2 ms."),
    ("docs/setup.md#db", "# docs/setup.md: Running Postgres locally\n\nStart Postgres with "
     "pgserver; move the data directory with PGDATA when you need to."),
]  # fmt: skip


@pytest.fixture
def workspace(real_store: MemoryStore) -> str:
    decision = real_store.remember(
        Draft(kind="decision", scope="project:nous", content=DECISION,
              source="file:docs/adr/0001-sqlite-wal-memory-store.md", tags=["adr"])
    )  # fmt: skip
    for source, content in OTHERS:
        real_store.remember(
            Draft(kind="fact", scope="project:nous", content=content, source=f"file:{source}")
        )
    return decision.memory.id


def test_a_proposal_gets_the_decision_that_chose_otherwise(
    real_store: MemoryStore, workspace: str
) -> None:
    request = pipeline.Request(
        input="Should we move the memory store to Postgres?", mode="recall", budget=500
    )
    result = pipeline.assemble(real_store, configs.defaults(), VIEW, request)
    assert workspace in [i.id for s in result.sections for i in s.items], result.text


def test_the_demo_question_shows_adr_1_first(tmp_path: Path, real_embedder: OnnxEmbedder) -> None:
    """`scripts/run`'s question over this repository's own documents (no git history)."""
    root = Path(__file__).resolve().parents[2]
    workspace = tmp_path / "nous"
    for name in ("README.md", "AGENTS.md", "CONTRIBUTING.md", "pyproject.toml"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, workspace / name)
    shutil.copytree(root / "docs", workspace / "docs")
    engine = Engine(Settings(db=tmp_path / "memory.db"), workspace, embedder=real_embedder)
    try:
        engine.harvest()
        question = "Should we move the memory store to Postgres?"
        adr = "docs/adr/0001-sqlite-wal-memory-store.md"
        turn = chat.context(engine, ContextParams(input=question, budget=1200))
        retrieved = [  # the selected layers: not the always-on ones, not a censor
            i for s in turn.sections if s.layer not in ALWAYS_ON
            for i in s.items if not i.terms.get("censor")
        ]  # fmt: skip
        assert retrieved and adr in retrieved[0].source, turn.text
        recall = chat.recall(engine, RecallParams(query=question))
        assert any(adr in i.source for s in recall.sections for i in s.items), recall.text
    finally:
        engine.store.close()


def test_the_kind_a_question_asks_for_has_the_frames_top_priority(
    real_store: MemoryStore,
) -> None:
    from nous.context.score import Scope, Weighing, composite

    config = configs.defaults()
    assert config.frames.priorities["question"]["decision"] < 1.0
    memory = real_store.remember(
        Draft(kind="decision", scope="project:nous", content=DECISION)
    ).memory
    weighing = Weighing(config, "question", Scope("project:nous", ("python",)), 0.0)
    plain = composite(weighing, memory, 0.5)
    asked = composite(weighing, memory, 0.5, asked=True)
    assert plain.terms["framePriority"] < asked.terms["framePriority"] == 1.0
    assert asked.score > plain.score
