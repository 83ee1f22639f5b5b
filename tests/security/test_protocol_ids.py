"""Request ids and param types on the wire (JSON-RPC 2.0, LSP): every request id gets exactly one
answer, ids compare with their type, an id is free again once answered, the daemon's bookkeeping
is empty when nothing is in flight, and no param is coerced (`"800"`, `true`, `"0.5"` → -32602
naming the field). Through a real `nous serve` over raw bytes, and the daemon class in process."""

from __future__ import annotations

import asyncio
import io
import json
import tempfile
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from nous.lsp import handlers
from nous.lsp.requests import MAX_IN_FLIGHT
from nous.lsp.server import Daemon
from tests.e2e.conftest import make_workspace
from tests.e2e.raw import Raw

BASE = Path(tempfile.mkdtemp(prefix="nous-ids-"))
WS = make_workspace(BASE, "ids")
STATUS = {"jsonrpc": "2.0", "method": "nous/status", "params": {}}
VALID: dict[str, dict[str, Any]] = {
    "nous/context": {"input": "how do we deploy?", "sessionId": "s1"},
    "nous/recall": {"query": "deploy", "sessionId": "s2"},
    "nous/remember": {"kind": "fact", "content": "the deploy runs on Fridays"},
    "nous/feedback": {"sessionId": "s1", "response": "deploy on Fridays"},
    "nous/expand": {"id": "0" * 32, "sessionId": "s1"},
    "nous/forget": {"id": "0" * 32, "purge": False},
    "nous/supersede": {"id": "0" * 32, "newId": "f" * 32},
    "nous/outcome": {"id": "0" * 32, "outcome": "success"},
}


@pytest.fixture(scope="module")
def raw() -> Iterator[Raw]:
    client = Raw.warmed(BASE / "memory.db", WS)
    yield client
    client.close()


def test_a_bool_id_is_an_invalid_request_and_the_int_id_after_it_is_answered(raw: Raw) -> None:
    raw.send({**STATUS, "id": True})
    raw.send({**STATUS, "id": 1})
    got = raw.answers()
    assert len(got) == 2
    refused = next(m for m in got if "error" in m)
    assert refused["id"] is None and refused["error"]["code"] == -32600
    answered = next(m for m in got if "result" in m)
    assert type(answered["id"]) is int and answered["id"] == 1


@pytest.mark.parametrize("bad", [1.5, 1.0, False, [1], {"a": 1}, None])
def test_ids_that_are_not_integers_or_strings_are_invalid_requests(raw: Raw, bad: Any) -> None:
    raw.send({**STATUS, "id": bad})
    (got,) = raw.answers()
    assert got["id"] is None and got["error"]["code"] == -32600


def test_string_and_number_ids_are_different_requests(raw: Raw) -> None:
    raw.send({**STATUS, "id": "5"})
    raw.send({**STATUS, "id": 5})
    got = raw.answers()
    assert sorted((type(m["id"]).__name__, m["id"]) for m in got if "result" in m) == [
        ("int", 5),
        ("str", "5"),
    ]


def test_an_id_is_answered_again_after_its_answer(raw: Raw) -> None:
    for _ in range(3):
        for msg_id in (7, "seven"):
            raw.send({**STATUS, "id": msg_id})
            answer = raw.response(msg_id, 10)
            assert answer is not None and "result" in answer


def test_an_id_still_in_flight_is_refused_once_and_the_first_still_answered(raw: Raw) -> None:
    slow = {"jsonrpc": "2.0", "method": "nous/context", "params": {"input": "deploy " * 3000}}
    raw.send({**slow, "id": 99})
    raw.send({**STATUS, "id": 99})
    got = raw.answers(3.0)
    assert len(got) == 2 and all(m["id"] == 99 for m in got)
    assert sorted("result" in m for m in got) == [False, True]
    assert next(m for m in got if "error" in m)["error"]["code"] == -32600


@pytest.mark.parametrize("method", sorted(VALID))
def test_no_param_is_coerced(raw: Raw, method: str) -> None:
    """For every field of every method, a value of the wrong JSON type → -32602 naming it."""
    model: type[BaseModel] = handlers.METHODS[method][0]
    for name, info in model.model_fields.items():
        alias = info.alias or name
        for wrong in wrong_values(info.annotation):
            error = raw.error(method, {**VALID[method], alias: wrong}, timeout=30)
            assert error["code"] == -32602, (method, alias, wrong, error)
            assert alias in error["message"], (method, alias, wrong, error)


def wrong_values(annotation: Any) -> list[Any]:
    """JSON values of another type than `annotation` that a lax parser would coerce."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return [w for arg in args if arg is not type(None) for w in wrong_values(arg)]
    if origin is list:
        return ["x", 5, {"a": 1}]
    if origin is typing.Literal:
        return [5, True]
    return {
        int: ["800", True, 800.0, "1e3"],
        float: ["0.5", True, "1"],
        bool: [1, 0, "true", "false"],
        str: [5, 0.5, True, ["x"]],
    }.get(annotation, [])


def test_the_issues_cases_by_name(raw: Raw) -> None:
    for method, params, field in [
        ("nous/context", {"budget": "800"}, "budget"),
        ("nous/context", {"budget": True}, "budget"),
        ("nous/recall", {"query": "q", "budget": "800"}, "budget"),
        ("nous/remember", {"kind": "fact", "content": "x", "confidence": "0.5"}, "confidence"),
        ("nous/remember", {"kind": "fact", "content": "x", "importance": True}, "importance"),
        ("nous/forget", {"id": "x", "purge": 1}, "purge"),
        ("nous/context", {"conversation": [{"role": "user", "content": 5}]}, "conversation"),
    ]:
        error = raw.error(method, params)
        assert error["code"] == -32602 and field in error["message"], (params, error)


async def test_bookkeeping_is_empty_once_every_request_is_answered(tmp_path: Path) -> None:
    """3,000 requests at once: the first `MAX_IN_FLIGHT` run, the rest are refused; each gets
    exactly one answer; afterwards nothing is held, and every id can be used again."""
    out = io.BytesIO()
    daemon = Daemon(io.BytesIO(), out, {"db": tmp_path / "m.db", "harvest": False})
    daemon._loop = asyncio.get_running_loop()
    daemon.handle(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "processId": None, "rootUri": WS.as_uri(), "capabilities": {},
        "initializationOptions": {"watch": False, "harvest": False}}}).encode())  # fmt: skip
    total = 3000

    async def responses(expected: int) -> list[dict[str, Any]]:
        for _ in range(1200):
            got = [m for m in parse(out.getvalue()) if "id" in m and m["id"] != "init"]
            if len(got) >= expected and not len(daemon.in_flight):
                return got
            await asyncio.sleep(0.05)
        raise AssertionError(f"{len(got)} of {expected} answered")

    for n in range(total):
        daemon.handle(json.dumps({**STATUS, "id": n}).encode())
    assert len(daemon.in_flight) == MAX_IN_FLIGHT
    got = await responses(total)
    ids = sorted(m["id"] for m in got)
    assert ids == list(range(total))  # each exactly once
    assert sum("result" in m for m in got) == MAX_IN_FLIGHT
    assert {m["error"]["code"] for m in got if "error" in m} == {-32600}
    assert len(daemon.in_flight) == 0
    out.seek(0)
    out.truncate()
    for n in range(100):  # the same ids again, now one at a time
        daemon.handle(json.dumps({**STATUS, "id": n}).encode())
        await responses(n + 1)
    again = [m for m in parse(out.getvalue()) if "id" in m]
    assert sorted(m["id"] for m in again) == list(range(100)) and all("result" in m for m in again)
    assert len(daemon.in_flight) == 0 and not hasattr(daemon, "answered")
    daemon.worker.shutdown(wait=True)


def parse(data: bytes) -> list[dict[str, Any]]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(head.split(b"\r\n")[0].split(b":")[1])
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out
