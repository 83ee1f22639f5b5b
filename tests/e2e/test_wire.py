"""The raw wire format of every custom method: exact camelCase keys as bytes on stdout, read
without any client library, so a snake_case leak or a renamed field fails here."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import make_workspace
from tests.e2e.raw import Raw

BASE = Path(tempfile.mkdtemp(prefix="nous-wire-"))
WS = make_workspace(BASE, "wire")
CAMEL = re.compile(r"^[a-z0-9][A-Za-z0-9]*$")

CONTEXT_KEYS = {
    "text", "tokens", "budget", "frame", "mode", "intent", "sections", "dropped", "session",
    "fingerprint", "refresh", "notes", "limit",
}  # fmt: skip
RECORD_KEYS = {
    "id", "kind", "scope", "content", "summary", "micro", "createdAt", "updatedAt", "lastSeenAt",
    "status", "statusChangedAt", "confidence", "importance", "outcome", "confirmations",
    "activations", "frequency", "source", "contentHash", "supersededBy", "tags", "pinned",
    "shared", "origin",
}  # fmt: skip


def all_keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from all_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from all_keys(inner)


class Wire:
    def __init__(self, raw: Raw) -> None:
        self.raw, self.n, self.notes = raw, 0, []  # type: list[dict[str, Any]]

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        self.raw.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while (message := self.raw.read(60)) is not None:
            if "method" in message:
                self.notes.append(message)
            elif message.get("id") == self.n:
                assert "error" not in message, message
                result: dict[str, Any] = message["result"]
                snake = [k for k in all_keys(result) if not CAMEL.match(k)]
                assert not snake, f"{method}: not camelCase on the wire: {snake}"
                return result
        pytest.fail(f"no answer to {method}")

    def note(self, method: str) -> dict[str, Any]:
        """The latest `method` notification, waiting for it if it has not arrived yet."""
        while not any(n["method"] == method for n in self.notes):
            message = self.raw.read(10)
            assert message is not None, f"no {method} notification"
            if "method" in message:
                self.notes.append(message)
        return next(n for n in reversed(self.notes) if n["method"] == method)


@pytest.fixture(scope="module")
def wire() -> Iterator[Wire]:
    raw = Raw(BASE / "memory.db", WS)
    raw.initialize()
    yield Wire(raw)
    raw.close()


@pytest.fixture(scope="module")
def ids(wire: Wire) -> dict[str, str]:
    first = wire.call("nous/remember", {"kind": "decision", "content": "We store sessions in Redis with a 24h TTL", "tags": ["redis"]})  # fmt: skip
    second = wire.call("nous/remember", {"kind": "decision", "content": "Sessions moved to Postgres; Redis is only a cache now"})  # fmt: skip
    return {"first": first["id"], "second": second["id"]}


def test_remember(wire: Wire) -> None:
    result = wire.call("nous/remember", {"kind": "fact", "content": "The CI token is ghp_" + "a1B2" * 9, "confidence": 0.9})  # fmt: skip
    assert set(result) == {"id", "status", "memoryStatus", "scope", "redactions"}
    assert result["status"] == "created" and result["redactions"] == ["github-token"]


def test_recall_and_the_budget_notification(wire: Wire, ids: dict[str, str]) -> None:
    result = wire.call("nous/recall", {"query": "where do sessions live", "sessionId": "w1", "kinds": ["decision"]})  # fmt: skip
    assert set(result) == CONTEXT_KEYS
    assert set(result["session"]) == {"id", "used", "cap", "remaining", "recalls", "cut"}
    section = next(s for s in result["sections"] if s["items"])
    assert set(section) == {"layer", "title", "used", "cap", "items"}
    assert set(section["items"][0]) == {"id", "kind", "scope", "layer", "detail", "tokens", "score", "terms", "text", "source", "merged", "sources", "origin"}  # fmt: skip
    assert {"semantic", "framePriority", "scopeFactor", "usageBoost"} <= set(section["items"][0]["terms"])  # fmt: skip
    assert "temporalRecency" in result["intent"]
    budget = wire.note("nous/budget")
    assert set(budget["params"]) == {"sessionId", "used", "cap", "layers", "project", "team"}
    assert budget["params"]["team"] == "off"  # no team store here
    assert budget["params"]["sessionId"] == "w1" and budget["params"]["used"] == result["session"]["used"]  # fmt: skip
    assert result["limit"] is None


def test_a_recall_past_the_chat_limit_carries_the_limit_for_the_client(wire: Wire) -> None:
    answers = [wire.call("nous/recall", {"query": "where do sessions live", "sessionId": "w-limit"})
               for _ in range(3)]  # fmt: skip
    assert [a["limit"] for a in answers[:2]] == [None, None]
    third = answers[2]
    assert third["tokens"] == 0 and third["session"]["recalls"] == 2
    message = "recall limit reached: 2 of 2 recalls used in this session; start a new session to recall more"  # fmt: skip
    assert third["limit"] == {"name": "recalls", "used": 2, "max": 2, "message": message}
    assert third["notes"] == [message]
    # an agent's session (agent-mode tools): the agent's limits, not a chat's
    agent = [wire.call("nous/recall", {"query": "where do sessions live", "sessionId": "w-agent",
                                       "agent": True}) for _ in range(3)]  # fmt: skip
    assert [a["limit"] for a in agent] == [None] * 3
    assert agent[2]["session"]["recalls"] == 3 and agent[2]["session"]["cap"] == 24_000


def test_context(wire: Wire, ids: dict[str, str]) -> None:
    result = wire.call("nous/context", {
        "input": "how do we store sessions?", "mode": "turn", "sessionId": "w1",
        "conversation": [{"role": "user", "content": "hello"}], "budget": 800,
        "modelMaxTokens": 128000, "activeFile": "main.py", "injectedInstructions": [],
    })  # fmt: skip
    assert set(result) == CONTEXT_KEYS
    assert result["tokens"] <= result["budget"] <= 800
    assert set(result["fingerprint"]) == {
        "frame", "mode", "complexity", "fileCount", "fileHash", "profile", "totalTokens",
        "budget", "kinds", "compressionRatio", "tierCounts", "selected", "available",
    }  # fmt: skip


def test_expand(wire: Wire, ids: dict[str, str]) -> None:
    result = wire.call("nous/expand", {"id": ids["first"], "sessionId": "w1"})
    assert set(result) == {"memory", "session"}
    assert set(result["memory"]) == RECORD_KEYS


def test_feedback(wire: Wire, ids: dict[str, str]) -> None:
    result = wire.call("nous/feedback", {"sessionId": "w1", "response": "Sessions live in Postgres; Redis is a cache."})  # fmt: skip
    assert set(result) == {"sessionId", "referenced", "notReferenced", "echoes", "overlaps"}


def test_outcome_supersede_forget(wire: Wire, ids: dict[str, str]) -> None:
    outcome = wire.call("nous/outcome", {"id": ids["second"], "outcome": "success"})
    assert set(outcome) == RECORD_KEYS and outcome["outcome"] == "success"
    superseded = wire.call("nous/supersede", {"id": ids["first"], "newId": ids["second"]})
    assert set(superseded) == RECORD_KEYS and superseded["supersededBy"] == ids["second"]
    forgotten = wire.call("nous/forget", {"id": ids["first"], "purge": False})
    assert set(forgotten) == RECORD_KEYS and forgotten["status"] == "inactive"


def test_status(wire: Wire, ids: dict[str, str]) -> None:
    result = wire.call("nous/status", {})
    assert {
        "project", "projectKey", "projectSource", "languages", "task", "counts", "memories",
        "indexState", "modelLoaded", "model", "dimension", "encoding", "database", "databaseBytes", "session",
        "capture", "pendingVectors", "team",
    } == set(result)  # fmt: skip
    assert result["team"] == {"state": "off", "queued": 0}
    assert result["project"] == "wire" and result["modelLoaded"] is True
    assert isinstance(result["pendingVectors"], int) and result["pendingVectors"] >= 0
    assert result["projectKey"].startswith("wire-")
    assert result["session"]["id"] == "w1"
    indexed = wire.note("nous/indexed")
    assert {"folders", "errors", "seconds"} <= set(indexed["params"])
    assert result["indexState"] == "ready"
