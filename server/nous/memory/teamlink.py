"""The team store as the local store sees it (design §13): reads that never hold up a local
answer, and writes that wait in the outbox until the team store has them.

- **Reads** run on a daemon thread of their own, one at a time: a search starts the team query
  before the local one and takes its answer only if it came within the timeout (else the answer
  is local only, and the next search does not queue behind a query still hanging). After a
  failed connection the team is not asked again until a back-off has passed.
- **Writes** are pushed by a sync thread from the outbox (`memory.outbox`): in order, as upserts
  by id, entries dropped only once the team store committed them; after a failure it backs off
  and tries again, so a server that is down or restarted gets every acknowledged write once.
- The team memories a search found are kept (bounded) so the pipeline's `get_many` and `vectors`
  answer them like local ones, each marked `origin: team`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nous.memory import team_url
from nous.memory.embedder import Vector
from nous.memory.model import Memory
from nous.memory.outbox import Entry, Outbox
from nous.memory.rows import COLUMNS
from nous.memory.team import Hit, Row, TeamStore, TeamStoreError
from nous.text import secrets

log = logging.getLogger(__name__)

READ_TIMEOUT_S = 0.3
"""How long a search waits for the team's candidates beyond its own work (`teamTimeoutMs`)."""
FIRST_WAIT_S = 2.0
"""Once per process, while the first connection is still being made (libpq's connect timeout),
a search waits this long instead: a command-line call has no earlier moment to connect in."""
BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits after consecutive failures, before the team is tried again."""
IDLE_S = 5.0
"""The sync thread looks at the outbox this often even unpoked (another process's writes)."""
PAGE_TIMEOUT_S = 3.0
"""How long the browser's team list waits (a person asked for it: longer than a search)."""
PENDING_S = 0.5
"""How soon the outbox is looked at again while rows in it wait for their vector (the backlog
that computes it does not know the team)."""
BATCH = 200
CACHE_LIMIT = 4096


@dataclass(frozen=True)
class TeamServer:
    """Where the team store is and how long a search waits for it."""

    url: str
    password: str | None = field(default=None, repr=False)
    """The password when the URL does not carry it (`teamStorePassword`)."""
    timeout: float = READ_TIMEOUT_S


class TeamLink:
    """One project's link to the team store, attached to its local store (the file at `path`,
    whose vectors are `model`'s, `dimension` wide)."""

    def __init__(
        self,
        server: TeamServer,
        project_key: str,
        scope: str,
        path: Path,
        dimension: int,
        model: str,
    ) -> None:
        self._url = server.url
        self._password = server.password
        self.url = team_url.redact(server.url)
        self.project_key = project_key
        self.scope = scope
        self.timeout = server.timeout
        self._args = (project_key, dimension, model)
        self._path = path
        self._columns = COLUMNS
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.read_state = "connecting"
        self.sync_state = "connecting"
        self.last_error: str | None = None
        self.pushed = 0
        self._reader: TeamStore | None = None
        self._reading: Future[Any] | None = None
        self._read_failures = 0
        self._read_retry_at = 0.0
        self._cache: dict[str, tuple[Memory, Vector]] = {}
        self._poked = True
        self._stopping = False
        self._rounds = 0
        self._empty_round = -1
        self._failed_round = -1
        self._poke_at = 0.0
        self._connecting: Future[Any] | None = None
        self._thread = threading.Thread(target=self._sync, name="nous-team-sync", daemon=True)
        self._thread.start()
        self._connecting = self._submit(self._ensure_reader)  # now, not on the first search

    # -- reads ----------------------------------------------------------------------------------

    def start(
        self, query: str, vector: Vector, k: int, scopes: Sequence[str] | None
    ) -> Future[Any] | None:
        """Start a team search; `None` when the team is not asked now (a query still running,
        or a back-off after a failure)."""
        return self._submit(lambda: self._ensure_reader().search(query, vector, k, scopes))

    def collect(self, pending: Future[Any] | None, timeout: float | None = None) -> list[Hit]:
        """The team's hits if they came within `timeout` (the link's by default), else none.
        Hits are kept for `found` / `found_vectors`."""
        if pending is None:
            return []
        if timeout is None:
            first = self._connecting is not None and not self._connecting.done()
            timeout = max(self.timeout, FIRST_WAIT_S) if first else self.timeout
        try:
            hits: list[Hit] = pending.result(timeout)
        except FutureTimeout:
            self._set(read_state="slow")
            log.info("team store slow: answering from local memory only")
            return []
        except Exception:
            return []  # recorded by the worker
        if len(self._cache) > CACHE_LIMIT:
            self._cache.clear()
        for hit in hits:
            self._cache[hit.memory.id] = (hit.memory, hit.vector)
        return hits

    def found(self, ids: Sequence[str]) -> dict[str, Memory]:
        """The team memories among `ids` a search brought in."""
        return {i: self._cache[i][0] for i in ids if i in self._cache}

    def found_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        return {i: self._cache[i][1] for i in ids if i in self._cache}

    def get(self, memory_id: str, timeout: float | None = None) -> Memory | None:
        """One team memory of this project (from what searches found, else asked for), or
        `None` when unknown or the team did not answer in time."""
        if memory_id in self._cache:
            return self._cache[memory_id][0]
        pending = self._submit(lambda: self._ensure_reader().rows([memory_id]))
        if pending is None:
            return None
        try:
            rows: dict[str, tuple[Memory, Vector]] = pending.result(
                self.timeout if timeout is None else timeout
            )
        except FutureTimeout:
            self._set(read_state="slow")
            return None
        except Exception:
            return None
        self._cache.update(rows)
        return rows[memory_id][0] if memory_id in rows else None

    def page(
        self, offset: int, limit: int, query: str | None, statuses: Sequence[str],
        timeout: float = PAGE_TIMEOUT_S,
    ) -> tuple[list[Memory], int]:  # fmt: skip
        """One page of the team's memories of this project (the browser's team list), or
        `TeamStoreError` when the team store does not answer in time."""
        pending = self._submit(lambda: self._ensure_reader().page(offset, limit, query, statuses))
        if pending is None:
            raise TeamStoreError(f"the team store {self.url} is {self.state}: try again")
        try:
            found: tuple[list[Memory], int] = pending.result(timeout)
        except FutureTimeout:
            self._set(read_state="slow")
            raise TeamStoreError(f"the team store {self.url} did not answer in time") from None
        except TeamStoreError:
            raise
        except Exception as exc:
            raise TeamStoreError(f"the team store {self.url}: {_message(exc)}") from exc
        return found

    def _submit(self, work: Any) -> Future[Any] | None:
        with self._lock:
            if self._stopping:
                return None
            before = self._reading
            if before is not None and not before.done():
                if before is not self._connecting:
                    return None  # one query at a time: a hanging one is not queued behind
            elif time.monotonic() < self._read_retry_at:
                return None
            else:
                before = None
            future: Future[Any] = Future()
            self._reading = future
        threading.Thread(
            target=self._read, args=(future, work, before), name="nous-team-read", daemon=True
        ).start()
        return future

    def _read(self, future: Future[Any], work: Any, after: Future[Any] | None = None) -> None:
        if after is not None:  # the first connection is being made: the query follows it
            wait_for([after])
            if after.exception() is not None:
                future.set_exception(TeamStoreError(f"the team store {self.url} is down"))
                return
        try:
            result = work()
        except Exception as exc:
            self._drop_reader()
            with self._lock:
                self._read_failures += 1
                wait = BACKOFF_S[min(self._read_failures, len(BACKOFF_S)) - 1]
                self._read_retry_at = time.monotonic() + wait
                self.read_state = "down"
                self.last_error = _message(exc)
            log.warning("team store unreachable (%s): local memory only", self.last_error)
            future.set_exception(exc)
            return
        with self._lock:
            self._read_failures = 0
            self.read_state = "up"
        future.set_result(result)

    def _ensure_reader(self) -> TeamStore:
        if self._reader is None or self._reader.closed:
            reader = TeamStore(self._url, *self._args, password=self._password)
            reader.warm()
            self._reader = reader
        return self._reader

    def _drop_reader(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            with contextlib.suppress(Exception):
                reader.close()

    # -- writes ---------------------------------------------------------------------------------

    def poke(self) -> None:
        """Something was queued: push it now."""
        with self._cond:
            self._poked = True
            self._cond.notify_all()

    def flush(self, timeout: float) -> bool:
        """Wait until a push round that started after this call found the outbox empty; False
        on timeout or when that round failed (what is left stays queued for later)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._poked = True
            self._cond.notify_all()
            after = self._rounds
            while self._empty_round <= after:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping or self._failed_round > after:
                    return False
                self._cond.wait(left)
        return True

    def _sync(self) -> None:
        outbox: Outbox | None = None
        writer: TeamStore | None = None
        failures = 0
        while True:
            with self._cond:
                wait = BACKOFF_S[min(failures, len(BACKOFF_S)) - 1] if failures else IDLE_S
                if self._poke_at:
                    wait = min(wait, max(0.0, self._poke_at - time.monotonic()))
                    self._poke_at = 0.0
                if not self._poked and not self._stopping:
                    self._cond.wait(wait)
                if self._stopping:
                    break
                self._poked = False
                self._rounds += 1
                this_round = self._rounds
            try:
                if outbox is None:
                    outbox = Outbox(self._path, self._columns)
                if writer is None or writer.closed:
                    writer = TeamStore(self._url, *self._args, password=self._password)
                while self._push(outbox, writer):
                    pass
                failures = 0
                waiting = outbox.count(self.scope)  # rows whose vector is still coming
                with self._cond:
                    self.sync_state = "up"
                    if waiting:
                        self._poke_at = time.monotonic() + PENDING_S
                    else:
                        self._empty_round = this_round
                    self._cond.notify_all()
            except Exception as exc:
                failures += 1
                with self._cond:
                    self.sync_state = "down"
                    self.last_error = _message(exc)
                    self._failed_round = this_round
                    self._cond.notify_all()
                log.warning("team store push failed (%s): kept in the outbox", self.last_error)
                if writer is not None:
                    with contextlib.suppress(Exception):
                        writer.close()
                writer = None
        if outbox is not None:
            outbox.close()
        if writer is not None:
            writer.close()

    def _push(self, outbox: Outbox, writer: TeamStore) -> bool:
        """Push one batch of the outbox; False when it was empty."""
        entries = outbox.take(self.scope, BATCH)
        if not entries:
            return False
        last: dict[str, Entry] = {}
        for entry in entries:
            last[entry.memory_id] = entry  # in order: the last change of a row decides
        puts = [e.memory_id for e in last.values() if e.op == "put"]
        rows = outbox.rows(puts)
        ready = [
            Row(_clean(r.fields), r.vector, r.model) for r in rows.values() if r.vector is not None
        ]  # `take` leaves rows whose vector is pending queued
        writer.put_many(ready)
        gone = [e.memory_id for e in last.values() if e.op == "delete"]
        if gone:
            writer.delete(gone)
        for e in last.values():
            if e.op == "status":
                p = e.payload
                writer.set_status(e.memory_id, p["status"], p["at"], p.get("superseded_by"))
        outbox.done([e.seq for e in entries])
        with self._lock:
            self.pushed += len(ready)
        return True

    # -- state ----------------------------------------------------------------------------------

    def _set(self, **values: Any) -> None:
        with self._lock:
            for name, value in values.items():
                setattr(self, name, value)

    @property
    def state(self) -> str:
        """`up`, `connecting`, `slow` (the last search did not wait for it) or `down`."""
        with self._lock:
            states = {self.read_state, self.sync_state}
        for state in ("down", "slow", "connecting"):
            if state in states:
                return state
        return "up"

    def status(self, queued: int) -> dict[str, Any]:
        """What `nous/status` reports of the team store (the URL without its password)."""
        return {
            "url": self.url,
            "state": self.state,
            "queued": queued,
            "pushed": self.pushed,
            "lastError": self.last_error,
            "timeoutMs": round(self.timeout * 1000),
        }

    def close(self, flush_timeout: float = 2.0) -> None:
        """Push what is queued (waiting at most `flush_timeout`), then stop; what is left stays
        in the outbox for the next start."""
        if flush_timeout > 0 and self._thread.is_alive():
            self.flush(flush_timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout=1.0)
        if self._reading is None or self._reading.done():
            self._drop_reader()


def _clean(fields: dict[str, Any]) -> dict[str, Any]:
    """The row redacted once more before it leaves the machine (every text field)."""
    out = dict(fields)
    for name in ("content", "summary", "micro", "source"):
        out[name] = secrets.scrub(out[name])
    out["tags"] = [secrets.scrub(t) for t in out["tags"]]
    return out


def _message(exc: BaseException) -> str:
    if isinstance(exc, TeamStoreError):
        return str(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return secrets.scrub(f"{type(exc).__name__}: {text}")
