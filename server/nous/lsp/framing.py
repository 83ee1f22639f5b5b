"""A JSON-RPC frame reader that never goes deaf.

It validates each header block, caps the message size, and on any malformed frame reports one
`FrameError` and resynchronises on the next `Content-Length:` header, so the messages after a bad
frame are still read. Pure: it is fed bytes and returns bodies, so it is property-testable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_MESSAGE = 16 * 1024 * 1024
MAX_HEADER = 8192
_MARK = b"Content-Length:"
_LENGTH = re.compile(rb"^Content-Length:[ \t]*(\d{1,12})[ \t]*$", re.I)
_OTHER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*:[^\r\n]*$")


@dataclass(frozen=True)
class FrameError:
    """A malformed frame that was skipped."""

    reason: str


class FrameReader:
    """Feed bytes with `feed`; take complete bodies and errors with `next`."""

    def __init__(self, max_message: int = MAX_MESSAGE) -> None:
        self.max_message = max_message
        self._buffer = bytearray()
        self._skip = 0  # bytes of an oversized body still to discard

    def feed(self, data: bytes) -> None:
        if self._skip:
            dropped = min(self._skip, len(data))
            self._skip -= dropped
            data = data[dropped:]
        self._buffer += data

    def _resync(self, start: int = 1) -> None:
        """Drop bytes up to the next `Content-Length:` at or after `start`."""
        index = self._buffer.find(_MARK, start)
        if index == -1:
            keep = len(_MARK) - 1  # a header may be split across reads
            del self._buffer[: max(0, len(self._buffer) - keep)]
        else:
            del self._buffer[:index]

    def next(self) -> bytes | FrameError | None:
        """The next body, a `FrameError`, or None when more bytes are needed."""
        if not self._buffer:
            return None
        if not self._buffer.startswith(
            _MARK[: len(self._buffer)]
        ) and not self._buffer.lower().startswith(b"content-"):
            junk = self._buffer.find(_MARK)
            self._resync(0 if junk > 0 else 1)
            return FrameError("stray bytes before a header")
        end = self._buffer.find(b"\r\n\r\n")
        if end == -1:
            if len(self._buffer) > MAX_HEADER:
                self._resync()
                return FrameError("header too long or never terminated")
            second = self._buffer.find(_MARK, 1)
            if second != -1:
                self._resync()
                return FrameError("truncated header")
            return None
        lines = bytes(self._buffer[:end]).split(b"\r\n")
        length = None
        for line in lines:
            match = _LENGTH.match(line)
            if match:
                length = int(match.group(1))
            elif not _OTHER.match(line):
                self._resync()
                return FrameError("malformed header line")
        if length is None:
            self._resync()
            return FrameError("missing Content-Length")
        if length > self.max_message:
            body_start = end + 4
            available = len(self._buffer) - body_start
            del self._buffer[: body_start + min(available, length)]
            self._skip = max(0, length - available)
            return FrameError(f"message of {length} bytes exceeds the {self.max_message}-byte cap")
        body_start = end + 4
        if len(self._buffer) - body_start < length:
            # A header arriving inside the expected body means the body was cut short.
            cut = self._buffer.find(_MARK, body_start)
            if cut != -1:
                del self._buffer[:cut]
                return FrameError("body shorter than Content-Length")
            return None
        body = bytes(self._buffer[body_start : body_start + length])
        del self._buffer[: body_start + length]
        return body
