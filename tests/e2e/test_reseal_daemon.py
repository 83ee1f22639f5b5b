"""The daemon seals the rows its secret rules have not scanned (rows from before migration 9, a
row an older version stored raw) in batches after startup, on the real `nous serve`: every row
ends up stamped, the raw row as holding a secret, and no answer shows the secret meanwhile."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens
from tests.e2e.conftest import SERVE, init_params, make_workspace, plain, server_env

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
BASE = Path(tempfile.mkdtemp(prefix="nous-reseal-"))
DB = BASE / "memory.db"
WS = make_workspace(BASE, "billing")
ROWS = 60  # more than two of the daemon's batches


def old_file() -> str:
    """A file whose rows carry no seal, one of them stored raw; returns that row's id."""
    store = MemoryStore(DB, HashEmbedder(), tokens.counter())
    drafts = [
        Draft(kind="fact", content=f"Billing job {i} retries {i % 4 + 1} times before paging.")
        for i in range(ROWS)
    ]
    ids = [r.memory.id for r in store.remember_many(drafts)]
    store.close()
    raw = f"Deploy billing with {TOKEN} on the runner."
    conn = sqlite3.connect(DB)
    with conn:
        conn.execute("UPDATE memories SET redaction = NULL")
        conn.execute(
            "UPDATE memories SET content = ?, summary = ?, micro = ? WHERE id = ?",
            (raw, raw, raw[:40], ids[0]),
        )
    conn.close()
    return ids[0]


RAW_ID = old_file()


@pytest_lsp.fixture(
    scope="module", config=ClientServerConfig(server_command=SERVE, server_env=server_env(DB))
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    indexed = lsp_client.protocol.wait_for_notification_async("nous/indexed")
    await lsp_client.initialize_session(init_params(WS, options={"harvest": False}))
    await asyncio.wait_for(indexed, 60)
    yield lsp_client
    await lsp_client.shutdown_session()


def stamps() -> dict[str, str | None]:
    conn = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT id, redaction FROM memories").fetchall())
    finally:
        conn.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_daemon_stamps_every_unsealed_row_after_startup(client: LanguageClient) -> None:
    shown = plain(await client.protocol.send_request_async("nous/expand", {"id": RAW_ID}))
    deadline = time.monotonic() + 60
    while None in stamps().values() and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    found = stamps()
    assert len(found) == ROWS and None not in found.values()
    assert found.pop(RAW_ID).endswith(".-")  # a secret: scrubbed on every read
    assert all(not s.endswith(".-") for s in found.values() if s)
    again = plain(await client.protocol.send_request_async("nous/expand", {"id": RAW_ID}))
    assert TOKEN not in json.dumps([shown, again]) and "[REDACTED:" in json.dumps(again)
