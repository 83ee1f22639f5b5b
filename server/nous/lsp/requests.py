"""Request ids and the custom requests in flight: the daemon's only per-request bookkeeping.

An id is an integer or a string, compared with its type (`true` is not `1`, `"1"` is not `1`).
A request is held from the moment it is accepted until it is answered or cancelled, then
forgotten, so its id can be used again and nothing grows with the number of requests served.
Each request is answered exactly once: by the task running it (`take`) or by its cancellation
(`cancel`), whichever comes first.
"""

from __future__ import annotations

import asyncio
from typing import TypeGuard

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
        self._tasks: dict[RequestId, asyncio.Task[None]] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def __contains__(self, msg_id: object) -> bool:
        return valid_id(msg_id) and msg_id in self._tasks

    def refusal(self, msg_id: RequestId) -> str | None:
        """Why a new request with this id cannot be accepted now, or None."""
        if msg_id in self._tasks:
            return f"id {msg_id!r} is already used by a request in progress"
        if len(self._tasks) >= self.limit:
            return f"more than {self.limit} requests in progress"
        return None

    def add(self, msg_id: RequestId, task: asyncio.Task[None]) -> None:
        self._tasks[msg_id] = task
        task.add_done_callback(lambda done: self._settle(msg_id, done))

    def _settle(self, msg_id: RequestId, done: asyncio.Task[None]) -> None:
        if self._tasks.get(msg_id) is done:
            del self._tasks[msg_id]

    def take(self, msg_id: RequestId) -> bool:
        """Called by the running task before it answers: True (and the request is forgotten)
        when the answer is still this task's to give — not cancelled, not answered already."""
        task = asyncio.current_task()
        if task is None or self._tasks.get(msg_id) is not task:
            return False
        del self._tasks[msg_id]
        return True

    def cancel(self, msg_id: object) -> bool:
        """Cancel the request; True when it was in flight (the caller answers -32800)."""
        task = self._tasks.pop(msg_id, None) if valid_id(msg_id) else None
        if task is None:
            return False
        task.cancel()
        return True
