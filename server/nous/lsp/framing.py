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
# A header inside a body: JSON cannot hold a raw CR LF inside a string, so this marks a body that
# was cut short and a new frame that starts there.
_INNER = re.compile(rb"Content-Length:[ \t]*\d+\r\n")
_OTHER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*:[^\r\n]*$")


@dataclass(frozen=True)
class FrameError:
    """A malformed frame that was skipped."""

    reason: str
    head: bytes = b""
    """The first bytes of an oversized body, so its request id can still be answered."""


def _mark_prefix(data: bytes) -> int:
    """The length of the longest tail of `data` that is a proper prefix of `Content-Length:`."""
    for size in range(min(len(_MARK) - 1, len(data)), 0, -1):
        if _MARK.startswith(data[-size:]):
            return size
    return 0


class FrameReader:
    """Feed bytes with `feed`; take complete bodies and errors with `next`.

    Every `FrameError` consumes at least one byte, so draining with `next` always terminates.
    """

    def __init__(self, max_message: int = MAX_MESSAGE) -> None:
        self.max_message = max_message
        self._buffer = bytearray()
        self._skip = 0  # bytes of an oversized body still to discard
        self._carry = b""  # the tail of discarded bytes, in case a header straddles two reads

    def feed(self, data: bytes) -> None:
        if not self._skip:
            self._buffer += data
            return
        # Discarding an oversized body: a header inside it means the declared length was a lie,
        # so reading resumes there instead of swallowing the frames that follow.
        joined = self._carry + data
        index = joined.find(_MARK)
        if index != -1 and index < len(self._carry) + self._skip:
            self._skip, self._carry = 0, b""
            self._buffer += joined[index:]
        elif len(data) >= self._skip:
            # The body ends here; its last bytes may still be the start of a header (the length
            # was a lie by a few bytes), so they stay for the reader to judge.
            discarded = joined[: len(self._carry) + self._skip]
            keep = _mark_prefix(discarded)
            rest = data[self._skip :]
            self._skip, self._carry = 0, b""
            self._buffer += discarded[len(discarded) - keep :] + rest
        else:
            self._skip -= len(data)
            self._carry = joined[-(len(_MARK) - 1) :]

    def _resync(self, start: int = 1) -> None:
        """Drop bytes up to the next `Content-Length:` at or after `start` (at least one byte)."""
        index = self._buffer.find(_MARK, max(start, 1))
        if index != -1:
            del self._buffer[:index]
            return
        # Keep only a tail that could be the start of a header split across reads.
        keep = _mark_prefix(bytes(self._buffer[1:]))
        del self._buffer[: len(self._buffer) - keep]

    def next(self) -> bytes | FrameError | None:
        """The next body, a `FrameError`, or None when more bytes are needed."""
        if not self._buffer:
            return None
        head = bytes(self._buffer[: len(_MARK)])
        if not _MARK.startswith(head) and not head.lower().startswith(b"content-"):
            junk = self._buffer.find(_MARK)
            if junk > 0:
                del self._buffer[:junk]
            else:
                self._resync()
            return FrameError("stray bytes before a header")
        end = self._buffer.find(b"\r\n\r\n")
        if end == -1:
            if len(self._buffer) > MAX_HEADER:
                self._resync()
                return FrameError("header too long or never terminated")
            if self._buffer.find(_MARK, 1) != -1:
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
        body_start = end + 4
        if length > self.max_message:
            tail = bytes(self._buffer[body_start:])
            self._buffer.clear()
            self._skip, self._carry = length, b""
            self.feed(tail)
            return FrameError(
                f"message of {length} bytes exceeds the {self.max_message}-byte cap", tail[:4096]
            )
        inner = _INNER.search(self._buffer, body_start, body_start + length + 32)
        if inner is not None and inner.start() < body_start + length:
            del self._buffer[: inner.start()]
            return FrameError("body shorter than Content-Length")
        if len(self._buffer) - body_start < length:
            return None
        body = bytes(self._buffer[body_start : body_start + length])
        del self._buffer[: body_start + length]
        return body
