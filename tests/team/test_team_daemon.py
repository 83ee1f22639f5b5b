"""The team store through the daemon (`nous serve` over real stdio): `teamStore` arrives in
`initializationOptions`; a memory one user's daemon shares reaches another user's answers with
`origin: team`, `nous/status` and `nous/budget` say the team store's state."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.raw import Raw

from .conftest import clone


def test_daemons_of_two_users_share_team_memories(tmp_path: Path, team_url: str) -> None:
    ana = Raw(tmp_path / "ana.db", clone(tmp_path / "ana"))
    ben = Raw(tmp_path / "ben.db", clone(tmp_path / "ben"))
    try:
        for client in (ana, ben):
            client.initialize(options={"teamStore": team_url, "teamTimeoutMs": 2000})
        wrote = ana.call("nous/remember", {
            "kind": "decision", "scope": "team",
            "content": "Every service exposes its health check at /healthz on port 9090",
        })  # fmt: skip
        assert wrote["status"] == "created"
        for _ in range(100):  # pushed in the background (its vector first)
            if ana.call("nous/status", {})["team"]["queued"] == 0:
                break
            ana.read(0.2)
        status = ana.call("nous/status", {})["team"]
        assert status["state"] == "up" and status["queued"] == 0 and status["pushed"] >= 1

        answer = ben.call("nous/recall", {"query": "where is the service health check?"})
        items = [i for s in answer["sections"] for i in s["items"]]
        assert [i["origin"] for i in items if i["id"] == wrote["id"]] == ["team"]
        assert "/healthz" in answer["text"]
        budget = ben.notification("nous/budget")
        assert budget is not None and budget["params"]["team"] == "up"
        listed = ben.call("nous/list", {"origin": "team"})
        assert [m["id"] for m in listed["items"]] == [wrote["id"]]
        record = ben.call("nous/expand", {"id": wrote["id"]})
        assert record["memory"]["origin"] == "team"
    finally:
        ana.close()
        ben.close()


def test_a_password_in_the_settings_is_reported_and_never_used(tmp_path: Path) -> None:
    client = Raw(tmp_path / "m.db", clone(tmp_path / "ws"))
    try:
        client.initialize(options={"teamStore": "postgresql://nous:hunter2secret@db.internal/n"})
        message = client.notification("window/showMessage", 30)
        assert message is not None and "NOUS_TEAM_STORE_PASSWORD" in message["params"]["message"]
        assert "hunter2secret" not in message["params"]["message"]
        assert client.call("nous/status", {})["team"]["state"] == "off"
    finally:
        client.close()
