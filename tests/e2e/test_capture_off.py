"""With capture off (`nous.capture: false`) nothing of a chat is stored (design §10)."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVE, make_workspace, plain, server_env
from tests.e2e.test_methods import call
from tests.e2e.test_session_continuity import _start

BASE = Path(tempfile.mkdtemp(prefix="nous-e2e-capture-off-"))
WS = make_workspace(BASE, "quiet")


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=SERVE, server_env=server_env(BASE / "memory.db")),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    await _start(lsp_client, WS, options={"capture": False})
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_capture_off_stores_nothing(client: LanguageClient) -> None:
    before = plain(await call(client, "nous/status", {}))
    assert before["capture"] is False
    said = "We decided to keep SQLite for the local store. Next step: write the docs."
    await call(client, "nous/context", {"input": said, "mode": "turn", "sessionId": "q-1"})
    await call(
        client, "nous/feedback", {"sessionId": "q-1", "response": "I've added the docs page."}
    )
    kept = plain(
        await call(client, "nous/turn", {"sessionId": "q-1", "role": "user", "text": said})
    )
    assert kept["stored"] is False
    after = plain(await call(client, "nous/status", {}))
    assert after["memories"] == before["memories"]
