"""A fresh process that opens a prepared database like the daemon does and reports where its
start-up time and memory go: `python -m nous.bench.probe --db FILE --workspace DIR`.

Prints one JSON object: import, model load, store open (vector index load), first context, and
resident memory (VmRSS) after the first answer and after `--queries` more warm turns, plus the
peak (VmHWM).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

STARTED = time.perf_counter()


def rss_mb() -> dict[str, float]:
    """Resident and peak resident memory of this process in MiB (/proc, else getrusage)."""
    out: dict[str, float] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out["rss" if key == "VmRSS" else "peak"] = round(int(value.split()[0]) / 1024, 1)
    except OSError:
        pass
    if "peak" not in out:
        out["peak"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out.setdefault("rss", out["peak"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nous.bench.probe")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--input", default="why do we use PostgreSQL for the order service?")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    from nous.bench import corpus
    from nous.bench.measure import turn_params
    from nous.context import chat
    from nous.engine import Engine
    from nous.memory.embedder import default_embedder
    from nous.protocol import ContextParams
    from nous.settings import Settings
    from nous.text import tokens

    t1 = time.perf_counter()
    embedder = default_embedder()
    t2 = time.perf_counter()
    settings = Settings(db=args.db, capture=False)  # the figures are the answer's, not the write's
    tokens.counter(settings.encoding)
    t_counter = time.perf_counter()
    engine = Engine(settings, args.workspace, embedder=embedder)
    engine.store  # noqa: B018 — open the store and load the vector index now
    t3 = time.perf_counter()
    first = chat.context(engine, ContextParams(input=args.input, mode="turn"))
    t4 = time.perf_counter()
    after_first = rss_mb()
    for i, q in enumerate(corpus.queries(args.queries, seed=23)):
        chat.context(engine, turn_params(i, q))
    after_warm = rss_mb()
    json.dump(
        {
            "importSeconds": round(t1 - t0, 3),
            "modelLoadSeconds": round(t2 - t1, 3),
            "encodingLoadSeconds": round(t_counter - t2, 3),
            "storeOpenSeconds": round(t3 - t_counter, 3),
            "firstContextSeconds": round(t4 - t3, 3),
            "mainToFirstContextSeconds": round(t4 - STARTED, 3),
            "firstContextTokens": first.tokens,
            "rssAfterFirstMb": after_first["rss"],
            "rssAfterWarmMb": after_warm["rss"],
            "peakRssMb": after_warm["peak"],
            "liveVectors": engine.store.vector_count(),
        },
        sys.stdout,
    )
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
