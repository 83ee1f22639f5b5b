"""Every custom method end to end through pytest-lsp and a real `nous serve` subprocess."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcMethodNotFound
from pytest_lsp import ClientServerConfig, LanguageClient

from nous.context import config as configs
from tests.e2e.conftest import SERVE, init_params, make_workspace, plain, server_env

JUDGE_THRESHOLD = configs.defaults().judge.threshold

BASE = Path(tempfile.mkdtemp(prefix="nous-e2e-"))
WS = make_workspace(
    BASE, "shop",
    "# Rules\n\n- Never commit directly to main.\n- Use PostgreSQL for all storage, including caches.\n",
)  # fmt: skip


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=SERVE, server_env=server_env(BASE / "memory.db")),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    # Registered synchronously before `initialized` is sent (the client's own
    # `wait_for_notification` is a coroutine and registers only when awaited, so a
    # notification that lands first is dropped and the wait never ends: this hung CI).
    indexed = lsp_client.protocol.wait_for_notification_async("nous/indexed")
    await lsp_client.initialize_session(init_params(WS))
    await asyncio.wait_for(indexed, 60)
    yield lsp_client
    await lsp_client.shutdown_session()


async def call(client: LanguageClient, method: str, params: Any) -> Any:
    result = await client.protocol.send_request_async(method, params)
    return result


@pytest.mark.asyncio(loop_scope="module")
async def test_remember_then_recall_and_budget_notification(client: LanguageClient) -> None:
    made = plain(
        await call(
            client,
            "nous/remember",
            {
                "kind": "decision",
                "content": "Cache with Postgres UNLOGGED tables, not Redis.",
                "outcome": "success",
            },
        )
    )
    assert (
        made["status"] == "created"
        and made["scope"].startswith("project:shop-")
        and made["memoryStatus"] == "recorded"
    )
    again = plain(
        await call(
            client,
            "nous/remember",
            {"kind": "decision", "content": "cache with postgres unlogged tables, not redis"},
        )
    )
    assert again["status"] == "confirmed" and again["id"] == made["id"]
    budget_sent = client.protocol.wait_for_notification_async("nous/budget")
    recalled = plain(
        await call(client, "nous/recall", {"query": "redis caching", "sessionId": "e2e-1"})
    )
    ids = [i["id"] for s in recalled["sections"] for i in s["items"]]
    assert made["id"] in ids and recalled["tokens"] <= 500
    budget = plain(await asyncio.wait_for(budget_sent, 30))
    assert (
        budget["sessionId"] == "e2e-1"
        and budget["cap"] == 3000
        and budget["used"] == recalled["session"]["used"]
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_context_includes_harvested_rules(client: LanguageClient) -> None:
    asked = plain(
        await call(
            client,
            "nous/context",
            {"input": "can I commit directly to main?", "sessionId": "e2e-2", "budget": 2000},
        )
    )
    assert asked["tokens"] <= 2000 and asked["fingerprint"]["budget"] == 2000
    assert "Never commit directly to main." in asked["text"]
    assert "## Project Rules" in asked["text"]  # the workspace's own rule, not fenced as data
    other = plain(
        await call(
            client,
            "nous/context",
            {"input": "should we add Redis for caching?", "sessionId": "e2e-2", "budget": 2000},
        )
    )
    assert other["frame"] == "decision"
    # a warning that is not about the question is not injected on every turn (design §2.7)
    assert "Never commit directly to main." not in other["text"]


@pytest.mark.asyncio(loop_scope="module")
async def test_expand_forget_supersede_outcome_feedback(client: LanguageClient) -> None:
    old = plain(
        await call(
            client, "nous/remember", {"kind": "fact", "content": "Deploys run from Jenkins."}
        )
    )
    new = plain(
        await call(
            client, "nous/remember", {"kind": "fact", "content": "Deploys run from GitHub Actions."}
        )
    )
    full = plain(await call(client, "nous/expand", {"id": old["id"], "sessionId": "e2e-3"}))
    assert full["memory"]["content"] == "Deploys run from Jenkins." and full["session"]["used"] > 0
    sup = plain(await call(client, "nous/supersede", {"id": old["id"], "newId": new["id"]}))
    assert sup["status"] == "superseded" and sup["supersededBy"] == new["id"]
    decision = plain(
        await call(client, "nous/remember", {"kind": "decision", "content": "Adopt ruff."})
    )
    assert (
        plain(await call(client, "nous/outcome", {"id": decision["id"], "outcome": "success"}))[
            "status"
        ]
        == "reviewed"
    )
    assert plain(await call(client, "nous/forget", {"id": new["id"]}))["status"] == "inactive"
    ctx = plain(
        await call(
            client,
            "nous/context",
            {"input": "how do we deploy?", "sessionId": "e2e-4", "frame": "question"},
        )
    )
    items = [i for s in ctx["sections"] for i in s["items"]]
    fb = plain(
        await call(
            client,
            "nous/feedback",
            {"sessionId": "e2e-4", "response": items[0]["text"] if items else "nothing"},
        )
    )
    assert set(fb["referenced"]) | set(fb["notReferenced"]) == {i["id"] for i in items}


@pytest.mark.asyncio(loop_scope="module")
async def test_feedback_judges_a_paraphrase_referenced(client: LanguageClient) -> None:
    decision = plain(await call(client, "nous/remember", {
        "kind": "decision", "content": "Store orders in PostgreSQL 16 through SQLAlchemy and "
        "asyncpg, because we need transactions.",
    }))["id"]  # fmt: skip
    ask = {"input": "How do we persist orders?", "frame": "question"}
    for session in ("e2e-judge-1", "e2e-judge-2"):
        ctx = plain(await call(client, "nous/context", {**ask, "sessionId": session}))
        assert decision in {i["id"] for s in ctx["sections"] for i in s["items"]}
    used = plain(await call(client, "nous/feedback", {
        "sessionId": "e2e-judge-1",
        "response": "They're persisted in Postgres, reached through the ORM with an async driver.",
    }))  # fmt: skip
    assert decision in used["referenced"]
    # the client turns result objects into namedtuples: an id key that starts with a digit is
    # renamed, so the scores are read by value (each judged item has one, in 0..1)
    scores = list(used["overlaps"].values())
    assert len(scores) == len(used["referenced"]) + len(used["notReferenced"])
    assert all(0 <= v <= 1 for v in scores) and max(scores) >= JUDGE_THRESHOLD
    unused = plain(await call(client, "nous/feedback", {
        "sessionId": "e2e-judge-2",
        "response": "I renamed the button label and fixed the CSS padding in the header.",
    }))  # fmt: skip
    assert decision in unused["notReferenced"] and unused["referenced"] == []
    assert max(unused["overlaps"].values()) < JUDGE_THRESHOLD


@pytest.mark.asyncio(loop_scope="module")
async def test_status(client: LanguageClient) -> None:
    status = plain(await call(client, "nous/status", {}))
    assert (
        status["project"] == "shop"
        and status["dimension"] == 384
        and status["encoding"] == "o200k_base"
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_stats_of_a_session_count_its_turns_and_judged_items(client: LanguageClient) -> None:
    first = plain(await call(client, "nous/context", {
        "input": "What is our storage setup?", "sessionId": "e2e-stats", "conversationTokens": 1200,
    }))  # fmt: skip
    second = plain(await call(client, "nous/context", {
        "input": "Should we use Redis for caching?", "sessionId": "e2e-stats",
    }))  # fmt: skip
    items = [i for s in first["sections"] for i in s["items"]]
    items += [i for s in second["sections"] for i in s["items"]]
    reply = items[0]["text"] if items else "nothing"
    fb = plain(await call(client, "nous/feedback", {"sessionId": "e2e-stats", "response": reply}))
    stats = plain(await call(client, "nous/stats", {"sessionId": "e2e-stats"}))
    assert (stats["sessionId"], stats["answers"], stats["turns"]) == ("e2e-stats", 2, 2)
    judged = len(fb["referenced"]) + len(fb["notReferenced"])
    assert (stats["judged"], stats["referenced"]) == (judged, len(fb["referenced"]))
    metrics = {m["name"]: m for m in stats["metrics"]}
    assert set(metrics) == {
        "contextRelevance", "budgetUtilization", "refreshRate", "coldStart", "overhead"
    }  # fmt: skip
    assert metrics["budgetUtilization"]["value"] == pytest.approx(
        (first["tokens"] / first["budget"] + second["tokens"] / second["budget"]) / 2
    )
    assert metrics["overhead"]["value"] == pytest.approx(first["tokens"] / 1200)
    cold = metrics["coldStart"]["value"]  # only if one of these was the daemon's first answer
    assert cold is None or cold > 0
    project = plain(await call(client, "nous/stats", None))  # params optional: the project
    assert project["sessionId"] is None and project["answers"] >= 2
    # per frame: a judged item is credited to the last answer that injected it (the first's
    # frame is `question`, the second's `decision`)
    framed = plain(await call(client, "nous/stats", {"sessionId": "e2e-stats", "by": "frame"}))
    groups = {g["key"]: g for g in framed["groups"]}
    assert (framed["by"], set(groups)) == ("frame", {first["frame"], second["frame"]})
    injector = {
        i["id"]: r["frame"] for r in (first, second) for s in r["sections"] for i in s["items"]
    }
    credited = {first["frame"]: 0, second["frame"]: 0}
    for memory_id in [*fb["referenced"], *fb["notReferenced"]]:
        credited[injector[memory_id]] += 1
    assert {k: g["judged"] for k, g in groups.items()} == credited
    assert sum(g["referenced"] for g in groups.values()) == len(fb["referenced"])


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("nous/recall", None, "params are required"),
        ("nous/recall", {"query": 42}, "query"),
        ("nous/recall", {"query": "x", "budget": -1}, "budget"),
        ("nous/context", {"mode": "sometimes"}, "mode"),
        ("nous/remember", {"kind": "fact"}, "content"),
        ("nous/remember", {"kind": "fact", "content": "x", "confidence": 3}, "confidence"),
        ("nous/remember", {"kind": "Bad Kind!", "content": "x"}, "invalid kind"),
        ("nous/feedback", {"response": "x"}, "sessionId"),
        ("nous/expand", {"id": "does-not-exist"}, "no memory with id"),
        ("nous/forget", {}, "id"),
        ("nous/supersede", {"id": "a"}, "newId"),
        ("nous/outcome", {"id": "a", "outcome": "great"}, "outcome"),
        # strict types: nothing is coerced
        ("nous/context", {"budget": "800"}, "budget"),
        ("nous/context", {"budget": True}, "budget"),
        ("nous/recall", {"query": "x", "budget": 800.0}, "budget"),
        ("nous/remember", {"kind": "fact", "content": "x", "confidence": "0.5"}, "confidence"),
        ("nous/forget", {"id": "a", "purge": "true"}, "purge"),
        ("nous/stats", {"sessionId": 5}, "sessionId"),
        ("nous/stats", {"by": "everything"}, "by"),
        ("nous/context", {"conversationTokens": -1}, "conversationTokens"),
    ],
)
async def test_invalid_params_name_the_field(
    client: LanguageClient, method: str, params: Any, field: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=field):
        await call(client, method, params)


@pytest.mark.asyncio(loop_scope="module")
async def test_unknown_custom_method(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcMethodNotFound):
        await call(client, "nous/teleport", {})
