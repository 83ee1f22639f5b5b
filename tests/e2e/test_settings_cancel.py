"""Settings from initializationOptions (a bad value: one message, the default stands) and
`$/cancelRequest` (exactly one answer, -32800, for a request still queued on the worker)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import make_workspace
from tests.e2e.raw import Raw


def test_bad_setting_shows_a_message_and_falls_back(tmp_path: Path) -> None:
    client = Raw(tmp_path / "m.db", make_workspace(tmp_path, "ws"))
    try:
        client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "processId": None, "rootUri": client.workspace.as_uri(), "capabilities": {},
            "initializationOptions": {"recallBudget": "lots", "sessionCap": 1200, "watch": False},
        }})  # fmt: skip
        messages = []
        while (message := client.read(30)) is not None:
            messages.append(message)
            if message.get("id") == "init":
                break
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        result = client.call("nous/recall", {"query": "anything at all", "sessionId": "s"})
        while (message := client.read(1.0)) is not None:
            messages.append(message)
        messages += client.notes
        shown = [m for m in messages if m.get("method") == "window/showMessage"]
        assert len(shown) == 1 and "recallBudget" in shown[0]["params"]["message"]
        assert result["budget"] == 500  # the default recall budget, not "lots"
        assert result["session"]["cap"] == 1200  # the valid setting next to it still applies
    finally:
        client.close()


def test_the_clients_option_overrides_the_environment(tmp_path: Path) -> None:
    """`nous.db` (initializationOptions) over `NOUS_DB`; `NOUS_DB` over the default."""
    from_env, from_client = tmp_path / "env.db", tmp_path / "client.db"
    for options, expected in (({}, from_env), ({"db": str(from_client)}, from_client)):
        client = Raw(from_env, make_workspace(tmp_path, "ws"))
        try:
            client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "processId": None, "rootUri": client.workspace.as_uri(), "capabilities": {},
                "initializationOptions": {"watch": False, "harvest": False, **options},
            }})  # fmt: skip
            while (message := client.read(30)) is not None and message.get("id") != "init":
                pass
            client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            assert client.call("nous/status", {})["database"] == str(expected)
        finally:
            client.close()


def test_cancel_a_queued_request(tmp_path: Path) -> None:
    client = Raw(tmp_path / "m.db", make_workspace(tmp_path, "ws"))
    try:
        client.initialize()
        client.call("nous/status", {})
        busy = 150  # distinct writes, each embedded: seconds of work queued on the one worker
        for n in range(busy):
            client.send({"jsonrpc": "2.0", "id": f"busy-{n}", "method": "nous/remember", "params": {
                "kind": "fact", "content": f"Fact number {n}: service {n * 7} listens on {n + 8000}",
            }})  # fmt: skip
        client.send({"jsonrpc": "2.0", "id": "victim", "method": "nous/status", "params": {}})
        client.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "victim"}})
        answers: dict[str, list[dict[str, object]]] = {}
        while (message := client.read(60)) is not None:
            if "method" not in message:
                answers.setdefault(str(message["id"]), []).append(message)
            if all(f"busy-{n}" in answers for n in range(busy)):
                break
        while (message := client.read(1.0)) is not None:
            if "method" not in message:
                answers.setdefault(str(message["id"]), []).append(message)
        assert len(answers["victim"]) == 1
        assert answers["victim"][0]["error"]["code"] == -32800  # type: ignore[index]
        assert all(len(answers[f"busy-{n}"]) == 1 for n in range(busy))
        assert client.call("nous/status", {})["memories"] == busy
    finally:
        client.close()
