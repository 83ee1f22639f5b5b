"""`nous bench`: build a synthetic memory set per size and measure latency, cold start, writes,
harvest, resident memory and database size, with the floors measured in the same run.

    nous bench [--sizes 1000,10000,100000] [--queries N] [--json] [--out FILE] [--docs FILE]

Progress goes to stderr; the tables (or `--json`) to stdout. design §8 targets are printed beside
the numbers and never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DEFAULT_SIZES = "1000,10000,100000"


def _sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        if not part:
            continue
        scale = 1000 if part.endswith("k") else 1
        try:
            value = int(float(part.rstrip("k")) * scale)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"not a size: {part!r}") from exc
        if value < 20:
            raise argparse.ArgumentTypeError(f"sizes must be at least 20, got {value}")
        out.append(value)
    if not out:
        raise argparse.ArgumentTypeError("no sizes given")
    return out


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be ≥ 0, got {text}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=_sizes(DEFAULT_SIZES),
        help=f"memory-set sizes, comma-separated, 10k allowed (default {DEFAULT_SIZES})",
    )
    parser.add_argument(
        "--queries",
        type=_count,
        default=200,
        help="requests per kind (turn, startup, recall) and size (default 200)",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument(
        "--docs",
        type=Path,
        help="write the speed section of this markdown file (between bench markers)",
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        metavar="FILE",
        help="do not run: render the tables (and --docs) from a saved JSON",
    )
    parser.add_argument(
        "--write-sample",
        type=_count,
        default=1000,
        help="memories written with the real model in batches (default 1000)",
    )
    parser.add_argument(
        "--single",
        type=_count,
        default=100,
        help="memories remembered one at a time with the model (default 100)",
    )
    parser.add_argument(
        "--pool",
        type=_count,
        default=10_000,
        help="distinct texts with their own real embedding (default 10000)",
    )
    parser.add_argument(
        "--cold-runs",
        type=_count,
        default=3,
        help="`nous context` cold processes per size (default 3)",
    )
    parser.add_argument(
        "--harvest-scale",
        type=float,
        default=1.0,
        help="size of the synthetic harvest workspace (1.0 = 150 rules, 40 ADRs, 300 commits)",
    )
    parser.add_argument(
        "--skip", default="", help="comma-separated parts to skip: cold, stdio, harvest, repos"
    )
    parser.add_argument(
        "--repos",
        default="",
        metavar="NAMES",
        help="comma-separated repositories of the evaluation set to harvest (default: all of "
        "shared/eval/repos; found like `nous eval`, --skip repos to leave out)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile the turn requests at each size (a separate pass)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build the databases in DIR and keep them (default: a temp dir)",
    )
    parser.add_argument("--seed", type=int, default=7, help="memory-set seed (default 7)")
    parser.add_argument(
        "--team",
        action="store_true",
        help="only the team-store benchmark: PostgreSQL + pgvector (started with pgserver) "
        "beside SQLite at --sizes (nous.bench.team)",
    )
    parser.add_argument(
        "--watcher",
        type=_count,
        default=0,
        metavar="FILES",
        help="also run the watcher benchmark on a generated tree of FILES files, 70%% of them in "
        "node_modules (e.g. 100000; default: skip)",
    )


def run(args: argparse.Namespace) -> int:
    from nous.bench import report

    if args.team:
        from nous.bench import team

        found = team.run(args)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(found, indent=2) + "\n", "utf-8")
        sys.stdout.write(json.dumps(found, indent=2) + "\n" if args.json else team.markdown(found))
        return 0
    if args.from_json:
        data: dict[str, Any] = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        data["targets"] = report.targets(data)  # the targets as this version states them
    else:
        try:
            data = bench(args)
        except KeyboardInterrupt:
            return 130
    if args.out and not args.from_json:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    if args.docs:
        report.update_docs(args.docs, report.markdown(data))
    if args.json:
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report.text(data))
    return 0


def _say(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _own_scope(db: Path, ws: Path, embedder: Any, counter: Any) -> None:
    """The corpus writes `project:orderflow`; scopes are `project:<key>` of the workspace (design
    §4), so the bench workspace takes those rows the way an upgraded store's folder does."""
    from nous.bench.corpus import PROJECT
    from nous.memory.store import MemoryStore
    from nous.workspace import identity

    store = MemoryStore(db, embedder, counter)
    try:
        store.projects.claim(identity.resolve(ws).key, PROJECT, (PROJECT,))
    finally:
        store.close()


def bench(args: argparse.Namespace) -> dict[str, Any]:
    import shutil
    import tempfile

    from nous import settings
    from nous.bench import build, cold, corpus, harvest, measure, report, repos, stdio
    from nous.engine import Engine
    from nous.measurement import machine
    from nous.memory.embedder import default_embedder
    from nous.settings import Settings
    from nous.text import tokens

    loaded, problems = settings.load(env=settings.environment())  # the one read
    for problem in problems:
        _say(f"warning: {problem}")
    settings.install(loaded)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    unknown = skip - {"cold", "stdio", "harvest", "repos"}
    if unknown:
        raise SystemExit(f"nous bench: error: unknown --skip part(s): {', '.join(sorted(unknown))}")
    repo_names = [n.strip() for n in args.repos.split(",") if n.strip()]
    if "repos" not in skip:
        repos.check(repo_names, loaded.eval_data)
    overrides = {"encoding": args.encoding} if getattr(args, "encoding", None) else {}
    encoding = Settings(**overrides).encoding
    counter = tokens.counter(encoding)
    real = default_embedder()
    the_corpus = corpus.Corpus(counter, seed=args.seed, pool=max(1, args.pool))
    pool = build.Pool(the_corpus, real)
    root = args.keep or Path(tempfile.mkdtemp(prefix="nous-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    ws = corpus.make_workspace(root)
    pool_file = root / f"pool-{pool.fingerprint()}.npz" if args.keep else None
    reused = pool.load(pool_file) if pool_file else 0
    if reused:
        _say(f"reusing {reused:,} real embeddings of pool texts from {pool_file}")
    turns = corpus.queries(args.queries)
    files = corpus.active_files(args.queries)
    recalls = corpus.recall_queries(args.queries)
    sizes_out: list[dict[str, Any]] = []
    data: dict[str, Any] = {
        "nous": __import__("nous").__version__,
        "date": machine.now(),
        "commit": machine.commit(),
        "command": "nous bench "
        + " ".join(sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:]),
        "machine": machine.describe(),
        "settings": {
            "queries": args.queries,
            "warmup": measure.WARMUP,
            "seed": args.seed,
            "pool": the_corpus.pool,
            "writeSample": args.write_sample,
            "single": args.single,
            "model": real.name,
            "encoding": encoding,
            "workspace": "orderflow (python, typescript)",
            "turnsPerSession": measure.TURNS_PER_SESSION,
            "poolVectorsReused": reused,
        },
        "sizes": sizes_out,
    }
    try:
        for size in args.sizes:
            db = root / f"bench-{size}.db"
            build.fresh_database(db)
            load_before = machine.load()
            _say(f"{size:,}: building the memory set")
            built = build.build(
                db, size, the_corpus, pool, real, counter, args.write_sample, args.single
            )
            if pool_file and pool.embedded:
                pool.save(pool_file)
            _own_scope(db, ws, real, counter)
            _say(
                f"{size:,}: built ({built.bulk_seconds:.1f} s bulk, "
                f"{built.write_per_s:.1f} writes/s acknowledged, {built.embed_per_s:.1f} "
                f"vectors/s); warm requests"
            )
            # The warm figures time the answer; the daemon keeps a chat turn after it has
            # answered (Engine.later), so turns are not kept here and the memory set stays put.
            engine = Engine(Settings(db=db, capture=False, **overrides), ws, embedder=real)
            try:
                warm = measure.warm(engine, turns, files, recalls)
                rendered = warm.pop("_rendered")
                floors = measure.floors(engine, turns, rendered, engine.config.scoring.candidates)
                profile = measure.profile(engine, turns) if args.profile else None
            finally:
                engine.store.close()
            row: dict[str, Any] = {
                "size": size,
                "build": built.as_dict(),
                "context": {"turn": warm["turn"], "startup": warm["startup"]},
                "recall": warm["recall"],
                "turnAnswers": warm["turnAnswers"],
                "floors": floors,
                "ratio": round(warm["turn"]["p50"] / floors["sumP50"], 2)
                if floors["sumP50"]
                else None,
            }
            if "cold" not in skip:
                _say(f"{size:,}: cold start")
                row["cold"] = {
                    "cli": cold.cli_cold(db, ws, args.cold_runs),
                    "probe": cold.probe(db, ws, 20),
                }
            if "stdio" not in skip:
                _say(f"{size:,}: stdio run")
                row["stdio"] = stdio.run(db, ws, turns)
            if profile:
                row["profile"] = profile
            row["loadAverage"] = {"before": load_before, "after": machine.load()}
            sizes_out.append(row)
        if "harvest" not in skip:
            _say("harvest")
            scale = max(0.01, args.harvest_scale)
            data["harvest"] = harvest.measure(
                root,
                real,
                rules=max(4, int(150 * scale)),
                adrs=max(1, int(40 * scale)),
                sections=max(1, int(12 * scale)),
                commits=max(1, int(300 * scale)),
            )
        if "repos" not in skip:
            _say("harvest of the evaluation repositories")
            data["repos"] = repos.measure(root, real, repo_names or None, loaded.eval_data)
        if args.watcher:
            from nous.bench import watch

            _say(f"watcher: {args.watcher:,}-file tree")
            data["watcher"] = watch.measure(root, args.watcher)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    data["setDescription"] = describe_set(data, the_corpus.pool, args.write_sample, args.single)
    data["targets"] = report.targets(data)
    return data


def describe_set(data: dict[str, Any], pool: int, sample: int, single: int) -> str:
    """Exactly how the memory sets were built (printed with every report)."""
    parts = []
    for s in data["sizes"]:
        b = s["build"]
        parts.append(
            f"{b['size']:,}: {b['bulk_real_own']:,} bulk memories with the real vector "
            f"of their own text, {b['bulk_variants']:,} bulk variants carrying the real "
            f"vector of the pool text they vary, {b['sample'] + b['single']:,} written "
            "with the model"
        )
    return (
        f"Synthetic set (seed {data['settings']['seed']}): 9 kinds, 10 scopes (this project 46%, "
        "its languages python/typescript 21%, universal 11%, go/rust 6%, four other projects "
        "16%), 20–300 tiktoken tokens per memory from a software-engineering vocabulary "
        "(components, stores, queues, libraries, files, functions, errors, commands, people, "
        "dates), mixed lifecycle states, creation dates spread over 540 days. Memories "
        f"0–{pool - 1:,} are distinct texts; memory i ≥ {pool:,} is a variant of memory "
        f"i mod {pool:,} (same sentence skeleton and topic words, new identifiers, numbers, "
        "dates and a ticket reference). Every memory goes through MemoryStore.remember_many / "
        f"remember (normalise, secret scan, renderings, FTS, vector index). The last {sample:,} "
        f"(batches of 100) and {single:,} (one at a time) memories of each set are embedded by "
        "the real model while timed — the write figures; the vectors of the rest (bulk) are real "
        "model embeddings computed once and looked up by text. Per size: " + "; ".join(parts) + "."
    )
