"""`nous/list` and `nous/update` (design §11) end to end: a real `nous serve` subprocess, the real
model, one window with two projects (shop and bank) sharing one memory file."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import pytest_lsp
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVE, init_params, make_workspace, plain, server_env

BASE = Path(tempfile.mkdtemp(prefix="nous-browse-"))
SHOP = make_workspace(BASE, "shop", "# Rules\n\n- Prices are integer cents in every table.\n")
BANK = make_workspace(BASE, "bank", "# Rules\n\n- Ledger entries are append-only.\n")
IN_SHOP = str(SHOP / "main.py")
IN_BANK = str(BANK / "main.py")
SHOP_TEXTS = [
    ("decision", "Checkout calls the PaymentGateway adapter, never the card processor.", "manual"),
    ("convention", "Test names describe behaviour: test_paid_order_is_immutable.", "manual"),
    ("fact", "The staging database is refreshed from production every Sunday.", "manual"),
    ("procedure", "To release: bump pyproject, tag vX.Y.Z, push the tag.", "manual"),
    ("preference", "Answer with short diffs, not whole files.", "chat"),
    ("fact", "The search service times out after 800 ms under load.", "chat:session-7"),
    ("constraint", "Never log full card numbers, even in debug builds.", "manual"),
]


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=SERVE, server_env=server_env(BASE / "memory.db")),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    indexed = lsp_client.protocol.wait_for_notification_async("nous/indexed")
    await lsp_client.initialize_session(init_params(SHOP, BANK))
    await asyncio.wait_for(indexed, 120)
    yield lsp_client
    await lsp_client.shutdown_session()


async def call(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return plain(await client.protocol.send_request_async(method, params))


async def listing(client: LanguageClient, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await call(client, "nous/list", {"activeFile": IN_SHOP, **params})
    return result


async def remember(client: LanguageClient, kind: str, content: str, source: str) -> str:
    # nous/remember has no activeFile: it writes to the first folder's project (shop)
    made = await call(client, "nous/remember", {"kind": kind, "content": content, "source": source})
    return str(made["id"])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ids(client: LanguageClient) -> dict[str, str]:
    return {
        content: await remember(client, kind, content, source)
        for kind, content, source in SHOP_TEXTS
    }


async def invalid(client: LanguageClient, method: str, params: dict[str, Any]) -> str:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await client.protocol.send_request_async(method, params)
    return str(caught.value)


@pytest.mark.asyncio(loop_scope="module")
async def test_pages_cover_every_memory_once_with_total_and_next_offset(
    client: LanguageClient, ids: dict[str, str]
) -> None:
    everything = await listing(client, limit=500)
    total = everything["total"]
    assert total == len(everything["items"]) >= len(SHOP_TEXTS) + 1  # + the harvested rule
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = await listing(client, limit=3, offset=offset)
        assert page["total"] == total and page["offset"] == offset and len(page["items"]) <= 3
        seen += [m["id"] for m in page["items"]]
        offset = page["nextOffset"]
    assert len(seen) == len(set(seen)) == total
    assert set(ids.values()) <= set(seen)
    # recent first: the last remembered leads
    assert everything["items"][0]["id"] == ids[SHOP_TEXTS[-1][1]]


@pytest.mark.asyncio(loop_scope="module")
async def test_filters_by_kind_source_status_query_since_and_review(
    client: LanguageClient, ids: dict[str, str]
) -> None:
    facts = await listing(client, kinds=["fact"])
    assert {m["content"] for m in facts["items"]} == {t for k, t, _ in SHOP_TEXTS if k == "fact"}
    harvested = await listing(client, sourceTypes=["file"])
    assert len(harvested["items"]) == 1
    assert "Prices are integer cents in every table." in harvested["items"][0]["content"]
    assert harvested["items"][0]["source"].startswith("file:AGENTS.md")
    chat = await listing(client, sourceTypes=["chat"])
    assert {m["sourceType"] for m in chat["items"]} == {"chat"} and chat["total"] == 2
    manual = await listing(client, sourceTypes=["manual"])
    assert manual["total"] == 5 and {m["sourceType"] for m in manual["items"]} == {"manual"}
    both = await listing(client, sourceTypes=["chat", "file"])
    assert both["total"] == 3
    # every word must match, as a prefix, in the text or tags
    found = await listing(client, query="card numb")
    assert [m["id"] for m in found["items"]] == [ids[SHOP_TEXTS[6][1]]]
    assert (await listing(client, query="card gateway"))["total"] == 0
    by_id = await listing(client, query=ids[SHOP_TEXTS[0][1]][:10])
    assert [m["id"] for m in by_id["items"]] == [ids[SHOP_TEXTS[0][1]]]
    recorded = await listing(client, statuses=["recorded"])
    assert [m["kind"] for m in recorded["items"]] == ["decision"]
    assert (await listing(client, since="2999-01-01"))["total"] == 0
    assert (await listing(client, since="2000-01-01"))["total"] == (await listing(client))["total"]
    review = await listing(client, review=True)
    assert review["total"] == review["reviewPending"] == 2
    assert {m["content"] for m in review["items"]} == {t for _, t, s in SHOP_TEXTS if "chat" in s}


@pytest.mark.asyncio(loop_scope="module")
async def test_the_wire_is_camel_case(client: LanguageClient, ids: dict[str, str]) -> None:
    raw = await client.protocol.send_request_async("nous/list", {"limit": 1, "history": True})
    page = raw._asdict()
    assert {"items", "total", "nextOffset", "reviewPending", "projectScope"} <= set(page)
    item = page["items"][0]._asdict()
    assert {"sourceType", "lastInjectedAt", "createdAt", "supersededBy", "transitions"} <= set(item)


@pytest.mark.asyncio(loop_scope="module")
async def test_another_projects_memories_are_neither_listed_nor_changed(
    client: LanguageClient, ids: dict[str, str]
) -> None:
    bank = await call(client, "nous/list", {"activeFile": IN_BANK, "limit": 500})
    bank_texts = " ".join(m["content"] for m in bank["items"])
    assert "Ledger entries are append-only." in bank_texts
    assert not any(t in bank_texts for _, t, _ in SHOP_TEXTS)
    assert "Prices are integer cents" not in bank_texts
    shop = await listing(client, limit=500)
    assert "Ledger entries" not in " ".join(m["content"] for m in shop["items"])
    shop_id = ids[SHOP_TEXTS[2][1]]
    message = await invalid(
        client, "nous/update", {"id": shop_id, "activeFile": IN_BANK, "content": "hijacked"}
    )
    assert f"no memory with id {shop_id!r}" in message
    by_id = await call(client, "nous/list", {"activeFile": IN_BANK, "ids": [shop_id]})
    assert by_id["total"] == 0
    assert (await listing(client, ids=[shop_id]))["items"][0]["content"] == SHOP_TEXTS[2][1]
    # a scope of the other project is refused, naming the scope
    bank_scope = bank["projectScope"]
    message = await invalid(client, "nous/update", {"id": shop_id, "scope": bank_scope})
    assert "scope" in message


@pytest.mark.asyncio(loop_scope="module")
async def test_status_moves_only_through_legal_transitions(
    client: LanguageClient, ids: dict[str, str]
) -> None:
    fact = ids[SHOP_TEXTS[2][1]]
    message = await invalid(client, "nous/update", {"id": fact, "status": "retired"})
    assert "status" in message and "'retired' is not a state a fact can be in" in message
    listed = (await listing(client, ids=[fact]))["items"][0]
    assert listed["nextStatuses"] == ["confirmed", "core", "inactive", "superseded"]
    done = await call(client, "nous/update", {"id": fact, "status": "confirmed"})
    assert done["memory"]["status"] == "confirmed" and done["changed"] == ["status"]
    message = await invalid(client, "nous/update", {"id": fact, "status": "new"})
    assert "status" in message and "that is 'confirmed' cannot become 'new'" in message
    decision = ids[SHOP_TEXTS[0][1]]
    reviewed = await call(client, "nous/update", {"id": decision, "outcome": "success"})
    assert reviewed["memory"]["status"] == "reviewed" and reviewed["memory"]["outcome"] == "success"
    message = await invalid(client, "nous/update", {"id": decision, "status": "recorded"})
    assert "that is 'reviewed' cannot become 'recorded'" in message
    record = (await listing(client, ids=[decision], history=True))["items"][0]
    assert [t["toStatus"] for t in record["transitions"]] == ["reviewed", "recorded"]


@pytest.mark.asyncio(loop_scope="module")
async def test_pin_tags_importance_and_review(client: LanguageClient, ids: dict[str, str]) -> None:
    conv = ids[SHOP_TEXTS[1][1]]
    pinned = await call(
        client, "nous/update", {"id": conv, "pinned": True, "tags": ["tests"], "importance": 0.9}
    )
    memory = pinned["memory"]
    assert memory["pinned"] and memory["tags"] == ["tests"] and memory["importance"] == 0.9
    assert memory["status"] == "core", "pinning a convention makes it core (design §1)"
    assert [m["id"] for m in (await listing(client, pinned=True))["items"]] == [conv]
    assert (await listing(client, sort="score"))["items"][0]["id"] == conv
    chat_pref = ids[SHOP_TEXTS[4][1]]
    kept = await call(client, "nous/update", {"id": chat_pref, "reviewed": True})
    assert kept["memory"]["reviewed"] and "reviewed" in kept["memory"]["tags"]
    review = await listing(client, review=True)
    assert review["reviewPending"] == 1 and chat_pref not in [m["id"] for m in review["items"]]


@pytest.mark.asyncio(loop_scope="module")
async def test_edited_text_is_re_embedded_and_recalled(
    client: LanguageClient, ids: dict[str, str]
) -> None:
    fact = ids[SHOP_TEXTS[5][1]]
    new_text = "Invoices are archived to the cold-storage bucket every night at 02:00 UTC."
    edited = await call(client, "nous/update", {"id": fact, "content": new_text})
    assert edited["reembedded"] and "content" in edited["changed"]
    assert edited["memory"]["content"] == new_text and "Invoices" in edited["memory"]["summary"]
    # the vector moved: a question sharing no keyword with the old text finds the new one first
    recalled = await call(
        client, "nous/recall", {"query": "where do old invoices get archived?", "budget": 400}
    )
    first = recalled["sections"][0]["items"][0] if recalled["sections"] else {}
    assert first.get("id") == fact, recalled["text"]
    assert "search service" not in recalled["text"]
    again = await call(client, "nous/update", {"id": fact, "content": new_text})
    assert again["reembedded"] is False and again["changed"] == []
    secret = await call(
        client,
        "nous/update",
        {"id": fact, "content": new_text + " Bot token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5."},
    )
    assert secret["redactions"] and "ghp_" not in secret["memory"]["content"]


@pytest.mark.asyncio(loop_scope="module")
async def test_usage_shows_last_injected_and_sort_by_use(
    client: LanguageClient, ids: dict[str, str]
) -> None:
    constraint = ids[SHOP_TEXTS[6][1]]
    context = await call(
        client,
        "nous/context",
        {
            "input": "can I log the card number while debugging?",
            "sessionId": "s-use",
            "mode": "turn",
        },
    )
    injected = [i["id"] for s in context["sections"] for i in s["items"]]
    assert constraint in injected
    await call(
        client,
        "nous/feedback",
        {
            "sessionId": "s-use",
            "response": "No: never log full card numbers, even in debug builds.",
        },
    )
    record = (await listing(client, ids=[constraint], history=True))["items"][0]
    assert record["injected"] >= 1 and record["referenced"] >= 1
    assert record["lastInjectedAt"] and record["lastReferencedAt"]
    assert record["usage"][0]["sessionId"] == "s-use" and record["usage"][0]["referenced"]
    assert (await listing(client, sort="use"))["items"][0]["injected"] >= 1


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_params_are_invalid_params_naming_the_field(
    client: LanguageClient, ids: dict[str, str]
) -> None:
    any_id = ids[SHOP_TEXTS[3][1]]
    for method, params, field in [
        ("nous/list", {"limit": 0}, "limit"),
        ("nous/list", {"limit": "5"}, "limit"),
        ("nous/list", {"offset": -1}, "offset"),
        ("nous/list", {"sort": "loudest"}, "sort"),
        ("nous/list", {"sourceTypes": ["email"]}, "sourceTypes"),
        ("nous/list", {"since": "last tuesday"}, "since"),
        ("nous/list", {"kinds": "fact"}, "kinds"),
        ("nous/update", {"content": "x"}, "id"),
        ("nous/update", {"id": any_id, "importance": 2}, "importance"),
        ("nous/update", {"id": any_id, "pinned": "yes"}, "pinned"),
        ("nous/update", {"id": any_id, "outcome": "great"}, "outcome"),
        ("nous/update", {"id": any_id, "content": ""}, "content"),
        ("nous/update", {"id": any_id, "kind": "Not A Kind!"}, "kind"),
    ]:
        message = await invalid(client, method, params)
        assert field in message, (params, message)
    unknown = await invalid(client, "nous/update", {"id": "f" * 32, "pinned": True})
    assert "no memory with id" in unknown
    still = (await listing(client, ids=[any_id]))["items"][0]
    assert still["importance"] == 0.5 and not still["pinned"]


@pytest.mark.asyncio(loop_scope="module")
async def test_forgotten_leaves_the_list_and_recall_unless_asked_for(
    client: LanguageClient, ids: dict[str, str]
) -> None:
    proc = ids[SHOP_TEXTS[3][1]]
    await call(client, "nous/forget", {"id": proc})
    record = (await listing(client, ids=[proc]))["items"][0]
    assert record["status"] == "inactive" and record["excluded"]
    assert proc not in [m["id"] for m in (await listing(client, limit=500))["items"]]
    assert proc in [m["id"] for m in (await listing(client, statuses=["inactive"]))["items"]]
    recalled = await call(client, "nous/recall", {"query": "how do we release and tag?"})
    assert "push the tag" not in recalled["text"]
