"""A raw-bytes JSON-RPC client for a real `nous serve` subprocess: it can send anything
(malformed frames, floods, oversized bodies), reads every frame on a thread, and reads the
daemon's memory from /proc."""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.reliability.conftest import ROOT

INDEX_TIMEOUT = 120.0


class Daemon:
    """`nous serve --stdio` on a workspace with its own database."""

    def __init__(self, workspace: Path, db: Path, log: Path | None = None) -> None:
        env = {**os.environ, "NOUS_DB": str(db), "PYTHONPATH": str(ROOT / "server")}
        self.stderr = open(log or os.devnull, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nous", "serve", "--stdio"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, cwd=workspace,
            env=env, bufsize=0,
        )  # fmt: skip
        self.db = db
        self.workspace = workspace
        self.ids = itertools.count(1)
        self.responses: dict[Any, dict[str, Any]] = {}
        self.notifications: queue.Queue[dict[str, Any]] = queue.Queue()
        self.unmatched: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.write_lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # -- wire -----------------------------------------------------------------------------------

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stream.read(1)
                if not byte:
                    return
                header += byte
            length = next(
                int(line.split(b":", 1)[1])
                for line in header.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            body = b""
            while len(body) < length:
                chunk = stream.read(length - len(body))
                if not chunk:
                    return
                body += chunk
            message = json.loads(body)
            if "method" in message and "id" not in message:
                self.notifications.put(message)
                continue
            with self.cond:
                if message.get("id") is None:
                    self.unmatched.append(message)
                else:
                    self.responses[message["id"]] = message
                self.cond.notify_all()

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self.write_lock:
            self.proc.stdin.write(data)

    def send(self, message: dict[str, Any] | bytes) -> None:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request_nowait(self, method: str, params: Any = None, omit_params: bool = False) -> int:
        msg_id = next(self.ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if not omit_params:
            message["params"] = params
        self.send(message)
        return msg_id

    def wait(self, msg_id: Any, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while msg_id not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no answer to request {msg_id} (alive: {self.alive()})")
                self.cond.wait(min(left, 0.5))
            return self.responses.pop(msg_id)

    def request(self, method: str, params: Any = None, timeout: float = 60.0) -> dict[str, Any]:
        return self.wait(self.request_nowait(method, params), timeout)

    def notification(self, method: str, timeout: float = INDEX_TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.notifications.get(timeout=max(0.01, deadline - time.monotonic()))
            if message["method"] == method:
                return message

    def drain_notifications(self, method: str) -> list[dict[str, Any]]:
        out = []
        while True:
            try:
                message = self.notifications.get_nowait()
            except queue.Empty:
                return out
            if message["method"] == method:
                out.append(message)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> Daemon:
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(), "capabilities": {},
                "workspaceFolders": [{"uri": self.workspace.as_uri(), "name": "ws"}],
                "initializationOptions": {"watch": False},
            },
            timeout=INDEX_TIMEOUT,
        )  # fmt: skip
        assert "result" in result, result
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        self.notification("nous/indexed")
        return self

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kb(self, field: str = "VmRSS") -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
        raise LookupError(field)

    def close(self) -> int | None:
        if self.alive():
            try:
                self.request("shutdown", None, timeout=10)
                self.send({"jsonrpc": "2.0", "method": "exit"})
                self.proc.wait(timeout=10)
            except (TimeoutError, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()
        return self.proc.returncode


def make_workspace(base: Path, name: str = "hostile") -> Path:
    ws = base / name
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n')
    (ws / "main.py").write_text("print('hi')\n")
    (ws / "AGENTS.md").write_text("# Rules\n\n- Never commit directly to main.\n")
    return ws
