"""`nous mcp` through the official SDK's stdio client: a real subprocess, the real model, a real
SQLite file. Handshake, tools/list, budgets and the session cap, redaction, project isolation,
bad arguments as tool errors (the server keeps serving), a root the client gives."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from nous.text import tokens

FOOTER = re.compile(r"-- nous: (\d+)/(\d+) tokens · session (\d+)/(\d+) · recalls (\d+) of (\d+)")


def project(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n')
    return folder


def remember_cli(db: Path, folder: Path, kind: str, text: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "nous", "--db", str(db), "remember", "--kind", kind, text],
        cwd=folder, check=True, capture_output=True, timeout=300,
    )  # fmt: skip


@asynccontextmanager
async def connect(
    db: Path,
    cwd: Path,
    *extra: str,
    roots: Callable[..., Any] | None = None,
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nous", "--db", str(db), "mcp", *extra],
        cwd=str(cwd),
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(cwd)},
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, list_roots_callback=roots) as session,
    ):
        await session.initialize()
        yield session


def text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def body_and_footer(answer: str) -> tuple[str, tuple[int, ...]]:
    match = FOOTER.search(answer)
    assert match, answer
    return answer[: match.start()].rstrip(), tuple(int(g) for g in match.groups())


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "memory.db"
    folder = project(tmp_path, "shop")
    remember_cli(db, folder, "decision", "Payments go through the PaymentGateway adapter; nothing calls the card processor directly.")  # fmt: skip
    remember_cli(db, folder, "procedure", "To release: bump the version in pyproject.toml, tag vX.Y.Z, push the tag.")  # fmt: skip
    remember_cli(db, folder, "convention", "Money is stored as integer cents, never floats.")
    return db, folder


@pytest.mark.timeout(900)
async def test_mcp_tools_share_the_engine_budgets_and_cap(shop: tuple[Path, Path]) -> None:
    db, folder = shop
    async with connect(db, folder) as session:
        listed = await session.list_tools()
        names = {tool.name for tool in listed.tools}
        assert names == {"nous_context", "nous_recall", "nous_remember", "nous_forget"}
        recall_schema = next(t for t in listed.tools if t.name == "nous_recall").input_schema
        assert recall_schema["required"] == ["query"]

        startup = await session.call_tool("nous_context", {"task": "change the checkout"})
        assert not startup.is_error, text(startup)
        body, (used, budget, session_used, cap, _, _) = body_and_footer(text(startup))
        assert budget == 2000 and 0 < used == session_used
        # the same engine as the command line: the same startup text for the same task
        cli = subprocess.run(
            [sys.executable, "-m", "nous", "--db", str(db), "--json", "context", "--mode",
             "startup", "change the checkout"],
            cwd=folder, capture_output=True, text=True, check=True, timeout=300,
        )  # fmt: skip
        assert body == json.loads(cli.stdout)["text"]

        recalled = await session.call_tool(
            "nous_recall", {"query": "how do we take card payments?", "budget": 40}
        )
        assert not recalled.is_error, text(recalled)
        body, (used, budget, session_used, cap, recalls, most) = body_and_footer(text(recalled))
        assert budget == 40 and used <= 40
        assert tokens.counter().count(body) <= 40, body
        assert "PaymentGateway" in body
        # an agent's connection has the agent's limits, not a chat's 3,000 tokens and 2 recalls
        assert (cap, recalls, most) == (24_000, 1, 40) and session_used > 0


@pytest.mark.timeout(900)
async def test_remember_redacts_forget_retires_and_bad_arguments_are_tool_errors(
    shop: tuple[Path, Path],
) -> None:
    db, folder = shop
    secret = "ghp_" + "Ab3dE6gH9jK2mN5pQ8rS1tU4vW7xY0zA1b2C"
    async with connect(db, folder) as session:
        made = await session.call_tool(
            "nous_remember",
            {
                "kind": "fact",
                "content": f"The deploy bot authenticates with token {secret} from vault.",
            },
        )
        assert not made.is_error, text(made)
        assert text(made).startswith("created ") and "redacted:" in text(made)
        memory_id = text(made).split()[1]
        found = await session.call_tool("nous_recall", {"query": "how does the deploy bot authenticate", "budget": 400})  # fmt: skip
        assert memory_id[:8] in text(found) or "deploy bot" in text(found)
        assert secret not in text(found)

        for name, arguments, expected in [
            ("nous_recall", {"query": ""}, "query"),
            ("nous_recall", {"query": "x", "budget": 0}, "budget"),
            ("nous_recall", {"query": "x", "budget": "lots"}, "budget"),
            ("nous_recall", {}, "query"),
            ("nous_remember", {"kind": "fact"}, "content"),
            (
                "nous_remember",
                {"kind": "fact", "content": "x", "scope": "project:elsewhere"},
                "scope",
            ),
            ("nous_forget", {"id": "no-such-id"}, "no memory with id"),
            ("nous_nothing", {}, "nous_nothing"),
            # the SDK's own argument checks, in the agent's words too (issue 26)
            ("nous_recall", {"query": 5}, "invalid argument query: must be text"),
            (
                "nous_context",
                {"conversation_tokens": -5},
                "invalid argument conversation_tokens: must be at least 0",
            ),
            ("nous_context", {"conversation_tokens": "many"}, "conversation_tokens: must be a"),
            ("nous_recall", {"query": "x", "kinds": "decision"}, "kinds: must be a list"),
            ("nous_recall", {"query": "x", "kinds": ["decison"]}, "invalid kind 'decison'"),
            (
                "nous_remember",
                {"kind": "banana", "content": "Bananas are yellow."},
                "decision, fact",
            ),
            (
                "nous_remember",
                {"kind": "fact", "content": "x", "tags": "a"},
                "tags: must be a list",
            ),
        ]:
            refused = await session.call_tool(name, arguments)
            assert refused.is_error, (name, arguments, text(refused))
            assert expected in text(refused), text(refused)
            assert "pydantic" not in text(refused) and "http" not in text(refused), text(refused)
            assert "validation error" not in text(refused), text(refused)

        forgotten = await session.call_tool("nous_forget", {"id": memory_id[:8]})  # a prefix
        assert not forgotten.is_error, text(forgotten)
        assert memory_id in text(forgotten)
        again = await session.call_tool("nous_forget", {"id": memory_id})
        assert again.is_error and "already forgotten" in text(again), text(again)
        # the server survived every refusal and still answers
        after = await session.call_tool("nous_recall", {"query": "release procedure"})
        assert not after.is_error and "tag vX.Y.Z" in text(after)


@pytest.mark.timeout(900)
async def test_the_project_comes_from_the_clients_root_and_stays_isolated(
    shop: tuple[Path, Path], tmp_path: Path
) -> None:
    db, folder = shop
    other = project(tmp_path, "blog")

    async def shop_root(_context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=folder.as_uri(), name="shop")])  # type: ignore[arg-type]

    # started in the blog folder, but the client's root is the shop: the shop's memories answer
    async with connect(db, other, roots=shop_root) as session:
        answer = await session.call_tool("nous_recall", {"query": "card payments", "budget": 300})
        assert "PaymentGateway" in text(answer), text(answer)

    # the blog (the working directory, no roots) never sees the shop's memories
    async with connect(db, other) as session:
        answer = await session.call_tool("nous_recall", {"query": "card payments", "budget": 300})
        assert not answer.is_error
        assert "PaymentGateway" not in text(answer)
        made = await session.call_tool("nous_remember", {"kind": "convention", "content": "Posts are written in Markdown with front matter."})  # fmt: skip
        assert "in `project:" in text(made)

    # --workspace wins over the working directory
    async with connect(db, other, "--workspace", str(folder)) as session:
        answer = await session.call_tool("nous_recall", {"query": "card payments", "budget": 300})
        assert "PaymentGateway" in text(answer)
        posts = await session.call_tool("nous_recall", {"query": "how are posts written", "budget": 300})  # fmt: skip
        assert "front matter" not in text(posts)


def test_mcp_refuses_a_missing_workspace_before_speaking(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nous", "mcp", "--workspace", str(tmp_path / "nowhere")],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    assert "not a folder" in done.stderr


@pytest.mark.timeout(900)
async def test_what_an_agents_task_states_opens_the_next_session_and_the_task_is_not_kept(
    shop: tuple[Path, Path],
) -> None:
    db, folder = shop
    task = ("Move the invoice export to the nightly job; we decided to drop the CSV format. "
            "Next step: add the nightly export tests.")  # fmt: skip
    async with connect(db, folder, "--session", "agent-a") as session:
        assert not (await session.call_tool("nous_context", {"task": task})).is_error
        # a bare question asks and tells nothing: not kept
        await session.call_tool("nous_recall", {"query": "how do we take card payments?"})
    async with connect(db, folder, "--session", "agent-b") as session:
        startup = text(await session.call_tool("nous_context", {"task": ""}))
    assert "drop the CSV format" in startup, startup
    assert "nightly export tests" in startup, startup
    rows = subprocess.run(
        [sys.executable, "-m", "nous", "--db", str(db), "--json", "list", "--limit", "100"],
        cwd=folder, capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    kept = [(m["kind"], m["source"]) for m in json.loads(rows.stdout)["items"]]
    assert ("note", "chat:agent-a#0") in kept
    # the task is a tool's input: its notes are kept, the task is not (nor the recall's query)
    assert not [
        k for k in kept if k[1].startswith("chat:agent-a#") and k != ("note", "chat:agent-a#0")
    ]


@pytest.mark.timeout(900)
async def test_an_agents_conversation_tokens_give_its_overhead_and_none_leave_it_unknown(
    shop: tuple[Path, Path],
) -> None:
    db, folder = shop

    def overhead(session_id: str) -> float | None:
        shown = subprocess.run(
            [sys.executable, "-m", "nous", "--db", str(db), "stats", "--json", "--session",
             session_id],
            cwd=folder, capture_output=True, text=True, check=True, timeout=300,
        )  # fmt: skip
        metrics = {m["name"]: m for m in json.loads(shown.stdout)["metrics"]}
        value: float | None = metrics["overhead"]["value"]
        return value

    async with connect(db, folder, "--session", "agent-told") as session:
        told = text(
            await session.call_tool(
                "nous_context", {"task": "change the checkout", "conversation_tokens": 5000}
            )
        )
    used = body_and_footer(told)[1][0]
    assert used > 0
    async with connect(db, folder, "--session", "agent-silent") as session:
        assert not (
            await session.call_tool("nous_context", {"task": "change the checkout"})
        ).is_error
    assert overhead("agent-told") == pytest.approx(used / 5000)
    assert overhead("agent-silent") is None  # unknown, not 0


QUERIES = [
    "postgres orders storage {i}",
    "how do we take card payments? ({i})",
    "release procedure step {i}",
    "use recall: how is money stored {i}",
]


async def _twenty_recalls(session: ClientSession) -> list[types.CallToolResult]:
    return [
        await session.call_tool("nous_recall", {"query": QUERIES[i % 4].format(i=i)})
        for i in range(20)
    ]


@pytest.mark.timeout(900)
async def test_twenty_recalls_are_answered_or_refused_naming_the_limit_and_none_is_kept(
    shop: tuple[Path, Path],
) -> None:
    db, folder = shop
    # the agent's defaults: twenty recalls on one connection are all answered, counted once each
    async with connect(db, folder) as session:
        answers = await _twenty_recalls(session)
    for n, answer in enumerate(answers, start=1):
        assert not answer.is_error, text(answer)
        _, (_, _, session_used, cap, recalls, most) = body_and_footer(text(answer))
        assert (recalls, most) == (n, 40) and session_used <= cap
    assert any("PaymentGateway" in text(a) for a in answers)

    # a connection with a small recall limit: five answered, then a tool error naming the limit,
    # with the same count every time (refused recalls are not counted)
    async with connect(db, folder, "--max-recalls", "5") as session:
        answers = await _twenty_recalls(session)
    assert [a.is_error for a in answers] == [False] * 5 + [True] * 15
    assert body_and_footer(text(answers[4]))[1][4:] == (5, 5)
    for refused in answers[5:]:
        assert "recall limit reached: 5 of 5 recalls" in text(refused), text(refused)
        assert "(limit recalls: 5 of 5)" in text(refused)

    # a small session cap: answered (cut to fit, and said so) until nothing fits, then a tool
    # error naming the cap, every time after
    async with connect(db, folder, "--session-cap", "100") as session:
        answers = [
            await session.call_tool("nous_recall", {"query": "how do we take card payments?", "budget": 60})
            for _ in range(6)
        ]  # fmt: skip
    errors = [a.is_error for a in answers]
    assert errors[0] is False and True in errors, [text(a) for a in answers]
    assert errors[errors.index(True) :] == [True] * (6 - errors.index(True))
    for answer in answers:
        if answer.is_error:
            assert "(limit session-cap:" in text(answer) and "of 100)" in text(answer), text(answer)
        else:
            _, (used, _, session_used, cap, _, _) = body_and_footer(text(answer))
            assert used > 0 and session_used <= cap == 100

    # the next connection: nothing any agent asked came back as a memory
    asked = [q.format(i=i) for i in range(20) for q in QUERIES]
    async with connect(db, folder) as session:
        later = [
            text(await session.call_tool("nous_recall", {"query": q, "budget": 400}))
            for q in ("where are orders stored", "postgres orders storage 3", "how is money stored")
        ]
    for answer in later:
        assert "postgres orders storage" not in answer and "use recall" not in answer, answer
    listed = subprocess.run(
        [sys.executable, "-m", "nous", "--db", str(db), "--json", "list", "--limit", "100"],
        cwd=folder, capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    contents = [m["content"] for m in json.loads(listed.stdout)["items"]]
    assert len(contents) == 3, contents  # the three memories the test started with
    assert not [c for c in contents if any(q in c for q in asked)]
