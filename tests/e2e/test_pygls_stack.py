"""One JSON-RPC stack: pygls dispatches every method, and the rules the daemon adds on top of it
(docs/architecture.md, *The daemon*) hold on a real `nous serve` over raw bytes — each request
gets exactly one answer, and the daemon answers the next one."""

from __future__ import annotations

import io
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from nous.lsp import handlers
from nous.lsp.server import Daemon
from tests.e2e.conftest import ROOT, make_workspace
from tests.e2e.raw import Raw

BASE = Path(tempfile.mkdtemp(prefix="nous-stack-"))
WS = make_workspace(BASE, "stack")
STATUS = {"jsonrpc": "2.0", "method": "nous/status", "params": {}}
SLOW = {"jsonrpc": "2.0", "method": "nous/context", "params": {"input": "deploy " * 3000}}


@pytest.fixture(scope="module")
def raw() -> Iterator[Raw]:
    client = Raw.warmed(BASE / "memory.db", WS)
    yield client
    client.close()


def test_every_custom_method_and_the_lifecycle_are_pygls_features(tmp_path: Path) -> None:
    daemon = Daemon(io.BytesIO(), io.BytesIO(), {"db": tmp_path / "m.db"})
    try:
        features = set(daemon.protocol.fm.features)
    finally:
        daemon.worker.shutdown(wait=True)
    assert set(handlers.METHODS) <= features
    assert {"initialize", "initialized", "shutdown", "exit"} <= features


def test_an_object_with_a_jsonrpc_key_inside_a_message_is_refused(raw: Raw) -> None:
    """pygls's reader would take the inner object for a message of its own and drop the request
    unanswered."""
    inner = {"jsonrpc": "2.0", "method": "x"}
    raw.send({**STATUS, "id": "nested", "params": {"sessionId": inner}})
    raw.send({**STATUS, "id": "after-nested"})
    got = {m["id"]: m for m in raw.answers()}
    assert got["nested"]["error"]["code"] == -32600
    assert '"jsonrpc"' in got["nested"]["error"]["message"]
    assert got["after-nested"]["result"]["project"] == "stack"


def test_params_an_lsp_type_cannot_hold_are_invalid_params_naming_the_field(raw: Raw) -> None:
    raw.send({"jsonrpc": "2.0", "id": "hover", "method": "textDocument/hover",
              "params": {"textDocument": 5, "position": {"line": 0, "character": 0}}})  # fmt: skip
    # a notification pygls cannot read is dropped; the daemon goes on
    raw.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": []}})
    raw.send({**STATUS, "id": "after-hover"})
    got = {m["id"]: m for m in raw.answers()}
    assert got["hover"]["error"]["code"] == -32602
    assert "text_document" in got["hover"]["error"]["message"]
    assert got["after-hover"]["result"]["project"] == "stack"


def test_an_unknown_method_is_method_not_found_whatever_its_params(raw: Raw) -> None:
    # pygls turns unknown params into namedtuples; a "type_name" key used to break that
    raw.send({"jsonrpc": "2.0", "id": "nope", "method": "nous/nope", "params": {"type_name": 5}})
    (got,) = raw.answers()
    assert got["id"] == "nope" and got["error"]["code"] == -32601


def test_a_second_initialize_is_refused_and_changes_nothing(raw: Raw) -> None:
    raw.send({"jsonrpc": "2.0", "id": "again", "method": "initialize",
              "params": {"processId": None, "rootUri": BASE.as_uri(), "capabilities": {}}})  # fmt: skip
    raw.send({**STATUS, "id": "after-again"})
    got = {m["id"]: m for m in raw.answers()}
    assert got["again"]["error"]["code"] == -32600
    assert got["after-again"]["result"]["project"] == "stack"


def test_a_cancelled_request_is_answered_once_and_its_id_used_again(raw: Raw) -> None:
    raw.send({**SLOW, "id": "c1"})
    raw.send({**SLOW, "id": "c2"})  # queued behind c1 on the store thread
    raw.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "c2"}})
    got = raw.answers(3.0)
    assert sorted(m["id"] for m in got) == ["c1", "c2"]
    cancelled = next(m for m in got if m["id"] == "c2")
    assert cancelled["error"]["code"] == -32800
    raw.send({**STATUS, "id": "c2"})
    (again,) = raw.answers()
    assert again["id"] == "c2" and again["result"]["project"] == "stack"


def test_requests_in_flight_at_shutdown_get_one_answer_each(tmp_path: Path) -> None:
    client = Raw(tmp_path / "m.db", WS)
    try:
        client.initialize()
        client.call("nous/status", {})
        for n in range(3):
            client.send({**SLOW, "id": f"slow-{n}"})
        client.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
        got = client.answers(8.0)  # shutdown waits up to 5 s for the vector snapshots
        ids = sorted(m["id"] for m in got)
        assert ids == sorted(["bye", *(f"slow-{n}" for n in range(3))])
        assert next(m for m in got if m["id"] == "bye")["result"] is None
        client.send({"jsonrpc": "2.0", "method": "exit"})
        assert client.proc.wait(10) == 0
    finally:
        client.close()


def test_the_daemon_uses_no_private_name_of_pygls() -> None:
    """pygls is a range in pyproject.toml because only its public API is used: no `._name` of
    pygls's own (one lsp/ does not define itself) appears in lsp/."""
    pygls = Path(__import__("pygls").__file__).parent
    private = set()
    for path in pygls.rglob("*.py"):
        private |= set(re.findall(r"(?:def |self\.)(_[a-z]\w*)", path.read_text()))
    ours = ROOT / "server" / "nous" / "lsp"
    own = set()
    sources = {path: path.read_text() for path in ours.glob("*.py")}
    for text in sources.values():
        own |= set(re.findall(r"(?:def |self\.)(_[a-z]\w*)\s*[(:=]", text))
    assert len(private - own) > 20  # the check sees pygls's names
    used = {
        (path.name, name)
        for path, text in sources.items()
        for name in private - own
        if re.search(rf"\.{name}\b|import [^\n]*\b{name}\b", text)
    }
    # the benchmark's client reads the pid of the daemon it started (pygls offers no public
    # handle on it) and does without it when the name is gone
    assert used <= {("client.py", "_server")}  # and none in the daemon's files
