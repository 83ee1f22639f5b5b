"""A raw-bytes JSON-RPC client over a `nous serve` subprocess (pytest-lsp cannot send bad frames)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.conftest import SERVE, server_env


class Raw:
    def __init__(self, db: Path, workspace: Path, env: dict[str, str] | None = None) -> None:
        self.log = open(db.with_suffix(".stderr"), "ab")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            SERVE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            env={**server_env(db), **(env or {})}, cwd=workspace,
        )  # fmt: skip
        self.buffer = b""
        self.workspace = workspace
        self.notes: list[dict[str, Any]] = []  # notifications skipped while awaiting responses

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def read(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None if nothing complete arrives in time."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end != -1:
                headers = dict(
                    line.split(b":", 1) for line in self.buffer[:end].split(b"\r\n") if b":" in line
                )
                length = int(headers[b"Content-Length"])
                if len(self.buffer) >= end + 4 + length:
                    body = self.buffer[end + 4 : end + 4 + length]
                    self.buffer = self.buffer[end + 4 + length :]
                    message: dict[str, Any] = json.loads(body)
                    return message
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk

    def response(self, msg_id: Any, timeout: float = 10.0) -> dict[str, Any] | None:
        """The response to `msg_id`, compared with its type (skipping notifications), or None."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            message = self.read(left)
            if message is None:
                return None
            got = message.get("id")
            if type(got) is type(msg_id) and got == msg_id and "method" not in message:
                return message
            if "method" in message and "id" not in message:
                self.notes.append(message)
        return None

    def initialize(
        self, pid: int | None = None, folders: list[Path] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:  # fmt: skip
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "processId": pid or os.getpid(), "rootUri": self.workspace.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders or []],
            "initializationOptions": {"watch": False, "harvest": False, **(options or {})}}})  # fmt: skip
        assert self.response("init", 30) is not None
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def notification(self, method: str, timeout: float = 60) -> dict[str, Any] | None:
        """The next notification `method` (one already skipped counts), or None."""
        for note in self.notes:
            if note.get("method") == method:
                self.notes.remove(note)
                return note
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            message = self.read(left)
            if message is None:
                return None
            if message.get("method") == method:
                return message
            if "method" in message and "id" not in message:
                self.notes.append(message)
        return None

    def error(self, method: str, params: Any, timeout: float = 60) -> dict[str, Any]:
        """A request's error; fails the test on a result or no answer."""
        self.calls = getattr(self, "calls", 0) + 1
        msg_id = f"call-{self.calls}"
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        answer = self.response(msg_id, timeout)
        assert answer is not None, f"no answer to {method}"
        assert "error" in answer, answer
        error: dict[str, Any] = answer["error"]
        return error

    def call(self, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        """A request's result; fails the test on an error or no answer."""
        self.calls = getattr(self, "calls", 0) + 1
        msg_id = f"call-{self.calls}"
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        answer = self.response(msg_id, timeout)
        assert answer is not None, f"no answer to {method}"
        assert "error" not in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def answers(self, quiet: float = 1.5) -> list[dict[str, Any]]:
        """Every response until the daemon has been quiet for `quiet` seconds."""
        out = []
        while (message := self.read(quiet)) is not None:
            if "method" not in message:
                out.append(message)
        return out

    @classmethod
    def warmed(cls, db: Path, workspace: Path) -> Raw:
        """A daemon past `initialize` that has answered one `nous/status`."""
        client = cls(db, workspace)
        client.initialize()
        client.send({"jsonrpc": "2.0", "method": "nous/status", "params": {}, "id": "warm"})
        assert client.response("warm", 60) is not None
        return client

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait(10)
        self.log.close()
        return code
