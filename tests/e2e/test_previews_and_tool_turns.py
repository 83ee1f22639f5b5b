"""Through a real `nous serve`: a preview (Show Context for…, `@nous /context`: `preview: true`)
keeps no chat turn and records no injection; an agent-mode tool call's input, reported the way
the extension's tools report it (`nous/context` or `nous/recall` under the chat's session, then
`nous/turn`), is kept as that chat's turn and opens the next session (design §10)."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVE, make_workspace, plain, server_env
from tests.e2e.test_methods import call
from tests.e2e.test_session_continuity import _start, items

BASE = Path(tempfile.mkdtemp(prefix="nous-e2e-previews-"))
WS = make_workspace(
    BASE,
    "billing",
    "# Agent instructions\n\n## Conventions\n\n"
    "- Refunds go through the ledger service, never straight to the payment provider.\n"
    "- Money is stored as integer cents.\n",
)
SAID = (
    "We decided to route refunds through the ledger service. "
    "Next step: wire the refund webhook into the ledger."
)


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=SERVE, server_env=server_env(BASE / "memory.db")),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    await _start(lsp_client, WS, options={})
    yield lsp_client
    await lsp_client.shutdown_session()


async def _next_index(client: LanguageClient, session: str) -> int:
    """The index the session's next turn gets: one past its last kept turn. A turn request is
    answered on the store thread after any capture an earlier request deferred there."""
    kept = plain(await call(client, "nous/turn", {
        "sessionId": session, "role": "assistant",
        "text": "Agreed, the ledger service handles every refund from now on.",
    }))  # fmt: skip
    assert kept["stored"], kept
    index: int = kept["index"]
    return index


@pytest.mark.asyncio(loop_scope="module")
async def test_a_preview_keeps_no_turn_and_records_no_injection(client: LanguageClient) -> None:
    shown = plain(await call(client, "nous/context", {
        "input": SAID, "mode": "turn", "sessionId": "p-1", "preview": True,
    }))  # fmt: skip
    assert shown["text"], "a preview still answers with what would be injected"
    assert await _next_index(client, "p-1") == 0  # the previewed input was not kept
    judged = plain(await call(client, "nous/feedback", {"sessionId": "p-1",
                                                          "response": "ledger service refunds"}))  # fmt: skip
    assert judged["referenced"] == [] and judged["notReferenced"] == []  # nothing was injected
    # nothing of the preview opens the next session
    startup = await call(client, "nous/context", {"input": "", "mode": "startup", "sessionId": "p-next"})  # fmt: skip
    assert not [i for i in items(startup) if "refund webhook" in i["text"]]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_same_request_without_preview_keeps_its_turn(client: LanguageClient) -> None:
    """The control: the check above would see a kept turn. (Its own words, from when the same
    text in one project was one memory under the session that said it first; each session now
    keeps its own.)"""
    said = SAID.replace("refund webhook", "refund callback")
    answer = plain(await call(client, "nous/context", {"input": said, "mode": "turn", "sessionId": "p-2"}))  # fmt: skip
    assert answer["text"]
    assert await _next_index(client, "p-2") == 1
    judged = plain(await call(client, "nous/feedback", {"sessionId": "p-2",
                                                          "response": "ledger service refunds"}))  # fmt: skip
    assert judged["referenced"] or judged["notReferenced"]
    forgotten = plain(await call(client, "nous/forgetSession", {"sessionId": "p-2"}))
    assert forgotten["forgotten"] >= 2  # the turn, its notes and the reply


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("value", ["yes", 1, None])
async def test_a_preview_flag_that_is_not_a_boolean_names_the_field(
    client: LanguageClient, value: Any
) -> None:
    with pytest.raises(JsonRpcInvalidParams, match="preview"):
        await call(client, "nous/context", {"input": "x", "preview": value})


AGENT = "vscode-agent-0123456789abcdef0123"
"""A session id as the tools derive it from the invocation token (`toolTurns.tokenSession`)."""
TASK = (
    "Move the invoice export to the nightly job; we decided to drop the CSV format for it. "
    "Next step: add the export tests for the nightly job."
)


@pytest.mark.asyncio(loop_scope="module")
async def test_an_agent_mode_tool_call_is_kept_as_its_chats_turn(client: LanguageClient) -> None:
    # nous_context (#nousContext) as an agent-mode model calls it: the startup context under the
    # chat's session, then its task reported as that chat's turn
    startup = plain(await call(client, "nous/context", {"input": TASK, "mode": "startup",
                                                          "sessionId": AGENT}))  # fmt: skip
    assert startup["session"]["id"] == AGENT
    kept = plain(await call(client, "nous/turn", {"sessionId": AGENT, "role": "user",
                                                    "text": TASK, "tool": "nous_context"}))  # fmt: skip
    # a tool's input is no memory (issue 26): what it states is kept as notes, not the task
    assert kept["stored"] and kept["index"] == 0 and kept["id"] is None
    tags = {n["tag"] for n in kept["notes"]}
    assert {"dec", "next"} <= tags, kept["notes"]

    # nous_recall (#nousRecall): a query asks and tells nothing; it is not kept
    query = "where do refunds go?"
    recalled = plain(await call(client, "nous/recall", {"query": query, "sessionId": AGENT}))
    assert recalled["session"]["id"] == AGENT
    asked = plain(await call(client, "nous/turn", {"sessionId": AGENT, "role": "user",
                                                     "text": query, "tool": "nous_recall"}))  # fmt: skip
    assert asked["stored"] is False
    # reported as a plain chat turn (a client that does not say it is a tool's), the question
    # is kept for its own session's window only
    untagged = plain(await call(client, "nous/turn", {"sessionId": AGENT, "role": "user", "text": query}))  # fmt: skip
    assert untagged["stored"] and untagged["sessionOnly"] and untagged["index"] == 1

    # the next chat starts where this one ended
    later = await call(client, "nous/context", {"input": "", "mode": "startup", "sessionId": "agent-next"})  # fmt: skip
    notes = [i["text"] for i in items(later) if i["kind"] == "note"]
    assert any("drop the CSV format" in n for n in notes), notes
    assert any("export tests for the nightly job" in n for n in notes), notes

    # and the agent chat is forgotten whole like any other
    forgotten = plain(await call(client, "nous/forgetSession", {"sessionId": AGENT}))
    assert forgotten["forgotten"] == len(kept["notes"]) + 1  # the notes and the plain question
    after = await call(client, "nous/context", {"input": "", "mode": "startup", "sessionId": "agent-after"})  # fmt: skip
    assert not [i for i in items(after) if "nightly job" in i["text"]]
