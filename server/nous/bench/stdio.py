"""One run over stdio through a real LSP client (pygls) against `nous serve`: daemon cold start
(launch → `initialize` answered → first `nous/context` answered), warm `nous/context` latency as the
client sees it (so JSON-RPC framing, validation and the worker hop are in it), and the daemon's
resident memory afterwards."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

from nous.bench.cold import COLD_INPUT, child_env
from nous.bench.corpus import Query
from nous.bench.measure import TURNS_PER_SESSION, WARMUP, percentiles

REQUEST_TIMEOUT = 60.0


def available() -> str | None:
    """None when `nous serve` exists, else why the stdio figures are skipped."""
    try:
        found = importlib.util.find_spec("nous.lsp.cli")
    except (ImportError, ValueError) as exc:
        return f"nous.lsp.cli cannot be found ({exc})"
    if found is None:
        return "`nous serve` does not exist yet (no nous.lsp.cli module)"
    return None


def daemon_rss_mb(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out["rss" if key == "VmRSS" else "peak"] = round(int(value.split()[0]) / 1024, 1)
    except OSError:
        pass
    return out


def run(db: Path, workspace: Path, turns: list[Query]) -> dict[str, Any]:
    """The stdio figures, or `{"skipped": reason}` / `{"error": ...}`."""
    reason = available()
    if reason:
        return {"skipped": reason}
    try:
        return asyncio.run(_run(db, workspace, turns))
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


async def _run(db: Path, workspace: Path, turns: list[Query]) -> dict[str, Any]:
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("nous-bench", "1")
    notifications: dict[str, int] = {}

    def note(name: str) -> None:
        notifications[name] = notifications.get(name, 0) + 1

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
        env=child_env(),
        cwd=str(workspace),
    )
    server = client._server
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
                    initialization_options={"harvest": False, "watch": False},
                )
            ),
            REQUEST_TIMEOUT,
        )
        initialized = time.perf_counter() - started
        client.initialized(lsp.InitializedParams())

        async def context(params: dict[str, Any]) -> Any:
            return await asyncio.wait_for(
                client.protocol.send_request_async("nous/context", params), REQUEST_TIMEOUT
            )

        first = await context({"input": COLD_INPUT, "mode": "turn"})
        first_answer = time.perf_counter() - started
        for i, q in enumerate(turns[:WARMUP]):
            await context({"input": q.text, "mode": "turn", "sessionId": f"stdio-warm-{i}"})
        turn_ms = []
        for i, q in enumerate(turns):
            params = {
                "input": q.text,
                "mode": "turn",
                "activeFile": q.active_file,
                "sessionId": f"stdio-turn-{i // TURNS_PER_SESSION}",
            }
            sent = time.perf_counter()
            await context(params)
            turn_ms.append((time.perf_counter() - sent) * 1000)
        memory = daemon_rss_mb(pid) if pid else {}
        await asyncio.wait_for(client.shutdown_async(None), REQUEST_TIMEOUT)
        client.exit(None)
        await asyncio.wait_for(client.stop(), REQUEST_TIMEOUT)  # type: ignore[no-untyped-call]
    except BaseException:
        if server is not None and server.returncode is None:
            server.kill()
        raise
    return {
        "client": "pygls LanguageClient over stdio",
        "command": "python -m nous --db DB serve --stdio",
        "initializeSeconds": round(initialized, 3),
        "firstContextSeconds": round(first_answer, 3),
        "firstContextTokens": int(getattr(first, "tokens", 0) or 0),
        "turn": percentiles(turn_ms),
        "daemonRssMb": memory.get("rss"),
        "daemonPeakRssMb": memory.get("peak"),
        "notifications": notifications,
    }
