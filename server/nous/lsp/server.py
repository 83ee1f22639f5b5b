"""The Nous daemon: a pygls language server with the `nous/*` methods registered as features.

pygls reads the frames (through `transport.Input`, which first takes out what pygls cannot
survive: bad frames, invalid JSON, messages that are not JSON-RPC), dispatches every method,
runs `initialize`, `shutdown` and `exit`, answers each request once and cancels requests
(`$/cancelRequest` → -32800). `NousProtocol`, a subclass of pygls's `LanguageServerProtocol`,
adds what the LSP spec asks and pygls does not do: a request before `initialize` → -32002, after
`shutdown` or a second `initialize` → -32600, an id still in flight → -32600 (`requests.py`),
params pygls cannot structure → -32602 (pygls would leave the request unanswered); and it keeps
the params of custom methods as plain JSON, so the pydantic models of `protocol.py` validate
them (-32602 naming the field). The handlers run on one worker thread that owns SQLite and ONNX.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from cattrs import Converter, transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types as lsp
from pydantic import BaseModel, ValidationError
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.io_ import run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol, default_converter

from nous import __version__
from nous import protocol as p
from nous.engine import uri_to_path
from nous.errors import AssetError, NousError, StoreError
from nous.lsp import handlers, watchdog
from nous.lsp.folders import Folders
from nous.lsp.requests import InFlight, valid_id
from nous.lsp.transport import Guard, Input, Output

if TYPE_CHECKING:
    from pygls.server import ServerErrors

log = logging.getLogger(__name__)
INVALID_REQUEST, INVALID_PARAMS, INTERNAL = -32600, -32602, -32603
NOT_INITIALIZED = -32002
POPUP_INTERVAL = 60.0


@dataclass
class CustomRequest:
    """A request for a method lsprotocol does not know (`nous/*`): params kept as plain JSON."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@dataclass
class CustomNotification:
    """A notification for a method lsprotocol does not know, in or out (`nous/budget`)."""

    method: str
    jsonrpc: str
    params: Any = None


@dataclass
class Unreadable:
    """A message pygls could not structure (params of the wrong shape for an LSP method)."""

    method: str | None
    request_id: int | str | None
    reason: str


def _custom(data: dict[str, Any], _type: Any) -> CustomRequest | CustomNotification:
    if "id" in data:
        return CustomRequest(data["id"], data["method"], data["jsonrpc"], data.get("params"))
    return CustomNotification(data["method"], data["jsonrpc"], data.get("params"))


def _response(message: JsonRPCResponseMessage) -> dict[str, Any]:
    # A custom method's result is JSON already (`model_dump(mode="json")`): no second walk.
    return {"jsonrpc": message.jsonrpc, "id": message.id, "result": message.result}


def converter() -> Converter:
    """pygls's converter, with custom methods' params and results left as plain JSON."""
    made: Converter = default_converter()  # type: ignore[no-untyped-call]
    made.register_structure_hook(CustomNotification, _custom)
    made.register_unstructure_hook(JsonRPCResponseMessage, _response)
    return made


class _Answered(logging.Filter):
    """pygls logs each error it answers with a traceback; a refusal (bad params, a named error)
    was answered and is no fault, so only internal errors stay in the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Unable to deserialize message"):
            return False  # answered -32602 or dropped by `NousProtocol.handle_message`
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, JsonRpcException) and exc.code != INTERNAL)


_ANSWERED = _Answered()


class NousProtocol(LanguageServerProtocol):
    """pygls's protocol plus the lifecycle and id rules it lacks (see the module docstring)."""

    def __init__(self, server: LanguageServer, converter: Converter) -> None:
        super().__init__(server, converter)
        assert isinstance(server, Daemon)
        self.daemon = server

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        known = super().get_message_type(method)
        return known if known is not None else CustomNotification

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data:
            return data
        try:
            return super().structure_message(data)
        except Exception as exc:
            cause = exc.__cause__
            reason = (
                "; ".join(transform_error(cause))
                if isinstance(cause, ClassValidationError)
                else str(cause or exc)
            )
            method = data.get("method")
            request_id = data.get("id") if isinstance(method, str) else None
            return Unreadable(
                method if isinstance(method, str) else None,
                request_id if valid_id(request_id) else None,
                reason[:500],
            )

    def handle_message(self, message: Any) -> None:
        daemon = self.daemon
        if isinstance(message, Unreadable):
            log.info("unreadable %s message: %s", message.method, message.reason)
            if message.request_id is not None:
                daemon.output.error(
                    message.request_id, INVALID_PARAMS,
                    f"invalid params for {message.method}: {message.reason}",
                )  # fmt: skip
            else:
                daemon.fault(f"unreadable {message.method or 'response'} message dropped")
            return
        method = getattr(message, "method", None)
        if not isinstance(method, str) or method == lsp.EXIT:
            super().handle_message(message)  # a response to us, or `exit` (always obeyed)
            return
        request_id = getattr(message, "id", None)
        is_request = valid_id(request_id)
        refusal: tuple[int, str] | None = None
        if not daemon.initialized and method != lsp.INITIALIZE:
            refusal = (NOT_INITIALIZED, f"{method}: the server is not initialized yet")
        elif daemon.shutting_down:
            refusal = (INVALID_REQUEST, f"{method}: the server is shutting down")
        elif method == lsp.INITIALIZE and daemon.initialized:
            refusal = (INVALID_REQUEST, "initialize was already received")
        elif method in handlers.METHODS:
            if not valid_id(request_id):
                return  # a custom method sent as a notification: nobody waits for it
            reason = daemon.in_flight.refusal(request_id)
            refusal = (INVALID_REQUEST, reason) if reason else None
        if refusal is not None:
            if is_request:
                daemon.output.error(request_id, *refusal)
            return
        if method == lsp.INITIALIZE:
            daemon.initialized = True
        elif method == lsp.SHUTDOWN:
            daemon.shutting_down = True
        elif method in handlers.METHODS and valid_id(request_id):
            # held from arrival: a second request with this id, even in the same read, is refused
            daemon.in_flight.accept(request_id)
        super().handle_message(message)
        if method == lsp.CANCEL_REQUEST:
            daemon.in_flight.release(message.params.id)


class Daemon(LanguageServer):
    """One connection: the pygls server, the folders it serves and the store thread."""

    protocol: NousProtocol

    def __init__(
        self,
        reader: BinaryIO,
        writer: BinaryIO,
        overrides: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.reader = reader
        self.output = Output(writer)
        self.guard = Guard(self.output, self.fault)
        self.overrides = overrides or {}
        self.env = env or {}
        """The environment's settings (`settings.environment()`), read once by `nous serve`."""
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nous-store")
        self.folders = Folders(self.worker)
        self.in_flight = InFlight()
        self.initialized = False
        self.shutting_down = False
        self.last_popup = 0.0
        self._popup_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        super().__init__(
            "nous", __version__, protocol_cls=NousProtocol, converter_factory=converter
        )
        self.protocol.set_writer(self.output)
        logging.getLogger("pygls.protocol.json_rpc").addFilter(_ANSWERED)
        self._register()

    # -- running ----------------------------------------------------------------------------------

    def serve(self) -> int:
        """Serve until `exit` (which ends the process) or the end of input; the exit status.
        pygls's own message loop (what `start_io` runs) reads the guarded input."""
        reader = Input(self.reader, self.guard)
        loop = run_async(
            threading.Event(), reader, self.protocol, logger=log,
            error_handler=self.report_server_error,
        )  # fmt: skip
        try:
            asyncio.run(loop)
        except BrokenPipeError:
            log.warning("the editor closed its end of the connection")
        log.info("input closed (shutdown first: %s)", self.shutting_down)
        return 0 if self.shutting_down else 1

    def handle(self, body: bytes) -> None:
        """One frame body, as `Input` hands it to pygls's reader: checked by the guard, then read
        and dispatched by pygls (in process, for tests; needs a running event loop)."""
        if self.guard.check(body):
            self.protocol.handle_message(
                json.loads(body, object_hook=self.protocol.structure_message)
            )

    def fault(self, message: str) -> None:
        """Log every fault; show at most one popup a minute (any thread)."""
        log.warning("protocol fault: %s", message)
        with self._popup_lock:
            now = time.monotonic()
            if not self.initialized or now - self.last_popup < POPUP_INTERVAL:
                return
            self.last_popup = now
        self.output.send(
            {"jsonrpc": "2.0", "method": lsp.WINDOW_SHOW_MESSAGE,
             "params": {"type": lsp.MessageType.Warning.value, "message": f"Nous: {message}"}}
        )  # fmt: skip

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        if source is not FeatureRequestError:  # a request's error is in its answer
            self.fault(f"{type(error).__name__}: {error}")

    def _soon(self, fn: Callable[[], None]) -> None:
        """Run `fn` on the event loop (from any thread)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(fn)

    # -- features -----------------------------------------------------------------------------

    def _register(self) -> None:
        for method, (model, handler) in handlers.METHODS.items():
            self.feature(method)(self._custom(method, model, handler))

        @self.feature(lsp.INITIALIZE)
        def initialize(params: lsp.InitializeParams) -> None:
            self._loop = asyncio.get_running_loop()
            paths = [uri_to_path(f.uri) for f in params.workspace_folders or []]
            if not paths and params.root_uri:
                paths = [uri_to_path(params.root_uri)]
            problems = self.folders.configure(
                params.initialization_options, paths, self.overrides, self.env
            )
            self.folders.warm()  # the model loads while the client answers and asks
            if params.process_id is not None and params.process_id > 0:
                watchdog.start(params.process_id)
            for problem in problems:
                log.warning(problem)
            if problems:  # after the answer to `initialize`
                self._soon(
                    lambda: self.window_show_message(
                        lsp.ShowMessageParams(
                            lsp.MessageType.Warning, "Nous settings: " + "; ".join(problems)
                        )
                    )
                )

        @self.feature(lsp.INITIALIZED)
        def initialized(_params: lsp.InitializedParams) -> None:
            threading.Thread(target=self._index, name="nous-index", daemon=True).start()

        @self.feature(lsp.SHUTDOWN)
        def shutdown(_params: None) -> None:
            self.folders.stop()

        @self.feature(lsp.EXIT)
        def exit_(_params: None) -> None:
            log.info("exit (shutdown first: %s)", self.shutting_down)
            os._exit(0 if self.shutting_down else 1)

        @self.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
        def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
            self.folders.opened(params.text_document.uri, params.text_document.language_id)

        @self.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
        def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
            self.folders.opened(params.text_document.uri, None)

        @self.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
        def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
            pass

    def _custom(
        self, method: str, model: type[BaseModel], handler: handlers.Handler
    ) -> Callable[[Any], Awaitable[dict[str, Any]]]:
        """The pygls feature of one custom method: validate, run on the store thread, answer;
        `nous/budget` follows the answer of a request that injects context."""
        optional = method in handlers.PARAMS_OPTIONAL

        async def feature(raw: Any) -> dict[str, Any]:
            task = asyncio.current_task()
            request_id = self.protocol.msg_id
            if task is not None and request_id is not None:
                self.in_flight.running(request_id, task)
            if raw is None and not optional:
                raise JsonRpcException(f"{method}: params are required", INVALID_PARAMS)
            if raw is not None and not isinstance(raw, dict):
                raise JsonRpcException(f"{method}: params must be an object", INVALID_PARAMS)
            try:
                params = model.model_validate(raw or {})
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(part) for part in first["loc"]) or "params"
                message = f"{method}: invalid params: {field}: {first['msg']}"
                raise JsonRpcException(message, INVALID_PARAMS) from None
            loop = asyncio.get_running_loop()
            try:
                (project, team), result = await loop.run_in_executor(
                    self.worker, self._run, handler, params
                )
            except NousError as exc:
                code = INTERNAL if isinstance(exc, (StoreError, AssetError)) else INVALID_PARAMS
                raise JsonRpcException(f"{method}: {exc}", code) from None
            except Exception as exc:
                log.exception("%s failed", method)
                message = f"{method}: internal error: {type(exc).__name__}"
                raise JsonRpcException(message, INTERNAL) from None
            if method in handlers.INJECTING and task is not None:
                # done callbacks run in order: pygls's (the answer) was added before this one
                def budget(done: asyncio.Task[Any]) -> None:
                    if not done.cancelled():
                        self._budget(project, result, team)

                task.add_done_callback(budget)
            return result

        return feature

    def _run(
        self, handler: handlers.Handler, params: Any
    ) -> tuple[tuple[str, str], dict[str, Any]]:
        """Route to the folder of the active file, normalise that file once (a URI or a path
        → workspace-relative), run the handler; returns (the answering project, its team store's
        state) and the answer. Store thread."""
        active = getattr(params, "active_file", None)
        engine = self.folders.engine_for(active)
        if active:
            params = params.model_copy(update={"active_file": engine.active_file})
        answer = handler(engine, params)
        return (engine.project.name, engine.team_state()), answer

    def _budget(self, project: str, result: dict[str, Any], team: str) -> None:
        session = result.get("session") or {}
        layers = [
            {"layer": s["layer"], "used": s["used"], "cap": s["cap"]}
            for s in result.get("sections", [])
        ]
        self.protocol.notify(
            p.NOUS_BUDGET,
            p.BudgetNotification(
                session_id=session.get("id"), used=session.get("used", 0), cap=session.get("cap", 0),
                layers=layers, project=project, team=team,
            ).model_dump(mode="json", by_alias=True),
        )  # fmt: skip

    def _index(self) -> None:
        report = self.folders.index(lambda: self.shutting_down)
        self._soon(lambda: self.protocol.notify(p.NOUS_INDEXED, report))
