"""Child processes for the reliability tests (run with `python -m tests.reliability.workers`).

write DB WRITER COUNT JOURNAL [SEED]  (write-deferred: the same with vectors deferred to a model
that never answers, so every row it creates is left without its vector)
    COUNT remembers, about a third of them repeats of memories every writer shares, the rest new.
    Before each write the journal gets `try<TAB>content`, after it `ack<TAB>status<TAB>id<TAB>
    content`; a caller-visible error goes to the journal as `err<TAB>message` (the tests require
    none). Prints the write latencies (ms) as JSON at the end. The journal is written with
    unbuffered appends, so a `kill -9` loses nothing that was acknowledged.

read DB SECONDS
    Context assembly and recall in a loop (the read side of the mixed load); prints JSON counts.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nous.context import config as configs
from nous.context import pipeline
from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens

SCOPE = "project:rel"
SHARED = 40


def content_for(writer: str, n: int, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.25:
        return f"shared convention {rng.randrange(SHARED)}: run the linters before every push"
    if roll < 0.35 and n > 0:
        return f"{writer} noted fact {rng.randrange(n)} about the cache layer and its limits"
    return f"{writer} noted fact {n} about the cache layer and its limits"


class StalledEmbedder(HashEmbedder):
    """A model that never finishes a batch (a writer whose vectors are all still to come)."""

    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        threading.Event().wait()
        raise AssertionError("unreachable")


def write(
    db: str, writer: str, count: int, journal: str, seed: int, deferred: bool = False
) -> None:
    rng = random.Random(seed)
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    embedder = StalledEmbedder() if deferred else HashEmbedder()
    store = MemoryStore(db, embedder, tokens.counter(), defer_vectors=deferred)
    latencies: list[float] = []
    for n in range(count):
        content = content_for(writer, n, rng)
        os.write(fd, f"try\t{content}\n".encode())
        started = time.perf_counter()
        try:
            result = store.remember(Draft(kind="fact", content=content, scope=SCOPE))
        except Exception as exc:  # reaching the caller is the failure the tests look for
            os.write(fd, f"err\t{type(exc).__name__}: {exc}\n".encode())
            continue
        latencies.append((time.perf_counter() - started) * 1000)
        os.write(fd, f"ack\t{result.status}\t{result.memory.id}\t{content}\n".encode())
    store.close()
    os.close(fd)
    print(json.dumps({"writer": writer, "latencies_ms": latencies}))


def read(db: str, seconds: float) -> None:
    store = MemoryStore(db, HashEmbedder(), tokens.counter())
    config = configs.defaults()
    view = pipeline.View("rel", SCOPE, ["python"])
    queries = ["cache layer limits", "what did we decide about linters", "fact 17", "push"]
    done = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        query = queries[done % len(queries)]
        mode = ("turn", "startup", "recall")[done % 3]
        pipeline.assemble(
            store, config, view, pipeline.Request(input=query, mode=mode, budget=2000)
        )
        done += 1
    store.close()
    print(json.dumps({"reads": done}))


def main() -> None:
    command, args = sys.argv[1], sys.argv[2:]
    if command in ("write", "write-deferred"):
        seed = int(args[4]) if len(args) > 4 else 0
        write(args[0], args[1], int(args[2]), args[3], seed, command == "write-deferred")
    elif command == "read":
        read(args[0], float(args[1]))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
