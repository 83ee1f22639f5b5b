"""The context pipeline end to end without a server: the seed scenarios with the real model."""

from __future__ import annotations

from pathlib import Path

import pytest

from nous import settings as settings_module
from nous.context import chat, pipeline
from nous.context import config as configs
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.protocol import ContextParams, FeedbackParams, Message, RecallParams
from nous.settings import Settings

CONFIG = configs.defaults()


def view(languages: list[str] | None = None, project: str = "newton") -> pipeline.View:
    return pipeline.View(project, f"project:{project}", languages or [])


def run(store: MemoryStore, text: str, budget: int = 8000, **kw: object) -> pipeline.ContextResult:
    v = kw.pop("view", None) or view()
    return pipeline.assemble(store, CONFIG, v, pipeline.Request(input=text, budget=budget, **kw))  # type: ignore[arg-type]


def included(result: pipeline.ContextResult) -> list[str]:
    return [i.id for s in result.sections for i in s.items]


REDIS_SET = [
    ("decision", "Chose Postgres + pgvector over a separate ChromaDB for unified storage. One backup, one monitor, one connection pool.", "success"),
    ("decision", "Built the first version on SQLite and migrated to Postgres later; the abstract storage layer made the migration painless.", "success"),
    ("decision", "Rejected Qdrant in favour of pgvector: operational simplicity beat raw vector performance.", "success"),
    ("decision", "Use Tailwind for the dashboard styling.", "success"),
    ("decision", "Ship the mobile app first on iOS.", "partial"),
    ("constraint", "Don't add infrastructure without evaluating its operational cost.", None),
    ("fact", "PostgreSQL supports UNLOGGED tables for cache-like workloads with no WAL overhead.", None),
    ("fact", "Redis adds a separate service to manage, monitor and back up.", None),
    ("fact", "The office coffee machine is on the second floor.", None),
    ("procedure", "Architecture decision: query similar past decisions, evaluate at least two alternatives, record the decision with confidence before implementing.", None),
    ("episode", "Storage architecture discussion with Tim: chose Postgres + pgvector, rejected multi-service approaches.", None),
    ("preference", "Tim prefers fewer moving parts in production.", None),
]  # fmt: skip


@pytest.fixture
def redis_store(real_store: MemoryStore) -> MemoryStore:
    real_store.remember_many(
        [Draft(kind=k, content=c, outcome=o, scope="project:newton") for k, c, o in REDIS_SET]
    )
    return real_store


def test_redis_example_layers_and_ranking(redis_store: MemoryStore) -> None:
    result = run(
        redis_store,
        "Should we keep Postgres and pgvector for storage or move vectors to Qdrant?",
        budget=12000,
    )
    assert result.frame == "decision"
    titles = [line for line in result.text.splitlines() if line.startswith("## ")]
    order = ["## Identity", "## Active Constraints", "## Current Approach: Decision",
             "## Project Rules (from this workspace's instruction files)", "## Current Focus",
             "## Relevant Past Decisions", "## Known Information", "## Procedures",
             "## Past Experience"]  # fmt: skip
    assert titles == [t for t in order if t in titles]
    # the censors layer (design §2.7) holds the project's constraint whatever the input
    assert titles[:3] == ["## Identity", "## Active Constraints", "## Current Approach: Decision"]
    censors = next(s for s in result.sections if s.layer == "constraints").items
    assert [redis_store.get(i.id).kind for i in censors] == ["constraint"]
    decisions = next(s for s in result.sections if s.layer == "decisions").items
    texts = [redis_store.get(i.id).content for i in decisions]
    assert texts and all("Postgres" in t or "pgvector" in t or "Qdrant" in t for t in texts)
    # priors never admit what the question is not about (design §2.5)
    dropped = {redis_store.get(d.id).content: d.reason for d in result.dropped}
    for unrelated in ("Use Tailwind for the dashboard styling.", "Ship the mobile app first on iOS.",
                      "The office coffee machine is on the second floor."):  # fmt: skip
        assert dropped[unrelated] == "low-score"
    assert all(set(i.terms) >= {"semantic", "framePriority", "recency", "outcome", "usage",
                                "confidence", "usageBoost", "scopeFactor", "relevance"}
               for i in decisions)  # fmt: skip


def test_greeting_minimal_context(redis_store: MemoryStore) -> None:
    result = run(redis_store, "hey")
    assert included(result) == [] and result.dropped == []  # small talk: not even the censors
    assert result.tokens <= 200


def test_decision_frame_gets_more_decision_tokens(redis_store: MemoryStore) -> None:
    ask = "Should we keep Postgres and pgvector for storage?"
    decision = run(redis_store, ask, budget=12000)
    question = run(redis_store, ask, budget=6000, frame="question")
    cap = {
        r.frame: next(s.cap for s in r.sections if s.layer == "decisions")
        for r in (decision, question)
    }
    assert cap["decision"] > cap["question"]


def test_dedup_removes_what_the_conversation_already_says(redis_store: MemoryStore) -> None:
    said = Message(
        role="assistant", content="Redis adds a separate service to manage, monitor and back up."
    )
    result = run(redis_store, "Should we use Redis for caching?", conversation=[said])
    reasons = {d.id: d.reason for d in result.dropped}
    redis_fact = next(
        m
        for m in redis_store.get_many(list(reasons)).values()
        if m.content.startswith("Redis adds")
    )
    assert reasons[redis_fact.id] == "duplicate-of-conversation"


def test_instruction_text_the_client_injects_is_not_repeated(redis_store: MemoryStore) -> None:
    agents_md = "Rules: Don't add infrastructure without evaluating its operational cost."
    result = run(redis_store, "Should we add Redis as infrastructure?", instructions=[agents_md])
    assert any(d.reason == "duplicate" for d in result.dropped)
    assert "operational cost" not in result.text


def test_usage_boost_reranks(real_store: MemoryStore) -> None:
    a = real_store.remember(
        Draft(kind="fact", content="The API gateway runs on port 8080.", scope="project:newton")
    ).memory
    b = real_store.remember(
        Draft(kind="fact", content="The API gateway runs behind nginx.", scope="project:newton")
    ).memory
    before = run(real_store, "API gateway", frame="question")
    scores = {i.id: i.score for s in before.sections for i in s.items}
    low, high = (a, b) if scores[a.id] < scores[b.id] else (b, a)

    real_store.usage.record("s", [(low.id, True, 0.5), (high.id, False, 0.0)] * 3)
    after = run(real_store, "API gateway", frame="question")
    ranked = [i.id for s in after.sections for i in sorted(s.items, key=lambda i: -i.score)]
    assert ranked.index(low.id) < ranked.index(high.id)


# -- seed 004 scenarios ----------------------------------------------------------------------------

RULES = {
    "universal": ["Write commit messages in the imperative mood.", "Prefer small pull requests."],
    "language:go": ["In Go, wrap errors with fmt.Errorf and %w.", "Run gofmt before committing Go code."],
    "language:python": ["In Python, use pathlib instead of os.path.", "Type-annotate public Python functions."],
    "project:hydra": ["Hydra services log in JSON to stdout.", "Hydra's API is versioned under /v2."],
    "project:cerberus": ["Cerberus stores sessions in Redis.", "Cerberus deploys with Helm."],
}  # fmt: skip


@pytest.fixture
def rules_store(real_store: MemoryStore) -> MemoryStore:
    real_store.remember_many(
        [Draft(kind="convention", content=t, scope=s) for s, texts in RULES.items() for t in texts]
    )
    return real_store


def scopes_of(store: MemoryStore, result: pipeline.ContextResult) -> set[str]:
    return {store.get(i).scope for i in included(result)}


def test_scenario_universal_only(rules_store: MemoryStore) -> None:
    v = pipeline.View("scratch", "project:scratch", [])
    result = run(rules_store, "", mode="startup", budget=2000, view=v)
    assert scopes_of(rules_store, result) == {"universal"}


def test_scenario_go_project(rules_store: MemoryStore) -> None:
    v = pipeline.View("hydra", "project:hydra", ["go"])
    result = run(rules_store, "", mode="startup", budget=2000, view=v)
    assert scopes_of(rules_store, result) == {"universal", "language:go", "project:hydra"}
    assert result.tokens <= 2000


def test_scenario_low_relevance_filtered(rules_store: MemoryStore) -> None:
    v = pipeline.View("cerberus", "project:cerberus", ["python"])
    result = run(rules_store, "how should I handle errors", view=v)
    texts = [rules_store.get(i).content for i in included(result)]
    # Only the Go rule is about errors, and Go is not this project's language: nothing else is
    # relevant, so nothing is injected (design §2.5: priors never admit an irrelevant memory).
    assert not any("Go" in t for t in texts)
    assert not any("Hydra" in t for t in texts)


def test_scenario_budget_exceeded(real_store: MemoryStore) -> None:
    topics = [
        "logging",
        "error handling",
        "unit tests",
        "naming",
        "imports",
        "configuration",
        "caching",
        "retries",
        "documentation",
        "type hints",
    ]
    actions = [
        "keep one shared helper module and never copy the {t} code between the payment, search and billing services",
        "review every {t} change with a second engineer who owns that area before the release branch is cut on Thursday",
        "write down the {t} exceptions in the architecture notes together with the incident that made them necessary",
        "measure how {t} behaves under the nightly load test and alert the on-call channel when it regresses",
        "prefer the standard library for {t} and justify any new third-party dependency in the pull request description",
    ]
    drafts = [
        Draft(
            kind="convention",
            scope="project:newton",
            content=f"For {t}: {a.format(t=t)}. Teams that skipped this for {t} paid for it later in outages, slow reviews and confused newcomers.",
        )
        for t in topics
        for a in actions
    ]
    real_store.remember_many(drafts)
    result = run(real_store, "", budget=1500, mode="startup")  # priors choose: no input
    assert 1300 <= result.tokens <= 1500
    assert {d.reason for d in result.dropped} <= {"budget", "low-score", "duplicate"}
    assert sum(len(s.items) for s in result.sections) >= 20


# -- sessions --------------------------------------------------------------------------------------


def engine(tmp_path: Path, embedder: OnnxEmbedder) -> Engine:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "newton"\n')
    return Engine(Settings(db=tmp_path / "m.db"), ws, embedder=embedder)


def test_session_cap_across_startup_recalls_expand_and_restart(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    first = engine(tmp_path, real_embedder)
    first.import_file()
    startup = chat.context(first, ContextParams(mode="startup", session_id="chat-1", budget=1500))
    assert startup.session.used == startup.tokens > 0
    r1 = chat.recall(first, RecallParams(query="sqlite writes", session_id="chat-1", budget=500))
    used = startup.tokens + r1.tokens
    assert r1.session.used == used and r1.session.recalls == 1

    restarted = engine(tmp_path, real_embedder)  # a new process on the same file
    r2 = chat.recall(
        restarted, RecallParams(query="token counting offline", session_id="chat-1", budget=2900)
    )
    assert r2.session.cut and r2.tokens <= 3000 - used
    assert any("cut to" in note for note in r2.notes)
    used += r2.tokens
    some_id = included(startup)[0]
    _, use = chat.expand(restarted, some_id, "chat-1")
    assert use.used <= 3000 and use.remaining == 3000 - use.used
    third = chat.recall(restarted, RecallParams(query="anything", session_id="chat-1"))
    assert third.tokens == 0 and any("recall limit" in n for n in third.notes)
    # refused, not counted: the limit and the session say the same count
    assert third.session.recalls == 2 and third.limit is not None
    assert (third.limit.name, third.limit.used, third.limit.max) == ("recalls", 2, 2)
    assert r2.limit is not None and r2.limit.name == "session-cap" and r2.limit.max == 3000
    assert r2.limit.used == r2.session.used


def test_an_agents_settings_fit_a_long_connection(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    e = engine(tmp_path, real_embedder)
    e.import_file()
    e.settings = settings_module.for_agent(e.settings)
    answers = [
        chat.recall(e, RecallParams(query=f"sqlite writes {n}", session_id="agent-1"))
        for n in range(20)
    ]
    assert [a.limit for a in answers] == [None] * 20
    assert [a.session.recalls for a in answers] == list(range(1, 21))
    assert answers[-1].session.cap == 24_000


def test_turn_budget_is_capped_by_the_model_window(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    e = engine(tmp_path, real_embedder)
    e.import_file()
    result = chat.context(
        e, ContextParams(input="Should we change the storage?", model_max_tokens=4000)
    )
    assert result.budget == 600 and result.tokens <= 600


def test_feedback_marks_referenced_and_drives_lifecycle(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    e = engine(tmp_path, real_embedder)
    e.import_file()
    result = chat.context(
        e, ContextParams(input="how are secrets handled?", session_id="fb", frame="question")
    )
    items = [i for s in result.sections for i in s.items]
    reply = f"As noted: {items[0].text}"
    fb = chat.feedback(e, FeedbackParams(session_id="fb", response=reply))
    assert items[0].id in fb.referenced
    assert set(fb.referenced) | set(fb.not_referenced) == {i.id for i in items}
    assert e.store.get(items[0].id).activations == 1
    again = chat.feedback(e, FeedbackParams(session_id="fb", response=reply))
    assert again.referenced == [] and again.not_referenced == []


def test_refresh_on_frame_switch_and_not_on_follow_up(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    e = engine(tmp_path, real_embedder)
    e.import_file()
    first = chat.context(e, ContextParams(input="What is our storage setup?", session_id="r"))
    assert first.refresh == "initial"
    follow = chat.context(
        e, ContextParams(input="What is the SQLite storage setup?", session_id="r")
    )
    assert follow.refresh == "none"
    switched = chat.context(
        e, ContextParams(input="the build fails with a traceback", session_id="r")
    )
    assert switched.refresh == "frame-switch"


def test_fingerprint_is_logged(tmp_path: Path, real_embedder: OnnxEmbedder) -> None:
    e = engine(tmp_path, real_embedder)
    e.import_file()
    result = chat.context(e, ContextParams(input="fix src/a.py src/b.py src/c.py", session_id="fp"))
    assert result.fingerprint["complexity"] == "moderate"
    [row] = e.store.usage.fingerprints()
    assert (row["frame"], row["complexity"], row["budget"]) == (
        result.frame,
        "moderate",
        result.budget,
    )
