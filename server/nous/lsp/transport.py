"""The byte streams pygls reads and writes, with what pygls cannot survive taken out first.

pygls 2 reads frames itself (`pygls.io_.run_async`) and trusts them: a bad `Content-Length`, a
stray byte or a truncated header leaves it running but deaf; invalid JSON, a message that is not
JSON-RPC or a request id of the wrong type gets no answer at all (`shared/guides/reliability.md`).
So the daemon runs pygls's message loop over an `Input` instead of stdin: it reads the real
stream through `framing.FrameReader` (validated, size-capped, resynchronised after a bad frame),
answers what pygls would drop (-32700, -32600, an oversized request by its id) and passes every
other message on, re-framed, untouched. Everything past this point — dispatch, lifecycle,
cancellation, answers — is pygls's.

`Output` is the one writer of the outgoing stream (pygls's answers and the errors written here):
one lock, one write and flush per frame, so frames never interleave.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from nous.lsp.framing import FrameError, FrameReader
from nous.lsp.requests import valid_id

log = logging.getLogger(__name__)
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
_ID = re.compile(rb'^\s*\{(?:[^{}]*?,)?\s*"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")')


class Output:
    """The outgoing stream: whole frames under one lock."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            self._stream.write(data)
            self._stream.flush()

    def flush(self) -> None:
        """Every `write` is flushed already."""

    def close(self) -> None:
        """pygls closes its writer on `exit`; the process ends right after, the stream stays."""

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def error(self, msg_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


class Guard:
    """Checks each frame body before pygls sees it; answers and drops what pygls cannot take."""

    def __init__(self, output: Output, fault: Callable[[str], None]) -> None:
        self.output = output
        self.fault = fault

    def check(self, body: bytes) -> bool:
        """True when the body is a JSON-RPC 2.0 message pygls can read (it goes on untouched);
        False when it was answered here (or, a notification, dropped)."""
        nested = 0

        def count(obj: dict[str, Any]) -> dict[str, Any]:
            nonlocal nested
            nested += "jsonrpc" in obj
            return obj

        try:
            message = json.loads(body, object_hook=count)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            self.output.error(None, PARSE_ERROR, f"invalid JSON: {exc}")
            self.fault("invalid JSON received")
            return False
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not (isinstance(message.get("method"), str) or "id" in message)
            or ("method" in message and not isinstance(message["method"], str))
            or ("params" in message and not isinstance(message["params"], (dict, list, type(None))))
        ):
            msg_id = message.get("id") if isinstance(message, dict) else None
            self.output.error(
                msg_id if valid_id(msg_id) else None, INVALID_REQUEST, "not a JSON-RPC 2.0 message"
            )
            return False
        msg_id = message.get("id")
        if "id" in message and "method" in message and not valid_id(msg_id):
            self.output.error(None, INVALID_REQUEST, "request id must be a number or a string")
            return False
        if nested > 1:
            # pygls turns every object that has a "jsonrpc" key into a message, wherever it sits
            if "method" in message:
                self.output.error(
                    msg_id if valid_id(msg_id) else None, INVALID_REQUEST,
                    'an object inside the message has a "jsonrpc" key',
                )  # fmt: skip
            return False
        return True

    def oversized(self, error: FrameError) -> None:
        """Answer an oversized request by the id found in its first bytes, if there is one."""
        found = _ID.search(error.head)
        if found is not None:
            msg_id: int | str = json.loads(found.group(1))
            self.output.error(msg_id, INVALID_REQUEST, f"message refused: {error.reason}")


class Input:
    """What pygls's message loop (`pygls.io_.run_async`, the loop `start_io` runs) reads instead
    of stdin: the messages the guard let through, each re-framed with a plain `Content-Length`.

    `readline` and `readexactly` answer from what is buffered without leaving the event loop; only
    reading the stream itself goes to a thread. (`start_io` would wrap stdin in a reader that
    sends every header line and body to a thread: two more thread hops a message, measured at
    several milliseconds a request on a loaded 2-core machine.)"""

    def __init__(self, stream: BinaryIO, guard: Guard, chunk: int = 65536) -> None:
        self._read = getattr(stream, "read1", stream.read)
        self._guard = guard
        self._chunk = chunk
        self._frames = FrameReader()
        self._ready = b""
        self._closed = False

    async def readline(self) -> bytes:
        if not self._ready:
            await self._fill()
        end = self._ready.find(b"\n") + 1 or len(self._ready)
        line, self._ready = self._ready[:end], self._ready[end:]
        return line

    async def readexactly(self, size: int) -> bytes:
        if not self._ready:
            await self._fill()
        data, self._ready = self._ready[:size], self._ready[size:]
        return data

    async def _fill(self) -> None:
        """The next good message, framed; nothing (end of input) once the stream is closed."""
        loop = asyncio.get_running_loop()
        while not self._closed:
            while (item := self._frames.next()) is not None:
                if isinstance(item, FrameError):
                    self._guard.fault(f"bad frame skipped ({item.reason})")
                    self._guard.oversized(item)
                    continue
                try:
                    passed = self._guard.check(item)
                except Exception:  # the last line of defence: log it, keep reading
                    log.exception("could not check a message")
                    passed = False
                if passed:
                    self._ready = b"Content-Length: %d\r\n\r\n" % len(item) + item
                    return
            chunk = await loop.run_in_executor(None, self._read, self._chunk)
            if not chunk:
                log.info("input closed")
                self._closed = True
                return
            self._frames.feed(chunk)
