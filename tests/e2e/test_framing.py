"""Malformed frames over raw bytes: after each one the daemon answers a valid request within 1 s
(or has exited non-zero) — never running but deaf. Plus the lifecycle rules of the spec."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import make_workspace
from tests.e2e.raw import Raw

BASE = Path(tempfile.mkdtemp(prefix="nous-framing-"))
WS = make_workspace(BASE, "framing")

BAD_FRAMES: list[tuple[str, bytes]] = [
    ("invalid json", b"Content-Length: 9\r\n\r\n{not json"),
    ("json not jsonrpc", b'Content-Length: 7\r\n\r\n{"a":1}'),
    ("json array", b"Content-Length: 2\r\n\r\n[]"),
    ("json number", b"Content-Length: 2\r\n\r\n42"),
    ("missing content-length", b"Content-Type: application/json\r\n\r\n{}"),
    ("non-numeric length", b"Content-Length: abc\r\n\r\n{}"),
    ("negative length", b"Content-Length: -5\r\n\r\n{}"),
    ("huge length", b"Content-Length: 99999999999\r\n\r\n{}"),
    ("length over the cap", b"Content-Length: 20000000\r\n\r\n" + b"x" * 1000),
    ("stray nul bytes", b"\x00\x00\x00"),
    ("stray text", b"hello there\r\n"),
    ("truncated header", b"Content-Len"),
    ("header without colon", b"Content-Length 10\r\n\r\n"),
    ("lf only header", b"Content-Length: 2\n\n{}"),
    ("body shorter than length", b'Content-Length: 100\r\n\r\n{"jsonrpc":"2.0"}'),
    ("invalid utf-8", b"Content-Length: 4\r\n\r\n\xff\xfe\xfd\xfc"),
    (
        "wrong jsonrpc version",
        b'Content-Length: 40\r\n\r\n{"jsonrpc":"1.0","id":1,"method":"x"}   ',
    ),
    (
        "id is an object",
        b'Content-Length: 46\r\n\r\n{"jsonrpc":"2.0","id":{"a":1},"method":"x"}   ',
    ),
    ("method is a number", b'Content-Length: 35\r\n\r\n{"jsonrpc":"2.0","id":7,"method":5}'),
    (
        "params is a string",
        b'Content-Length: 65\r\n\r\n{"jsonrpc":"2.0","id":8,"method":"nous/recall","params":"q"}     ',
    ),
    ("deeply nested", b"Content-Length: 4002\r\n\r\n" + b"[" * 2001 + b"]" * 2001),
    ("two headers glued", b"Content-Length: 5\r\nContent-Length: 5\r\n\r\nxxxxx"),
]


@pytest.fixture(scope="module")
def raw() -> Iterator[Raw]:
    client = Raw(BASE / "memory.db", WS)
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": "warm", "method": "nous/status", "params": {}})
    assert client.response("warm", 60) is not None  # the engine is loaded; now 1 s is the bar
    yield client
    client.close()


def test_there_are_at_least_20_cases() -> None:
    assert len(BAD_FRAMES) >= 20


@pytest.mark.parametrize(("name", "frame"), BAD_FRAMES, ids=[n for n, _ in BAD_FRAMES])
def test_daemon_keeps_answering_after_a_bad_frame(raw: Raw, name: str, frame: bytes) -> None:
    raw.write(frame)
    raw.send({"jsonrpc": "2.0", "id": f"after-{name}", "method": "nous/status", "params": {}})
    answer = raw.response(f"after-{name}", timeout=1.0 if "length" not in name else 3.0)
    if answer is None:
        assert raw.proc.poll() not in (None, 0), f"deaf after {name!r}"
    else:
        assert answer["result"]["project"] == "framing"


def test_exactly_one_response_per_request(raw: Raw) -> None:
    for n in range(5):
        raw.send({"jsonrpc": "2.0", "id": f"once-{n}", "method": "nous/status", "params": {}})
    seen = []
    while (message := raw.read(2.0)) is not None:
        if "id" in message and "method" not in message:
            seen.append(message["id"])
    assert sorted(i for i in seen if str(i).startswith("once-")) == [f"once-{n}" for n in range(5)]


def test_invalid_json_gets_parse_error(raw: Raw) -> None:
    raw.write(b"Content-Length: 5\r\n\r\n{oops")
    while (message := raw.read(2.0)) is not None:
        if "error" in message:
            assert message["error"]["code"] == -32700 and message["id"] is None
            return
    pytest.fail("no -32700")


def test_repeated_faults_make_at_most_one_popup(raw: Raw) -> None:
    for _ in range(200):
        raw.write(b"\x00garbage\r\n")
    raw.send({"jsonrpc": "2.0", "id": "after-flood", "method": "nous/status", "params": {}})
    popups = 0
    while (message := raw.read(2.0)) is not None:
        popups += message.get("method") == "window/showMessage"
        if message.get("id") == "after-flood":
            break
    assert popups <= 1


def test_lifecycle_errors_and_exit_codes(tmp_path: Path) -> None:
    client = Raw(tmp_path / "m.db", WS)
    client.send({"jsonrpc": "2.0", "id": 1, "method": "nous/status", "params": {}})
    assert client.response(1)["error"]["code"] == -32002  # type: ignore[index]
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    assert client.response(2) == {"jsonrpc": "2.0", "id": 2, "result": None}
    client.send({"jsonrpc": "2.0", "id": 3, "method": "nous/status", "params": {}})
    assert client.response(3)["error"]["code"] == -32600  # type: ignore[index]
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert client.proc.wait(10) == 0

    rude = Raw(tmp_path / "m.db", WS)
    rude.initialize()
    rude.send({"jsonrpc": "2.0", "method": "exit"})
    assert rude.proc.wait(10) == 1


def test_oversized_message_is_refused_without_buffering_it(tmp_path: Path) -> None:
    client = Raw(tmp_path / "m.db", WS)
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": "warm", "method": "nous/status", "params": {}})
    assert client.response("warm", 60) is not None
    start = b'{"jsonrpc":"2.0","id":"huge","method":"nous/remember","params":{"text":"'
    client.write(b"Content-Length: 17000000\r\n\r\n" + start)
    chunk = b"y" * (1 << 20)
    for _ in range(16):
        client.write(chunk)
    client.write(b"y" * (17000000 - 16 * (1 << 20) - len(start) - 3) + b'"}}')
    refused = client.response("huge", 5)
    assert refused is not None and refused["error"]["code"] == -32600
    assert "exceeds the 16777216-byte cap" in refused["error"]["message"]
    client.send({"jsonrpc": "2.0", "id": "big", "method": "nous/status", "params": {}})
    assert client.response("big", 5)["result"]["project"] == "framing"  # type: ignore[index]
    rss_kb = int(
        next(
            line
            for line in Path(f"/proc/{client.proc.pid}/status").read_text().splitlines()
            if line.startswith("VmRSS")
        ).split()[1]
    )
    assert rss_kb < 600_000
    client.close()
