"""A pygls client session against `nous serve` over stdio, for the benchmark (`bench/stdio.py`):
launch, `initialize`, a first `nous/context`, warm-up and timed turns, shutdown. It lives here
because only `lsp/` imports pygls; it knows nothing of the benchmark (inputs come in, raw
timings go out)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient


@dataclass
class Session:
    """What one client session measured."""

    initialize_seconds: float = 0.0
    first_context_seconds: float = 0.0
    first_context_tokens: int = 0
    turn_ms: list[float] = field(default_factory=list)
    daemon: dict[str, Any] = field(default_factory=dict)
    notifications: dict[str, int] = field(default_factory=dict)


async def session(
    db: Path,
    workspace: Path,
    first: dict[str, Any],
    warm: list[dict[str, Any]],
    turns: list[dict[str, Any]],
    env: dict[str, str],
    measure: Callable[[int], dict[str, Any]],
    timeout: float = 60.0,
) -> Session:
    """Launch `nous serve`, send `first`, the `warm` turns, then time each of `turns`;
    `measure(pid)` is called on the daemon before it is shut down."""
    out = Session()
    client = LanguageClient("nous-bench", "1")

    def note(name: str) -> None:
        out.notifications[name] = out.notifications.get(name, 0) + 1

    for method in ("nous/budget", "nous/indexed", lsp.WINDOW_SHOW_MESSAGE, lsp.WINDOW_LOG_MESSAGE):
        client.feature(method)(lambda _params, method=method: note(method))

    log_file = db.parent / "serve.log"
    started = time.perf_counter()
    await client.start_io(
        sys.executable,
        "-m",
        "nous",
        "--db",
        str(db),
        "serve",
        "--stdio",
        "--log-file",
        str(log_file),
        "--log-level",
        "WARNING",
        env=env,
        cwd=str(workspace),
    )
    # pygls's client has no public handle on the process it started; without it (another pygls
    # version) the daemon's memory is simply not measured
    server: asyncio.subprocess.Process | None = getattr(client, "_server", None)
    pid = server.pid if server is not None else 0
    try:
        await asyncio.wait_for(
            client.initialize_async(
                lsp.InitializeParams(
                    capabilities=lsp.ClientCapabilities(),
                    process_id=os.getpid(),
                    workspace_folders=[
                        lsp.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)
                    ],
                    initialization_options={"harvest": False, "watch": False, "capture": False},
                )
            ),
            timeout,
        )
        out.initialize_seconds = time.perf_counter() - started
        client.initialized(lsp.InitializedParams())

        async def context(params: dict[str, Any]) -> Any:
            return await asyncio.wait_for(
                client.protocol.send_request_async("nous/context", params), timeout
            )

        answer = await context(first)
        out.first_context_seconds = time.perf_counter() - started
        out.first_context_tokens = int(getattr(answer, "tokens", 0) or 0)
        for params in warm:
            await context(params)
        for params in turns:
            sent = time.perf_counter()
            await context(params)
            out.turn_ms.append((time.perf_counter() - sent) * 1000)
        out.daemon = measure(pid) if pid else {}
        await asyncio.wait_for(client.shutdown_async(None), timeout)
        client.exit(None)
        await asyncio.wait_for(client.stop(), timeout)  # type: ignore[no-untyped-call]
    except BaseException:
        if server is not None and server.returncode is None:
            server.kill()
        raise
    return out
