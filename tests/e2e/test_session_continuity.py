"""Session continuity through a real `nous serve` (design §10): chat turns become episodes of
their session, session notes are drawn from them and the next session's startup carries them;
capture off stores nothing; a session is forgotten whole; isolated per project."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVE, init_params, make_workspace, plain, server_env
from tests.e2e.test_methods import call

BASE = Path(tempfile.mkdtemp(prefix="nous-e2e-sessions-"))
SHOP = make_workspace(BASE, "shop")
OTHER = make_workspace(BASE, "other")


async def _start(client: LanguageClient, *folders: Path, options: dict[str, object]) -> None:
    indexed = client.protocol.wait_for_notification_async("nous/indexed")
    await client.initialize_session(init_params(*folders, options=options))
    await asyncio.wait_for(indexed, 60)


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=SERVE, server_env=server_env(BASE / "memory.db")),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    await _start(lsp_client, SHOP, OTHER, options={})
    yield lsp_client
    await lsp_client.shutdown_session()


def items(result: Any) -> list[dict[str, Any]]:
    return [i for s in plain(result)["sections"] for i in s["items"]]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_decision_and_a_next_step_in_session_a_open_session_b(
    client: LanguageClient,
) -> None:
    user = "We decided to keep SQLite for the local store and add a PostgreSQL team store later."
    turn = await call(client, "nous/context", {"input": user, "mode": "turn", "sessionId": "a-1"})
    assert plain(turn)["session"]["id"] == "a-1"
    reply = ("Agreed. I've added the store interface. Next step: write the pgserver tests for "
             "the team store.")  # fmt: skip
    await call(client, "nous/feedback", {"sessionId": "a-1", "response": reply})

    startup = await call(client, "nous/context", {"input": "", "mode": "startup", "sessionId": "b-1"})  # fmt: skip
    notes = {i["text"] for i in items(startup) if i["kind"] == "note"}
    assert any("keep SQLite for the local store" in n for n in notes), notes
    assert any("pgserver tests for the team store" in n for n in notes), notes
    assert "keep SQLite for the local store" in plain(startup)["text"]
    # the notes stand for the turns: no raw turn of any session at startup
    assert not [
        i for i in items(startup) if i["source"].startswith("chat:") and i["kind"] != "note"
    ]

    # another project's session starts without them
    elsewhere = await call(client, "nous/context", {"input": "", "mode": "startup", "sessionId": "o-1",
                                                    "activeFile": (OTHER / "main.py").as_uri()})  # fmt: skip
    assert plain(elsewhere)["text"] and "SQLite" not in plain(elsewhere)["text"]
    assert not [i for i in items(elsewhere) if i["kind"] == "note"]


@pytest.mark.asyncio(loop_scope="module")
async def test_turns_keep_their_order_and_notes_their_turn(client: LanguageClient) -> None:
    first = plain(await call(client, "nous/turn", {"sessionId": "c-1", "role": "user",
                                                     "text": "The release build is blocked by the missing signing key."}))  # fmt: skip
    second = plain(await call(client, "nous/turn", {"sessionId": "c-1", "role": "assistant",
                                                      "text": "Then the next step is to ask ops for the key."}))  # fmt: skip
    assert first["stored"] and second["stored"]
    assert (first["index"], second["index"]) == (0, 1)
    assert [n["tag"] for n in first["notes"]] == ["block"]
    assert [n["tag"] for n in second["notes"]] == ["next"]
    small = plain(await call(client, "nous/turn", {"sessionId": "c-1", "role": "user", "text": "thanks!"}))  # fmt: skip
    assert small["stored"] is False


@pytest.mark.asyncio(loop_scope="module")
async def test_a_secret_in_a_turn_is_redacted_before_storage(client: LanguageClient) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    kept = plain(await call(client, "nous/turn", {"sessionId": "d-1", "role": "user",
                                                    "text": f"We decided to use the deploy token {token} for CI."}))  # fmt: skip
    expanded = plain(await call(client, "nous/expand", {"id": kept["id"]}))
    assert token not in expanded["memory"]["content"]
    note = plain(await call(client, "nous/expand", {"id": kept["notes"][0]["id"]}))
    assert token not in note["memory"]["content"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_session_is_forgotten_whole(client: LanguageClient) -> None:
    kept = plain(await call(client, "nous/turn", {"sessionId": "e-1", "role": "user",
                                                    "text": "We decided to rename the billing module to invoices."}))  # fmt: skip
    await call(client, "nous/turn", {"sessionId": "e-1", "role": "assistant",
                                      "text": "I've renamed the billing module to invoices."})  # fmt: skip
    gone = plain(await call(client, "nous/forgetSession", {"sessionId": "e-1"}))
    assert gone["forgotten"] >= 4  # two turns, a decision note and an impl note
    for memory_id in [kept["id"], kept["notes"][0]["id"]]:
        with pytest.raises(Exception, match="no memory with id"):
            await call(client, "nous/expand", {"id": memory_id})
    startup = await call(client, "nous/context", {"input": "", "mode": "startup", "sessionId": "e-2"})  # fmt: skip
    assert "invoices" not in plain(startup)["text"]


@pytest.mark.asyncio(loop_scope="module")
async def test_forgetting_a_session_leaves_the_same_words_another_session_said(
    client: LanguageClient,
) -> None:
    words = "We decided to move the audit log to its own database."
    first = plain(await call(client, "nous/turn", {"sessionId": "g-1", "role": "user", "text": words}))  # fmt: skip
    second = plain(await call(client, "nous/turn", {"sessionId": "g-2", "role": "user", "text": words}))  # fmt: skip
    assert first["id"] != second["id"]
    gone = plain(await call(client, "nous/forgetSession", {"sessionId": "g-1"}))
    assert gone["forgotten"] == 2  # its turn and its note, not g-2's
    for memory_id in [second["id"], second["notes"][0]["id"]]:
        kept = plain(await call(client, "nous/expand", {"id": memory_id}))["memory"]
        assert "audit log" in kept["content"] and kept["source"] == "chat:g-2#0"
    startup = await call(client, "nous/context", {"input": "", "mode": "startup", "sessionId": "g-3"})  # fmt: skip
    assert "audit log to its own database" in plain(startup)["text"]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    ("params", "field"),
    [({"sessionId": "x", "role": "robot", "text": "hello there friend"}, "role"),
     ({"sessionId": "a#b", "role": "user", "text": "hello there friend"}, "sessionId"),
     ({"sessionId": "x", "role": "user", "text": 5}, "text")],
)  # fmt: skip
async def test_bad_turn_params_name_the_field(
    client: LanguageClient, params: dict[str, Any], field: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=field):
        await call(client, "nous/turn", params)


@pytest.mark.asyncio(loop_scope="module")
async def test_the_review_queue_holds_the_notes_not_the_turns(client: LanguageClient) -> None:
    kept = plain(await call(client, "nous/turn", {"sessionId": "r-1", "role": "assistant",
                                                    "text": "We decided to cache the price list for ten minutes."}))  # fmt: skip
    queue = plain(await call(client, "nous/list", {"review": True, "limit": 500}))
    ids = {m["id"] for m in queue["items"]}
    assert kept["notes"][0]["id"] in ids
    assert kept["id"] not in ids  # the turn is the record of what was said
    assert queue["reviewPending"] >= 1


@pytest.mark.asyncio(loop_scope="module")
async def test_a_sessions_own_turns_are_not_recalled_back_to_it(client: LanguageClient) -> None:
    said = "The staging database lives on the blue cluster in Frankfurt."
    kept = plain(
        await call(client, "nous/turn", {"sessionId": "t-1", "role": "user", "text": said})
    )
    query = {"query": "where does the staging database live?", "budget": 500}
    same = plain(await call(client, "nous/recall", {**query, "sessionId": "t-1"}))
    assert kept["id"] not in {i["id"] for i in items(same)}  # already in its conversation
    later = plain(await call(client, "nous/recall", {**query, "sessionId": "t-2"}))
    assert kept["id"] in {i["id"] for i in items(later)}  # another session remembers it


@pytest.mark.asyncio(loop_scope="module")
async def test_a_question_asked_before_is_not_recalled_as_its_own_answer(
    client: LanguageClient,
) -> None:
    """An earlier session's same question is an echo: it answers nothing, and its BM25 would set
    the scale the real answer is measured on (it pushed a decision under the floor)."""
    decision = "Invoices are rendered with WeasyPrint on the worker, never in the web process."
    await call(client, "nous/remember", {"kind": "decision", "content": decision})
    asked = "use recall: how do we render invoices"
    await call(client, "nous/context", {"input": asked, "mode": "turn", "sessionId": "u-1"})
    answer = plain(await call(client, "nous/recall", {"query": "how do we render invoices",
                                                        "sessionId": "u-2", "budget": 500}))  # fmt: skip
    texts = [i["text"] for i in items(answer)]
    assert any("WeasyPrint" in t for t in texts), texts
    assert not any(asked in t for t in texts), texts


@pytest.mark.asyncio(loop_scope="module")
async def test_a_session_is_not_given_back_its_own_turns(client: LanguageClient) -> None:
    question = "Which queue library should the billing worker use for retries?"
    await call(client, "nous/context", {"input": question, "mode": "turn", "sessionId": "f-1"})
    await call(client, "nous/feedback", {"sessionId": "f-1", "response": "We decided to use "
                                         "the dramatiq queue library for billing worker retries."})  # fmt: skip
    for method, params in [
        ("nous/recall", {"query": "queue library billing worker retries", "sessionId": "f-1"}),
        ("nous/context", {"input": question, "mode": "turn", "sessionId": "f-1"}),
    ]:
        own = plain(await call(client, method, params))
        assert not [i for i in items(own) if i["source"].startswith("chat:f-1#")], method
    # another session finds them
    other = plain(await call(client, "nous/recall", {"query": "queue library billing worker retries",
                                                       "sessionId": "f-2"}))  # fmt: skip
    assert [i for i in items(other) if i["source"].startswith("chat:f-1#")]
