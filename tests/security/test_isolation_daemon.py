"""Two real `nous serve` daemons on one memory file, for two git repositories both called `api`
(one with a remote, one without), each harvesting its own AGENTS.md: neither sees, changes nor
retires the other's memories, by recall, by id or by session id."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.raw import Raw

RULE_A = "Every endpoint of the billing gateway returns money as integer cents."
RULE_B = "The scratch service logs requests to the journald socket, never to files."
DECISION_A = "The api deploys with the blue-green script in ops/deploy.sh."


def repo(path: Path, rule: str, remote: str | None) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    (path / "AGENTS.md").write_text(f"# Rules\n\n- {rule}\n")
    (path / "main.py").write_text("print('hi')\n")
    return path


def text_of(result: dict[str, Any]) -> str:
    return str(result["text"]) + " ".join(i["text"] for s in result["sections"] for i in s["items"])


@pytest.fixture(scope="module")
def daemons(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Raw, Raw]]:
    base = tmp_path_factory.mktemp("two-apis")
    db = base / "shared.db"
    a_dir = repo(base / "work" / "api", RULE_A, "git@github.com:acme/api.git")
    b_dir = repo(base / "scratch" / "api", RULE_B, None)
    a, b = Raw(db, a_dir), Raw(db, b_dir)
    try:
        for raw in (a, b):  # b harvests after a: the same AGENTS.md path, another project
            raw.initialize(options={"harvest": True})
            indexed = raw.notification("nous/indexed", 120)
            assert indexed is not None and indexed["params"]["errors"] == []
        yield a, b
    finally:
        a.close()
        b.close()


def test_the_two_apis_have_one_name_and_two_keys(daemons: tuple[Raw, Raw]) -> None:
    a, b = (raw.call("nous/status", {}) for raw in daemons)
    assert a["project"] == b["project"] == "api"
    assert a["projectKey"] != b["projectKey"]


def test_each_sees_its_own_rules_only_and_b_harvest_retired_nothing_of_a(
    daemons: tuple[Raw, Raw],
) -> None:
    a, b = daemons
    a.call("nous/remember", {"kind": "decision", "content": DECISION_A})
    # Each side asks in general and then for each memory by its own words: only relevant
    # memories are injected, so asking for the other project's rule verbatim is the hard case.
    queries = ["api rules: money, logging, deploys", RULE_A, RULE_B, DECISION_A]

    def seen(client: Raw) -> str:
        text = ""
        for query in queries:
            text += text_of(client.call("nous/recall", {"query": query, "budget": 2000}))
            text += text_of(
                client.call("nous/context", {"input": query, "mode": "turn", "budget": 4000})
            )
        return text

    seen_a, seen_b = seen(a), seen(b)
    assert RULE_A in seen_a and DECISION_A in seen_a and RULE_B not in seen_a
    assert RULE_B in seen_b and RULE_A not in seen_b and DECISION_A not in seen_b
    counts_a = a.call("nous/status", {})["counts"]
    assert "inactive" not in str(counts_a), counts_a  # b's harvest retired none of a's rules


def test_ids_of_the_other_project_are_unknown_ids(daemons: tuple[Raw, Raw]) -> None:
    a, b = daemons
    mine = a.call("nous/remember", {"kind": "decision", "content": "Adopt ruff for the api."})
    fact = a.call("nous/remember", {"kind": "fact", "content": "The api listens on 8443."})
    b_fact = b.call("nous/remember", {"kind": "fact", "content": "Scratch listens on 9000."})
    unknown = b.error("nous/expand", {"id": "f" * 32})
    assert unknown["code"] == -32602 and "id" in unknown["message"]
    for method, params in [
        ("nous/expand", {"id": mine["id"]}),
        ("nous/expand", {"id": mine["id"], "sessionId": "b-1"}),
        ("nous/forget", {"id": fact["id"]}),
        ("nous/forget", {"id": fact["id"], "purge": True}),
        ("nous/supersede", {"id": mine["id"], "newId": b_fact["id"]}),
        ("nous/supersede", {"id": b_fact["id"], "newId": fact["id"]}),
        ("nous/outcome", {"id": mine["id"], "outcome": "failure"}),
    ]:
        error = b.error(method, params)
        assert error["code"] == -32602, (method, error)
        foreign = params["newId"] if "newId" in params and params["id"] == b_fact["id"] else params["id"]  # fmt: skip
        same_as_unknown = unknown["message"].replace("nous/expand", method).replace("f" * 32, foreign)  # fmt: skip
        assert error["message"] == same_as_unknown, (method, error)
    assert a.call("nous/expand", {"id": mine["id"]})["memory"]["status"] == "recorded"
    assert a.call("nous/expand", {"id": fact["id"]})["memory"]["status"] == "new"
    assert b.call("nous/expand", {"id": b_fact["id"]})["memory"]["supersededBy"] is None


def test_the_other_projects_session_id_gives_nothing_back(daemons: tuple[Raw, Raw]) -> None:
    a, b = daemons
    injected = a.call("nous/context", {"input": "how is money returned?", "sessionId": "chat-x"})
    ids = {i["id"] for s in injected["sections"] for i in s["items"]}
    assert ids
    stolen = b.call("nous/feedback", {"sessionId": "chat-x", "response": RULE_A})
    assert stolen["referenced"] == [] and stolen["notReferenced"] == []
    own = a.call("nous/feedback", {"sessionId": "chat-x", "response": RULE_A})
    assert set(own["referenced"]) | set(own["notReferenced"]) == ids


def test_a_write_naming_the_other_projects_scope_is_refused(daemons: tuple[Raw, Raw]) -> None:
    a, b = daemons
    a_scope = "project:" + a.call("nous/status", {})["projectKey"]
    error = b.error("nous/remember", {"kind": "fact", "content": "planted", "scope": a_scope})
    assert error["code"] == -32602 and "scope" in error["message"]
    error = b.error("nous/recall", {"query": "money", "scope": a_scope})
    assert error["code"] == -32602 and "scope" in error["message"]
    assert "planted" not in text_of(a.call("nous/recall", {"query": "planted", "budget": 2000}))
