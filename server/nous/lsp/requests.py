"""Request ids and the custom requests in flight: the bookkeeping pygls does not do.

An id is an integer or a string, compared with its type (`true` is not `1`, `"1"` is not `1`).
A custom request is held from the moment it is accepted until its task is done or it is
cancelled, then forgotten, so its id can be used again and nothing grows with the number of
requests served. pygls runs, answers and cancels the requests; this only refuses a second
request with an id still in flight (pygls would take it and answer the first request twice or
never) and more than `MAX_IN_FLIGHT` at once.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeGuard

MAX_IN_FLIGHT = 1024
"""Custom requests accepted at once and not yet answered; more are refused (-32600)."""

RequestId = int | str


def valid_id(value: object) -> TypeGuard[RequestId]:
    """A request id the daemon answers: an integer or a string (JSON-RPC allows numbers; LSP
    narrows ids to `integer | string`; a bool is not an integer here)."""
    return type(value) is int or type(value) is str


class InFlight:
    """The custom requests accepted and not answered yet, by id."""

    def __init__(self, limit: int = MAX_IN_FLIGHT) -> None:
        self.limit = limit
        self._held: dict[RequestId, object] = {}

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, msg_id: object) -> bool:
        return valid_id(msg_id) and msg_id in self._held

    def refusal(self, msg_id: RequestId) -> str | None:
        """Why a new request with this id cannot be accepted now, or None."""
        if msg_id in self._held:
            return f"id {msg_id!r} is already used by a request in progress"
        if len(self._held) >= self.limit:
            return f"more than {self.limit} requests in progress"
        return None

    def accept(self, msg_id: RequestId) -> None:
        """Hold the id, on arrival (before its task runs, so the next message already sees it)."""
        self._held[msg_id] = object()

    def running(self, msg_id: RequestId, task: asyncio.Task[Any]) -> None:
        """The request's task has started: forget the id when the task is done, however it
        ends (unless the id was released and accepted again meanwhile)."""
        token = self._held.get(msg_id)

        def settle(_done: asyncio.Task[Any]) -> None:
            if token is not None and self._held.get(msg_id) is token:
                del self._held[msg_id]

        task.add_done_callback(settle)

    def release(self, msg_id: object) -> None:
        """Forget a cancelled request at once (a task cancelled before it started never runs,
        so it never reaches `running`)."""
        if valid_id(msg_id):
            self._held.pop(msg_id, None)
