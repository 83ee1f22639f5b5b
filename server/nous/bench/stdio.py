"""One run over stdio through a real LSP client (pygls) against `nous serve`: daemon cold start
(launch → `initialize` answered → first `nous/context` answered), warm `nous/context` latency as the
client sees it (so JSON-RPC framing, validation and the worker hop are in it), and the daemon's
resident memory afterwards."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import threading
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
    """The stdio figures, or `{"skipped": reason}` / `{"error": ...}`: one run through the pygls
    client, then one through a minimal client (framing + `json` only), which shows how much of
    the pygls figure is the client turning each answer into Python objects."""
    reason = available()
    if reason:
        return {"skipped": reason}
    try:
        out = asyncio.run(_run(db, workspace, turns))
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    try:
        out["minimalClient"] = _raw_run(db, workspace, turns)
    except Exception as exc:
        out["minimalClient"] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def _serve_command(db: Path, log_file: Path) -> list[str]:
    return [sys.executable, "-m", "nous", "--db", str(db), "serve", "--stdio",
            "--log-file", str(log_file), "--log-level", "WARNING"]  # fmt: skip


def _init_params(workspace: Path) -> dict[str, Any]:
    return {
        "processId": os.getpid(), "capabilities": {},
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
        "initializationOptions": {"harvest": False, "watch": False, "capture": False},
    }  # fmt: skip


class _Pipe:
    """Blocking JSON-RPC over a child's stdin/stdout: Content-Length framing and `json`."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin, self.stdout = process.stdin, process.stdout
        self.bytes_in: list[int] = []

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdin.flush()

    def read(self) -> dict[str, Any]:
        length = 0
        while True:
            line = self.stdout.readline()
            if not line:
                raise EOFError("the daemon closed its output")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        body = self.stdout.read(length)
        self.bytes_in.append(length)
        message: dict[str, Any] = json.loads(body)
        return message

    def request(self, msg_id: int, method: str, params: Any) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == msg_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message


def _raw_run(db: Path, workspace: Path, turns: list[Query]) -> dict[str, Any]:
    started = time.perf_counter()
    process = subprocess.Popen(
        _serve_command(db, db.parent / "serve-minimal.log"), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env(), cwd=str(workspace),
    )  # fmt: skip
    watchdog = threading.Timer(REQUEST_TIMEOUT + 3.0 * len(turns), process.kill)
    watchdog.start()
    try:
        pipe = _Pipe(process)
        pipe.request(0, "initialize", _init_params(workspace))
        initialized = time.perf_counter() - started
        pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        pipe.request(1, "nous/context", {"input": COLD_INPUT, "mode": "turn"})
        first = time.perf_counter() - started
        for i, q in enumerate(turns[:WARMUP]):
            pipe.request(10 + i, "nous/context", {"input": q.text, "mode": "turn"})
        pipe.bytes_in.clear()
        turn_ms = []
        for i, q in enumerate(turns):
            params = {"input": q.text, "mode": "turn", "activeFile": q.active_file,
                      "sessionId": f"raw-turn-{i // TURNS_PER_SESSION}"}  # fmt: skip
            sent = time.perf_counter()
            answer = pipe.request(100 + i, "nous/context", params)
            turn_ms.append((time.perf_counter() - sent) * 1000)
            assert "text" in answer["result"]
        answers = [n for n in pipe.bytes_in if n > 1000]
        memory = daemon_rss_mb(process.pid)
        pipe.request(99_999, "shutdown", None)
        pipe.send({"jsonrpc": "2.0", "method": "exit"})
        process.wait(REQUEST_TIMEOUT)
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
    return {
        "client": "minimal: Content-Length framing + json.loads, blocking pipes",
        "initializeSeconds": round(initialized, 3),
        "firstContextSeconds": round(first, 3),
        "turn": percentiles(turn_ms),
        "answerBytesMedian": int(statistics.median(answers)) if answers else 0,
        "daemonRssMb": memory.get("rss"),
        "daemonPeakRssMb": memory.get("peak"),
    }


async def _run(db: Path, workspace: Path, turns: list[Query]) -> dict[str, Any]:
    from nous.lsp import client

    measured = await client.session(
        db,
        workspace,
        first={"input": COLD_INPUT, "mode": "turn"},
        warm=[
            {"input": q.text, "mode": "turn", "sessionId": f"stdio-warm-{i}"}
            for i, q in enumerate(turns[:WARMUP])
        ],
        turns=[
            {
                "input": q.text,
                "mode": "turn",
                "activeFile": q.active_file,
                "sessionId": f"stdio-turn-{i // TURNS_PER_SESSION}",
            }
            for i, q in enumerate(turns)
        ],
        env=child_env(),
        measure=daemon_rss_mb,
        timeout=REQUEST_TIMEOUT,
    )
    memory = measured.daemon
    initialized, first_answer = measured.initialize_seconds, measured.first_context_seconds
    turn_ms, notifications = measured.turn_ms, measured.notifications
    return {
        "client": "pygls LanguageClient over stdio",
        "command": "python -m nous --db DB serve --stdio",
        "initializeSeconds": round(initialized, 3),
        "firstContextSeconds": round(first_answer, 3),
        "firstContextTokens": measured.first_context_tokens,
        "turn": percentiles(turn_ms),
        "daemonRssMb": memory.get("rss"),
        "daemonPeakRssMb": memory.get("peak"),
        "notifications": notifications,
    }
