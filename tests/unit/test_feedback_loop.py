"""The feedback loop (design §14) through the chat use cases with the real model and a real store:
a paraphrase is a reference, the assistant's own earlier reply is never credited, and an item
injected again and again without being used sinks below an equal one that is used."""

from __future__ import annotations

from pathlib import Path

from nous.context import chat
from nous.context import config as configs
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.protocol import ContextParams, ContextResult, FeedbackParams
from nous.settings import Settings

THRESHOLD = configs.defaults().judge.threshold
DECISION = (
    "Store orders in PostgreSQL 16 through SQLAlchemy and asyncpg, because we need transactions."
)
OTHERS = [
    "Run the test suite with pytest -q before every commit.",
    "The frontend is built with React and Vite; components live in web/src.",
]


def engine(tmp_path: Path, embedder: OnnxEmbedder) -> Engine:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    return Engine(Settings(db=tmp_path / "m.db"), ws, embedder=embedder)


def remember(e: Engine, kind: str, content: str) -> str:
    return e.store.remember(
        Draft(kind=kind, content=content, scope=e.resolve_scope(None))
    ).memory.id


def items(result: ContextResult) -> dict[str, float]:
    return {i.id: i.score for s in result.sections for i in s.items}


def usage_rows(e: Engine, memory_id: str) -> list[tuple[int, float]]:
    return e.store._conn.execute(
        "SELECT referenced, overlap FROM usage WHERE memory_id = ?", (memory_id,)
    ).fetchall()


def test_a_paraphrase_is_judged_referenced(tmp_path: Path, real_embedder: OnnxEmbedder) -> None:
    e = engine(tmp_path, real_embedder)
    decision = remember(e, "decision", DECISION)
    others = [remember(e, "fact", text) for text in OTHERS]
    given = chat.context(e, ContextParams(input="How do we store orders?", session_id="p1"))
    assert decision in items(given)
    reply = "They're persisted in Postgres, reached through the ORM with an async driver."
    fb = chat.feedback(e, FeedbackParams(session_id="p1", response=reply))
    assert fb.referenced == [decision]
    assert THRESHOLD <= fb.overlaps[decision] <= 1.0
    assert all(fb.overlaps[m] < THRESHOLD for m in fb.not_referenced)
    assert set(fb.not_referenced) <= set(others)
    assert usage_rows(e, decision) == [(1, fb.overlaps[decision])]
    assert e.store.get(decision).activations == 1


def test_the_assistants_own_earlier_reply_is_never_credited(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    e = engine(tmp_path, real_embedder)
    remember(e, "decision", DECISION)
    chat.context(e, ContextParams(input="How do we store orders?", session_id="a"))
    said = (
        "Orders stay in Postgres. I also wrapped the connection pool in db/pool.py with a retry "
        "helper, so a dropped socket is retried three times with exponential backoff."
    )
    chat.feedback(e, FeedbackParams(session_id="a", response=said))  # kept as a turn of `a`
    kept = [
        m for m in e.store.get_many([i for i, _, _ in e.store.session_rows("a", e.resolve_scope(None))]).values()
        if "role:assistant" in m.tags
    ]  # fmt: skip
    assert len(kept) == 1
    echo_id = kept[0].id

    later = chat.context(
        e, ContextParams(input="What retry behaviour does the db pool have?", session_id="b")
    )
    assert echo_id in items(later)  # the earlier reply is injected into the next session
    again = "The pool in db/pool.py retries a dropped socket three times with exponential backoff."
    fb = chat.feedback(e, FeedbackParams(session_id="b", response=again))
    assert fb.overlaps[echo_id] >= THRESHOLD  # the judge sees the match …
    assert fb.echoes == [echo_id]  # … but the model echoing itself earns nothing
    assert echo_id not in fb.referenced and echo_id not in fb.not_referenced
    assert usage_rows(e, echo_id) == []
    assert e.store.get(echo_id).activations == 0


def test_an_item_injected_often_and_never_used_sinks(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    e = engine(tmp_path, real_embedder)
    used = remember(e, "fact", "The staging server listens on port 8081 behind nginx.")
    unused = remember(e, "fact", "The staging server listens on port 9090 behind caddy.")
    question = "Which port does the staging server listen on?"
    before = items(chat.context(e, ContextParams(input=question, session_id="fresh-0")))
    assert {used, unused} <= set(before)
    assert abs(before[used] - before[unused]) < 0.1 * before[used]  # equal to begin with
    for n in range(1, 5):
        given = items(chat.context(e, ContextParams(input=question, session_id=f"s{n}")))
        assert {used, unused} <= set(given)
        fb = chat.feedback(e, FeedbackParams(
            session_id=f"s{n}", response="Staging answers on 8081, with nginx in front of it."
        ))  # fmt: skip
        assert used in fb.referenced and unused in fb.not_referenced
    after = items(chat.context(e, ContextParams(input=question, session_id="fresh-1")))
    assert after[unused] < after[used]
    assert after[unused] < 0.7 * before[unused]  # the usage boost fell to its floor (0.5)
    stats = e.store.usage.stats([used, unused])
    assert (stats[used].retrieved, stats[used].referenced) == (4, 4)
    assert (stats[unused].retrieved, stats[unused].referenced) == (4, 0)
    assert stats[unused].boost == 0.5 and stats[used].boost == 1.5
