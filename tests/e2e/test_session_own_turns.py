"""A chat session's own turns through a real `nous serve`, in a small project memory like the
VS Code e2e's: a turn that repeats the question (kept a moment before the model's recall) is
left out of the recall, and is not the measure of the other candidates' BM25 either."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVE, init_params, plain, server_env
from tests.e2e.test_methods import call

BASE = Path(tempfile.mkdtemp(prefix="nous-e2e-own-turns-"))
SHOP = BASE / "shop"
(SHOP / "docs" / "adr").mkdir(parents=True)
(SHOP / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "0.1.0"\n')
(SHOP / "docs" / "adr" / "0001-payments-through-gateway.md").write_text(
    "# 1. Payments go through the PaymentGateway adapter\n\n## Status\n\nAccepted\n\n"
    "## Decision\n\nAll payments go through the PaymentGateway adapter in shop/payments.py.\n"
)
(SHOP / "AGENTS.md").write_text(
    "# Agent instructions\n\n## Conventions\n\n- Money is stored as integer cents, never floats.\n"
)


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=SERVE, server_env=server_env(BASE / "memory.db")),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    indexed = lsp_client.protocol.wait_for_notification_async("nous/indexed")
    await lsp_client.initialize_session(init_params(SHOP, options={}))
    await asyncio.wait_for(indexed, 60)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_turn_that_asked_does_not_keep_the_answer_out(client: LanguageClient) -> None:
    await call(client, "nous/remember", {"kind": "decision", "content": "Memories live in "
                                         "SQLite with FTS5; we never add a Postgres dependency."})  # fmt: skip
    asked = "use recall: how do we store memories"
    await call(client, "nous/context", {"input": asked, "mode": "turn", "sessionId": "x-1"})
    found = plain(await call(client, "nous/recall", {"query": "how do we store memories",
                                                       "sessionId": "x-1"}))  # fmt: skip
    assert "SQLite with FTS5" in found["text"], found["dropped"]
    assert asked not in found["text"]
    # nor is another session: a turn that only asks is kept for its own session's window only
    other = plain(await call(client, "nous/recall", {"query": "how do we store memories",
                                                       "sessionId": "x-2"}))  # fmt: skip
    assert "SQLite with FTS5" in other["text"] and asked not in other["text"]


SETTLED = (
    "We decided to compute shipping fees by parcel weight, not a flat rate. "
    "Next step: add a carrier_rates migration with the weight tiers."
)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_chat_run_leaves_only_what_earns_its_place(client: LanguageClient) -> None:
    # one chat as the VS Code e2e drives it: a prompt that only asks, a reply that echoes the
    # injected context back, then a reply that settles something
    asked = "use recall: how is money stored in the shop"
    context = plain(await call(client, "nous/context", {"input": asked, "mode": "turn",
                                                          "sessionId": "y-1"}))  # fmt: skip
    bullets = [line for line in context["text"].splitlines() if line.startswith("- ")]
    assert bullets, context["text"]
    echo = (f"FAKE MODEL ANSWER: I received 2 messages and 3 tools.\n\nThe first message "
            f"({len(context['text'])} characters) held these lines:\n\n" + "\n".join(bullets))  # fmt: skip
    await call(client, "nous/feedback", {"sessionId": "y-1", "response": echo})
    await call(client, "nous/context", {"input": "ok, let's settle the shipping fees then",
                                        "mode": "turn", "sessionId": "y-1"})  # fmt: skip
    await call(client, "nous/feedback", {"sessionId": "y-1", "response": SETTLED})

    # then inspect the store
    listed = plain(await call(client, "nous/list", {"limit": 500, "captured": True}))
    kept = {m["content"]: m for m in listed["items"]}
    assert not [c for c in kept if "FAKE MODEL" in c or "held these lines" in c], list(kept)
    assert kept[asked]["tags"] == ["asking", "chat", "role:user"] and kept[asked]["captured"]
    notes = sorted(c for c, m in kept.items() if m["kind"] == "note")
    assert "next: add a carrier_rates migration with the weight tiers." in notes, notes
    assert not [n for n in notes if n.lower().startswith(("next: next", "dec: decision"))]
    knowledge = plain(await call(client, "nous/list", {"limit": 500, "captured": False}))
    assert not [m for m in knowledge["items"] if m["source"].startswith("chat:")]

    # another session never gets the question back
    other = plain(await call(client, "nous/recall", {"query": "how is money stored",
                                                       "sessionId": "y-2"}))  # fmt: skip
    assert not [i for s in other["sections"] for i in s["items"] if i["source"] == "chat:y-1#0"]
    assert asked not in other["text"] and "integer cents" in other["text"]
