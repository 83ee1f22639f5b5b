"""`nous mcp`: the same engine over the Model Context Protocol (stdio), for agents that speak MCP
rather than LSP (VS Code agent mode, Claude Code, Copilot CLI, Cursor).

Built on the official `mcp` SDK's `MCPServer` (FastMCP before mcp 2). Four tools — `nous_context`
(startup), `nous_recall`, `nous_remember`, `nous_forget` — call the `Engine` the CLI and the daemon
use, so budgets, the session cap, redaction and project isolation are the same: one MCP connection
is one agent session with an agent's limits (`settings.for_agent`), and of what the agent hands
`nous_context` only the session notes its task states are kept (design §10; a recall's query is
never kept: a tool's query is no memory). The project
is `--workspace`, else the first `file://` root the client gives, else the working directory.
All SQLite and ONNX work runs on one worker thread (a sqlite3 connection belongs to the thread
that opened it). Nothing but protocol reaches stdout: the SDK's stdio transport moves fd 1 to
stderr while it serves, and logs go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ValidationError

from nous import __version__
from nous import protocol as p
from nous.context import chat
from nous.context.render import code
from nous.engine import Draft, Engine
from nous.errors import NousError
from nous.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

INSTRUCTIONS = (
    "Nous is this project's local memory: decisions, conventions, constraints, procedures and "
    "facts. Call nous_context once at the start of a task, nous_recall for a specific question "
    "(recalls per session are limited), nous_remember when the user states a durable decision or "
    "convention, nous_forget to retire a memory by id. Every answer fits a token budget."
)


class Memory:
    """The engines of one MCP connection, one per workspace folder, on one worker thread."""

    def __init__(self, settings: Settings, workspace: Path | None, session_id: str) -> None:
        self.settings = settings
        self.workspace = workspace
        """`--workspace`; when None, the client's first root (asked once), else the cwd."""
        self.session_id = session_id
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nous-store")
        self.engines: dict[Path, Engine] = {}
        self._asked_roots = False

    async def run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn)

    async def folder(self, ctx: Context[Any, Any] | None) -> Path:
        if self.workspace is None and not self._asked_roots:
            self._asked_roots = True
            self.workspace = await _first_root(ctx)
        return self.workspace or Path.cwd()

    def engine(self, folder: Path) -> Engine:
        if folder not in self.engines:
            self.engines[folder] = Engine(self.settings, folder)
        return self.engines[folder]


async def _first_root(ctx: Context[Any, Any] | None) -> Path | None:
    """The first `file://` root of a client that declares the roots capability, if any."""
    if ctx is None:
        return None
    try:
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return None
        result = await ctx.session.list_roots()
    except Exception as exc:  # a client that cannot answer keeps the working directory
        log.info("roots/list failed: %s", exc)
        return None
    for root in result.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file" and Path(unquote(uri.path)).is_dir():
            return Path(unquote(uri.path))
    return None


_PLAIN = {
    "missing": "is required",
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "string_type": "must be text",
    "list_type": "must be a list of strings",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
}


def plain(exc: ValidationError) -> str:
    """The first problem of `exc` in the agent's words: the argument and what it must be
    (no pydantic wording, no documentation URL)."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "arguments"
    return f"invalid argument {field}: {_PLAIN.get(first['type'], first['msg'])}"


def _params(model: type[M], values: dict[str, Any]) -> M:
    try:
        return model.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        raise ToolError(plain(exc)) from exc


class Server(MCPServer[Any]):
    """The SDK's server, with its argument-validation errors in the agent's words."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and str(exc).startswith(
                "Error executing"
            ):
                raise ToolError(f"{name}: {plain(exc.__cause__)}") from exc.__cause__
            raise


def _footer(result: p.ContextResult, max_recalls: int) -> str:
    session = result.session
    lines = [
        f"-- nous: {result.tokens}/{result.budget} tokens · session {session.used}/{session.cap}"
        f" · recalls {session.recalls} of {max_recalls}"
    ]
    lines += [f"-- note: {note}" for note in result.notes]
    return "\n".join(lines)


def _answer(result: p.ContextResult, max_recalls: int) -> str:
    """The tool's text; a request a limit refused is a tool error naming the limit (an agent
    must not read "nothing to inject" as "memory has nothing")."""
    limit = result.limit
    if limit is not None and result.tokens == 0:  # refused, or cut until nothing fitted
        raise ToolError(f"{limit.message} (limit {limit.name}: {limit.used} of {limit.max})")
    body = result.text or "(no memory matched)"
    return f"{body}\n\n{_footer(result, max_recalls)}"


def _keep_turn(engine: Engine, session_id: str, task: str) -> None:
    """What `nous_context`'s task states (a decision, a next step) is kept as the session's
    notes, after the answer; the task itself is a tool's input, no memory (capture off keeps
    nothing)."""
    if task.strip() and "#" not in session_id:
        from nous.context import capture  # the chat-turn writer, imported on first use

        params = p.TurnParams(session_id=session_id, role="user", text=task, tool="nous_context")
        capture.turn(engine, params)


def build(memory: Memory) -> MCPServer[Any]:
    """The MCP server with its four tools over `memory`."""
    server = Server(
        name="nous", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    async def call(ctx: Context[Any, Any], work: Callable[[Engine], str]) -> str:
        folder = await memory.folder(ctx)
        try:
            return await memory.run(lambda: work(memory.engine(folder)))
        except NousError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(name="nous_context")
    async def nous_context(ctx: Context[Any, Any], task: str = "") -> str:
        """This project's remembered context for the start of a task: decisions, conventions,
        constraints, procedures, recent changes, as a Markdown list inside the startup budget.
        Call it once per task; give `task` as one sentence on what the user wants."""
        params = _params(
            p.ContextParams, {"input": task, "mode": "startup", "sessionId": memory.session_id}
        )

        def work(engine: Engine) -> str:
            answer = chat.context(engine, params)
            _keep_turn(engine, memory.session_id, task)  # what the task states, not the task
            return _answer(answer, memory.settings.max_recalls_per_session)

        return await call(ctx, work)

    @server.tool(name="nous_recall")
    async def nous_recall(
        ctx: Context[Any, Any],
        query: str,
        kinds: list[str] | None = None,
        budget: int | None = None,
    ) -> str:
        """Search this project's memory for a focused question: ranked decisions, conventions,
        procedures, facts and past fixes with their ids, inside `budget` tokens (default: the
        recall budget). Recalls per session are limited: ask precise questions. `kinds` restricts
        to e.g. ["decision", "convention"]."""
        params = _params(
            p.RecallParams,
            {"query": query, "kinds": kinds, "budget": budget, "sessionId": memory.session_id},
        )

        def work(engine: Engine) -> str:  # a query asks: it is no memory, and never kept
            return _answer(chat.recall(engine, params), memory.settings.max_recalls_per_session)

        return await call(ctx, work)

    @server.tool(name="nous_remember")
    async def nous_remember(
        ctx: Context[Any, Any],
        kind: str,
        content: str,
        scope: str | None = None,
        tags: list[str] | None = None,
    ) -> str:
        """Store one durable memory about this project: a decision, convention, constraint,
        procedure, fact, preference, correction or note, written as a self-contained sentence.
        `scope`: project (default), language or universal. Secrets are redacted before storage.
        The same text again confirms the existing memory."""
        params = _params(
            p.RememberParams,
            {"kind": kind, "content": content, "scope": scope, "tags": tags, "source": "mcp"},
        )

        def work(engine: Engine) -> str:
            result = engine.remember(Draft.of(params))
            redacted = [r.kind for r in result.redactions]
            return (
                f"{result.status} {result.memory.id} [{result.memory.status}] "
                f"in {code(result.memory.scope, 120)}"
                + (f" (redacted: {', '.join(redacted)})" if redacted else "")
            )

        return await call(ctx, work)

    @server.tool(name="nous_forget")
    async def nous_forget(ctx: Context[Any, Any], id: str) -> str:
        """Retire a memory of this project by its id (it stays in the database, inactive)."""
        params = _params(p.ForgetParams, {"id": id})

        def work(engine: Engine) -> str:
            memory_now = engine.forget(params.id)
            return f"{memory_now.status} {memory_now.id}"

        return await call(ctx, work)

    return server
