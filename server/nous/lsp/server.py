"""The Nous daemon: a pygls language server behind a JSON-RPC layer that never goes deaf.

This module is the JSON-RPC layer: frames are read by `framing.FrameReader` (validated,
size-capped, resynchronised after a bad frame), the workspace folders and their indexing are
`folders.Folders`, the parent watchdog `watchdog`. Every message is then checked here: invalid JSON → -32700, not JSON-RPC → -32600, a
request before `initialize` → -32002, after `shutdown` → -32600, `exit` → status 0 after a
`shutdown` else 1. `nous/*` methods are validated with the pydantic models of `protocol.py`
(-32602 naming the field) and run on one worker thread that owns SQLite and ONNX; everything
else (initialize, text-document sync, cancellation of pygls requests) goes to pygls.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pydantic import ValidationError
from pygls.lsp.server import LanguageServer

from nous import __version__
from nous import protocol as p
from nous.engine import Engine
from nous.errors import AssetError, NousError, StoreError
from nous.lsp import handlers, watchdog
from nous.lsp.folders import Folders
from nous.lsp.framing import FrameError, FrameReader
from nous.lsp.requests import InFlight, RequestId, valid_id

log = logging.getLogger(__name__)
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = (
    -32700, -32600, -32601, -32602, -32603,
)  # fmt: skip
NOT_INITIALIZED, CANCELLED = -32002, -32800
POPUP_INTERVAL = 60.0
_ID = re.compile(rb'^\s*\{(?:[^{}]*?,)?\s*"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")')


class Daemon:
    """One connection: framing, lifecycle rules, validation and dispatch."""

    def __init__(
        self,
        reader: BinaryIO,
        writer: BinaryIO,
        overrides: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.overrides = overrides or {}
        self.env = env or {}
        """The environment's settings (`settings.environment()`), read once by `nous serve`."""
        self.ls = LanguageServer("nous", __version__)
        self.ls.protocol.set_writer(_Writer(self._write_bytes))
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nous-store")
        self.folders = Folders(self.worker)
        self.initialize_seen = False
        self.shutdown_seen = False
        self.in_flight = InFlight()
        self.last_popup = 0.0
        self._write_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._register_documents()

    # -- output ---------------------------------------------------------------------------------

    def _write_bytes(self, data: bytes) -> None:
        with self._write_lock:
            self.writer.write(data)
            self.writer.flush()

    def send(self, message: dict[str, Any]) -> None:
        # `replace`: a lone surrogate (an undecodable file name) becomes "?" instead of losing
        # the whole message
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "replace"
        )
        self._write_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def respond(
        self, msg_id: Any, result: Any = None, error: tuple[int, str] | None = None
    ) -> None:
        """Answer a request handled on the spot (a custom request in flight answers through
        `_answer`, so it is answered once however it ends)."""
        if error:
            self.send(
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": error[0], "message": error[1]}}
            )
        else:
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def fault(self, message: str) -> None:
        """Log every fault; show at most one popup a minute."""
        log.warning("protocol fault: %s", message)
        now = time.monotonic()
        if self.initialize_seen and now - self.last_popup >= POPUP_INTERVAL:
            self.last_popup = now
            self.notify("window/showMessage", {"type": 2, "message": f"Nous: {message}"})

    # -- main loop ------------------------------------------------------------------------------

    def serve(self) -> int:
        return asyncio.run(self._serve())

    async def _serve(self) -> int:
        self._loop = asyncio.get_running_loop()
        frames = FrameReader()
        read = getattr(self.reader, "read1", self.reader.read)
        while True:
            chunk = await self._loop.run_in_executor(None, read, 65536)
            if not chunk:
                log.info("input closed")
                return 0 if self.shutdown_seen else 1
            frames.feed(chunk)
            while (item := frames.next()) is not None:
                if isinstance(item, FrameError):
                    self.fault(f"bad frame skipped ({item.reason})")
                    self._refuse_oversized(item)
                    continue
                try:
                    self.handle(item)
                except Exception:  # the last line of defence: log it, answer once, keep reading
                    log.exception("could not handle a message")
                    self._internal_error(item)

    def handle(self, body: bytes) -> None:
        try:
            message = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": PARSE_ERROR, "message": f"invalid JSON: {exc}"},
                }
            )
            self.fault("invalid JSON received")
            return
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not (isinstance(message.get("method"), str) or "id" in message)
            or ("method" in message and not isinstance(message["method"], str))
            or ("params" in message and not isinstance(message["params"], (dict, list, type(None))))
        ):
            msg_id = message.get("id") if isinstance(message, dict) else None
            if not valid_id(msg_id):
                msg_id = None
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": INVALID_REQUEST, "message": "not a JSON-RPC 2.0 message"},
                }
            )
            return
        method = message.get("method")
        is_request = "id" in message and isinstance(method, str)
        msg_id = message.get("id")
        if is_request and not valid_id(msg_id):
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": INVALID_REQUEST,
                        "message": "request id must be a number or a string",
                    },
                }
            )
            return
        if method is None:
            self._to_pygls(message)  # a response to one of our requests
            return
        if method == "exit":
            log.info("exit (shutdown first: %s)", self.shutdown_seen)
            self.writer.flush()
            os._exit(0 if self.shutdown_seen else 1)
        if not self.initialize_seen and method != "initialize":
            if is_request:
                self.respond(
                    msg_id, error=(NOT_INITIALIZED, f"{method}: the server is not initialized yet")
                )
            return
        if self.shutdown_seen:
            if is_request:
                self.respond(
                    msg_id, error=(INVALID_REQUEST, f"{method}: the server is shutting down")
                )
            return
        if method == "shutdown":
            self.shutdown_seen = True
            self.folders.stop()
            self.respond(msg_id, None)
            return
        if method == "initialize":
            if self.initialize_seen:
                self.respond(msg_id, error=(INVALID_REQUEST, "initialize was already received"))
                return
            self.initialize_seen = True
            params = message.get("params")
            self._on_initialize(params if isinstance(params, dict) else {})
        if method == "$/cancelRequest":
            params = message.get("params")
            target = params.get("id") if isinstance(params, dict) else None
            if self.in_flight.cancel(target):
                self.respond(target, error=(CANCELLED, "request cancelled"))
                return
        if method.startswith("nous/"):
            if is_request and valid_id(msg_id):
                self._start_custom(msg_id, method, message)
            return
        self._to_pygls(message)
        if method == "initialized":
            threading.Thread(target=self._index, name="nous-index", daemon=True).start()

    def _start_custom(self, msg_id: RequestId, method: str, message: dict[str, Any]) -> None:
        refusal = self.in_flight.refusal(msg_id)
        if refusal:
            self.respond(msg_id, error=(INVALID_REQUEST, refusal))
            return
        assert self._loop is not None
        # Registered before it runs, so a `$/cancelRequest` in the same read finds it.
        self.in_flight.add(msg_id, self._loop.create_task(self._custom(msg_id, method, message)))

    def _answer(
        self, msg_id: RequestId, result: Any = None, error: tuple[int, str] | None = None
    ) -> bool:
        """The one answer of the custom request running in this task (none once cancelled)."""
        if not self.in_flight.take(msg_id):
            return False
        self.respond(msg_id, result, error)
        return True

    def _refuse_oversized(self, error: FrameError) -> None:
        """Answer an oversized request by the id found in its first bytes, if there is one."""
        found = _ID.search(error.head)
        if found is None:
            return
        msg_id: int | str = json.loads(found.group(1))
        self.respond(msg_id, error=(INVALID_REQUEST, f"message refused: {error.reason}"))

    def _internal_error(self, body: bytes) -> None:
        try:
            message = json.loads(body)
            msg_id = message.get("id") if isinstance(message, dict) else None
        except (ValueError, RecursionError):
            return
        if valid_id(msg_id) and isinstance(message.get("method"), str):
            if msg_id in self.in_flight:
                return  # its task answers
            self.respond(msg_id, error=(INTERNAL, "internal error; see the server log"))

    def _to_pygls(self, message: dict[str, Any]) -> None:
        try:
            structured = json.loads(
                json.dumps(message), object_hook=self.ls.protocol.structure_message
            )
            self.ls.protocol.handle_message(structured)
        except Exception as exc:  # pygls could not even parse it: answer once, keep going
            log.exception("pygls could not handle %s", message.get("method"))
            if "id" in message and message.get("method"):
                self.respond(
                    message["id"],
                    error=(INVALID_PARAMS, f"invalid params for {message['method']}: {exc}"),
                )

    # -- custom methods -------------------------------------------------------------------------

    async def _custom(self, msg_id: Any, method: str, message: dict[str, Any]) -> None:
        entry = handlers.METHODS.get(method)
        if entry is None:
            self._answer(msg_id, error=(METHOD_NOT_FOUND, f"unknown method {method}"))
            return
        model, handler = entry
        raw = message.get("params")
        if raw is None and method not in handlers.PARAMS_OPTIONAL:
            self._answer(msg_id, error=(INVALID_PARAMS, f"{method}: params are required"))
            return
        if raw is not None and not isinstance(raw, dict):
            self._answer(msg_id, error=(INVALID_PARAMS, f"{method}: params must be an object"))
            return
        try:
            params = model.model_validate(raw or {})
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "params"
            self._answer(
                msg_id, error=(INVALID_PARAMS, f"{method}: invalid params: {field}: {first['msg']}")
            )
            return
        assert self._loop is not None
        future = self._loop.run_in_executor(self.worker, self._run, handler, params)
        try:
            (project, team), result = await future
        except asyncio.CancelledError:
            return  # the cancel was answered
        except NousError as exc:
            code = INTERNAL if isinstance(exc, (StoreError, AssetError)) else INVALID_PARAMS
            self._answer(msg_id, error=(code, f"{method}: {exc}"))
            return
        except Exception as exc:
            log.exception("%s failed", method)
            self._answer(
                msg_id, error=(INTERNAL, f"{method}: internal error: {type(exc).__name__}")
            )
            return
        if self._answer(msg_id, result) and method in handlers.INJECTING:
            self._budget_notification(project, result, team)

    def _run(
        self, handler: Callable[[Engine, Any], dict[str, Any]], params: Any
    ) -> tuple[tuple[str, str], dict[str, Any]]:
        """Route to the folder of the active file, normalise that file once (a URI or a path
        → workspace-relative), run the handler; returns (the answering project, its team store's
        state) and the answer."""
        active = getattr(params, "active_file", None)
        engine = self.folders.engine_for(active)
        if active:
            params = params.model_copy(update={"active_file": engine.active_file})
        answer = handler(engine, params)
        return (engine.project.name, engine.team_state()), answer

    def _budget_notification(self, project: str, result: dict[str, Any], team: str) -> None:
        session = result.get("session") or {}
        layers = [
            {"layer": s["layer"], "used": s["used"], "cap": s["cap"]}
            for s in result.get("sections", [])
        ]
        self.notify(
            p.NOUS_BUDGET,
            p.BudgetNotification(
                session_id=session.get("id"), used=session.get("used", 0), cap=session.get("cap", 0),
                layers=layers, project=project, team=team,
            ).model_dump(mode="json", by_alias=True),
        )  # fmt: skip

    # -- lifecycle ------------------------------------------------------------------------------

    def _on_initialize(self, params: dict[str, Any]) -> None:
        problems = self.folders.configure(params, self.overrides, self.env)
        pid = params.get("processId")
        if isinstance(pid, int) and pid > 0:
            watchdog.start(pid)
        for problem in problems:
            log.warning(problem)
        if problems:
            self._loop_call(
                lambda: self.notify(
                    "window/showMessage",
                    {"type": 2, "message": "Nous settings: " + "; ".join(problems)},
                )
            )

    def _loop_call(self, fn: Callable[[], None]) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(fn)

    def _index(self) -> None:
        report = self.folders.index(lambda: self.shutdown_seen)
        self._loop_call(lambda: self.notify(p.NOUS_INDEXED, report))

    def _register_documents(self) -> None:
        @self.ls.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
        def did_open(_ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
            self.folders.opened(params.text_document.uri, params.text_document.language_id)

        @self.ls.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
        def did_change(_ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
            self.folders.opened(params.text_document.uri, None)

        @self.ls.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
        def did_close(_ls: LanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
            pass


class _Writer:
    """What pygls writes through: the same framed, locked output as ours."""

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self._write = write

    def write(self, data: bytes) -> None:
        self._write(data)

    def close(self) -> None:
        pass
