"""The built wheel works on its own: built from this checkout, installed into a fresh venv outside
it, then `nous remember/recall/context/status`, `nous serve` (LSP) and `nous mcp` run with the
network cut (`unshare -n`: a network namespace with nothing in it). The ONNX model, tokenizer,
encodings and manifest must come from the wheel's package data."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def _cut() -> list[str] | None:
    """The prefix that runs a command without network, or None where this machine cannot."""
    if not shutil.which("unshare"):
        return None
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return prefix
    return None


CUT = _cut()


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if CUT is None:
        if os.environ.get("NOUS_E2E_REQUIRED"):
            pytest.fail("unshare cannot cut the network here (needs root or user namespaces)")
        pytest.skip("unshare cannot cut the network here")
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(ROOT)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    (wheel,) = dist.glob("nous_context-*-py3-none-any.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=1500, cwd=base,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    home = base / "home"
    home.mkdir()
    workspace = base / "shop"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    return {"venv": venv, "home": home, "workspace": workspace, "db": base / "memory.db"}


def env_of(installed: dict[str, Path]) -> dict[str, str]:
    """No checkout on any path, no models folder, a private home."""
    return {
        "PATH": f"{installed['venv'] / 'bin'}:/usr/bin:/bin",
        "HOME": str(installed["home"]),
        "NOUS_DB": str(installed["db"]),
        "LANG": "C.UTF-8",
    }


def offline(installed: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    assert CUT is not None
    return subprocess.run(
        [*CUT, str(installed["venv"] / "bin" / "nous"), *args],
        env=env_of(installed), cwd=installed["workspace"], capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


def ok(installed: dict[str, Path], *args: str) -> Any:
    done = offline(installed, "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_network_is_really_cut(installed: dict[str, Path]) -> None:
    assert CUT is not None
    probe = "import socket; socket.create_connection(('1.1.1.1', 443), timeout=5)"
    done = subprocess.run([*CUT, sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode != 0 and "unreachable" in done.stderr.lower(), done.stderr


def test_the_installed_package_is_the_wheel_not_the_checkout(installed: dict[str, Path]) -> None:
    python = installed["venv"] / "bin" / "python"
    code = (
        "import importlib.metadata as m, nous, nous.assets as a; "
        "print(nous.__file__); print(m.version('nous-context')); print(a.models_dir())"
    )
    done = subprocess.run(
        [python, "-c", code], env=env_of(installed), cwd=installed["home"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    module, version, models = done.stdout.split("\n")[:3]
    assert module.startswith(str(installed["venv"])), module
    assert not module.startswith(str(ROOT))
    assert version == "0.1.0"
    assert models.startswith(str(installed["venv"])) and (Path(models) / "manifest.json").is_file()


def test_remember_recall_context_status_offline(installed: dict[str, Path]) -> None:
    made = ok(installed, "remember", "--kind", "decision", "Payments go through the PaymentGateway adapter; nothing calls the card processor directly.")  # fmt: skip
    assert made["status"] == "created"
    recalled = ok(installed, "recall", "--budget", "200", "how do we take card payments?")
    assert "PaymentGateway" in recalled["text"] and recalled["tokens"] <= 200
    context = ok(installed, "context", "how should checkout take card payments?")
    assert "PaymentGateway" in context["text"]
    status = ok(installed, "status")
    assert status["model"] == "all-MiniLM-L6-v2" and status["project"] == "shop"


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _responses(proc: subprocess.Popen[bytes], want: int, timeout: float) -> dict[int, Any]:
    assert proc.stdout is not None
    buffer, found = b"", {}
    deadline = time.monotonic() + timeout
    while want not in found and time.monotonic() < deadline:
        if not select.select([proc.stdout], [], [], 1)[0]:
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        buffer += chunk
        while (end := buffer.find(b"\r\n\r\n")) != -1:
            length = int(buffer[:end].split(b"Content-Length:")[1].split(b"\r\n")[0])
            if len(buffer) < end + 4 + length:
                break
            message = json.loads(buffer[end + 4 : end + 4 + length])
            buffer = buffer[end + 4 + length :]
            if "id" in message and "method" not in message:
                found[message["id"]] = message
    return found


def test_serve_answers_over_lsp_offline(installed: dict[str, Path]) -> None:
    assert CUT is not None
    workspace = installed["workspace"]
    ok(installed, "remember", "--kind", "procedure", "To release: bump the version, tag vX.Y.Z, push the tag.")  # fmt: skip
    proc = subprocess.Popen(
        [*CUT, str(installed["venv"] / "bin" / "nous"), "serve", "--stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env_of(installed), cwd=workspace,
    )  # fmt: skip
    assert proc.stdin is not None
    try:
        proc.stdin.write(
            _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": None, "capabilities": {},
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "shop"}],
                "initializationOptions": {"watch": False, "harvest": False}}})
            + _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            + _frame({"jsonrpc": "2.0", "id": 2, "method": "nous/recall",
                      "params": {"query": "how do we release?", "budget": 200}})
        )  # fmt: skip
        proc.stdin.flush()
        answers = _responses(proc, 2, timeout=300)
        assert 2 in answers, answers
        assert "tag vX.Y.Z" in answers[2]["result"]["text"], answers[2]
        proc.stdin.write(
            _frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
            + _frame({"jsonrpc": "2.0", "method": "exit"})
        )
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_mcp_answers_offline(installed: dict[str, Path]) -> None:
    assert CUT is not None
    ok(installed, "remember", "--kind", "convention", "Money is stored as integer cents, never floats.")  # fmt: skip
    params = StdioServerParameters(
        command=CUT[0], args=[*CUT[1:], str(installed["venv"] / "bin" / "nous"), "mcp"],
        env=env_of(installed), cwd=str(installed["workspace"]),
    )  # fmt: skip
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("nous_recall", {"query": "how is money stored?"})
        text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
        assert not result.is_error and "integer cents" in text, text
