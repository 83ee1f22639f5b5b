"""Secrets in content, tags and source through the real daemon (pytest-lsp, `nous serve`):
`nous/remember` answers and stores them redacted, `nous/recall`, `nous/context` and
`nous/expand` never show them, and the database file never holds them."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVE, init_params, make_workspace, plain, server_env
from tests.security import fields

BASE = Path(tempfile.mkdtemp(prefix="nous-secrets-"))
DB = BASE / "memory.db"
WS = make_workspace(BASE, "billing")
PLANTED = fields.planted(seed=7)
ALL_VALUES = [v for p in PLANTED for v in p.values]


@pytest_lsp.fixture(
    scope="module", config=ClientServerConfig(server_command=SERVE, server_env=server_env(DB))
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    indexed = lsp_client.protocol.wait_for_notification_async("nous/indexed")
    await lsp_client.initialize_session(init_params(WS))
    await asyncio.wait_for(indexed, 60)
    yield lsp_client
    await lsp_client.shutdown_session()


async def call(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return plain(await client.protocol.send_request_async(method, params))


@pytest.mark.asyncio(loop_scope="module")
async def test_remember_then_recall_context_and_expand_never_show_a_secret(
    client: LanguageClient,
) -> None:
    made = [
        await call(client, "nous/remember",
                   {"kind": p.kind, "content": p.content, "tags": p.tags, "source": p.source})
        for p in PLANTED
    ]  # fmt: skip
    ids = [m["id"] for m in made]
    recalled = await call(
        client, "nous/recall", {"query": "billing deploy step rotate keys", "budget": 4000}
    )
    context = await call(
        client, "nous/context", {"input": "how do we deploy billing?", "budget": 4000}
    )
    expanded = [await call(client, "nous/expand", {"id": i}) for i in ids]
    shown = [json.dumps(x) for x in (made, recalled, context, expanded)]
    in_recall = {item["id"] for s in recalled["sections"] for item in s["items"]}
    assert in_recall & set(ids), "the recall must show some of the planted memories"
    assert all(m["redactions"] for m in made)
    assert fields.leaks(ALL_VALUES, *shown) == []
    assert fields.leaks(ALL_VALUES, fields.database_bytes(DB)) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_every_look_alike_class_comes_back_whole(client: LanguageClient) -> None:
    for p in fields.lookalikes(seed=7):
        made = await call(client, "nous/remember",
                          {"kind": p.kind, "content": p.content, "tags": p.tags, "source": p.source})  # fmt: skip
        record = await call(client, "nous/expand", {"id": made["id"]})
        memory = record.get("memory", record)
        shown = json.dumps([memory["content"], memory["tags"], memory["source"]])
        assert made["redactions"] == [] and "[REDACTED" not in shown, (p.content, shown)
        text, tag, source = p.values
        assert text in memory["content"] and tag in memory["tags"] and source == memory["source"]
