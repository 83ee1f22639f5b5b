"""`nous eval`: retrieval quality on LoCoMo and BEIR SciFact (design §9), Nous beside dense-only
and BM25-only run in the same store; and on the real-repository development set beside a BM25
baseline over the same files' sections.

    nous eval locomo|scifact [--split dev|test] [--limit N] [--systems nous,dense,bm25]
                             [--json] [--out FILE] [--docs FILE] [--data DIR]
    nous eval fusion [--limit N] [--json] [--out FILE] [--docs FILE]   # development split only
    nous eval repos [--repos a,b] [--limit N] [--json] [--out FILE] [--docs FILE] [--data DIR]
    nous eval judge [--split dev|test] [--limit N] [--json] [--out FILE] [--docs FILE]
    nous eval docs FILE... --docs docs/benchmarks.md                  # render saved JSON

Progress goes to stderr; the tables (or `--json`) to stdout. The held-out split (`--split test`)
is for reporting only: never tune on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SYSTEM_NAMES = ("nous", "dense", "bm25")


def _systems(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in names if s not in SYSTEM_NAMES]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown system(s) {', '.join(bad) or '(none)'}: use {','.join(SYSTEM_NAMES)}"
        )
    return list(dict.fromkeys(names))


def _names(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one repository name")
    return list(dict.fromkeys(names))


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset",
        choices=("locomo", "scifact", "fusion", "repos", "judge", "docs"),
        help="locomo, scifact, fusion (compare fusion variants on both dev splits), repos (the "
        "real-repository development set), judge (the feedback reference judge on LoCoMo's QA, "
        "beside the old word-overlap judge; dev also prints a fresh fit), or docs (render saved "
        "JSON files into --docs)",
    )
    parser.add_argument("inputs", nargs="*", type=Path, help="for `docs`: saved JSON results")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument(
        "--limit",
        type=_positive,
        help="only the first N questions / queries of the split (repos: of each repository)",
    )
    parser.add_argument(
        "--repos", type=_names, help="repos: comma-separated repository names (default all)"
    )
    parser.add_argument(
        "--variant", choices=("full", "mini"), default="full",
        help="repos: the full copies, or the mini variants (root instruction files, CONTRIBUTING "
        "and the questions' expected files)",
    )  # fmt: skip
    parser.add_argument(
        "--loo", action="store_true",
        help="repos: score each tune repository with the gate fitted on the other five",
    )  # fmt: skip
    parser.add_argument(
        "--tiny", action="store_true", help="repos: the tiny workspaces (evaluation/tiny.py)"
    )
    parser.add_argument(
        "--gate-rows", type=Path,
        help="repos --loo: the gate's feature rows saved by `scripts/fit-gate --rows` (else "
        "computed here)",
    )  # fmt: skip
    parser.add_argument(
        "--gate-fit", type=Path,
        help="repos --loo: the JSON of `scripts/fit-gate --floors`: each fold's floors as the "
        "pipeline chose them leave-one-out (else the row-level choice)",
    )  # fmt: skip
    parser.add_argument(
        "--systems",
        type=_systems,
        default=list(SYSTEM_NAMES),
        help="comma-separated: nous,dense,bm25 (default all)",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument(
        "--docs", type=Path, help="update this markdown file between the eval markers"
    )
    parser.add_argument(
        "--data",
        type=Path,
        help="evaluation data folder (default: ../shared/eval; for repos also the repos/ folder)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        help="where the SciFact corpus store is cached (default: NOUS_EVAL_CACHE or the user "
        "cache dir)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="build the SciFact store afresh, keep nothing"
    )
    parser.add_argument(
        "--corpus-sample",
        type=_positive,
        metavar="N",
        help="SciFact: index only the chosen queries' relevant abstracts plus N others",
    )
    parser.add_argument(
        "--format",
        default=None,
        help="LoCoMo turn text: colon, said, said-shared, dated, date-first (default dated)",
    )


def _machine() -> dict[str, Any]:
    from nous.evaluation import report

    return report.machine()


def _evaluate(args: argparse.Namespace) -> dict[str, Any]:
    from nous.evaluation import data as datasets
    from nous.evaluation import locomo, scifact
    from nous.memory.embedder import default_embedder
    from nous.text import tokens

    root = datasets.data_dir(args.data)
    counter = tokens.counter(args.encoding) if args.encoding else tokens.counter()
    embedder = default_embedder()
    if args.dataset == "repos":
        from nous.evaluation import repos

        if args.split != "dev":
            raise datasets.EvalDataError("the repository set is a development set: no --split")
        if args.tiny:
            import tempfile

            from nous.evaluation import tiny

            with tempfile.TemporaryDirectory(prefix="nous-tiny-") as tmp:
                questions = tiny.write(Path(tmp))
                result = repos.run(Path(tmp), questions, embedder, counter.name, args.repos,
                                   args.limit)  # fmt: skip
            return result | {"variant": "tiny"}
        path = datasets.repos_dir(root)
        gates = None
        names = args.repos
        if args.loo:
            from nous.evaluation import gate_fit

            if args.gate_rows:
                rows = json.loads(args.gate_rows.read_text(encoding="utf-8"))
            else:
                rows = gate_fit.rows(path, embedder, datasets.TUNE)
            gates = gate_fit.fold_gates(rows)
            if args.gate_fit:
                chosen = json.loads(args.gate_fit.read_text(encoding="utf-8"))
                keys = ("startup", "recall", "turn", "recall_relative", "turn_relative", "sibling")
                for repo, fold in chosen.get("floors", {}).get("folds", {}).items():
                    if repo in gates:
                        gates[repo] |= {k: fold[k] for k in keys if k in fold}
            names = [n for n in (args.repos or datasets.TUNE) if n in datasets.TUNE]
        return repos.run(
            path, datasets.load_repo_questions(path), embedder, counter.name, names,
            args.limit, args.variant, gates,
        )  # fmt: skip
    if args.dataset == "judge":
        from nous.context import config as configs
        from nous.evaluation import judge_fit

        return judge_fit.run(
            datasets.load_locomo(root), args.split, embedder, configs.defaults(), args.limit
        )
    if args.dataset == "locomo":
        fmt = args.format or locomo.DEFAULT_FORMAT
        if fmt not in locomo.FORMATS:
            raise datasets.EvalDataError(
                f"unknown --format {fmt!r}: use one of {', '.join(locomo.FORMATS)}"
            )
        return locomo.run(
            datasets.load_locomo(root), args.split, args.systems, embedder, counter, fmt,
            args.limit,
        )  # fmt: skip
    cache = None if args.no_cache else scifact.cache_dir(args.cache)
    return scifact.run(
        datasets.load_scifact(root, args.split), args.split, args.systems, embedder, counter,
        args.limit, args.corpus_sample, cache,
    )  # fmt: skip


def _fusion(args: argparse.Namespace) -> dict[str, Any]:
    from nous.evaluation import data as datasets
    from nous.evaluation import fusion, locomo, scifact
    from nous.memory.embedder import default_embedder
    from nous.text import tokens

    if args.split != "dev":
        raise datasets.EvalDataError("fusion variants are compared on the dev split only")
    root = datasets.data_dir(args.data)
    counter = tokens.counter(args.encoding) if args.encoding else tokens.counter()
    cache = None if args.no_cache else scifact.cache_dir(args.cache)
    return fusion.compare(
        datasets.load_locomo(root), datasets.load_scifact(root, "dev"), default_embedder(),
        counter, args.format or locomo.DEFAULT_FORMAT, args.limit, args.corpus_sample, cache,
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    import time

    from nous import settings
    from nous.errors import NousError
    from nous.evaluation import report

    loaded, problems = settings.load(env=settings.environment())  # the one read
    for problem in problems:
        print(f"nous: warning: {problem}", file=sys.stderr)
    settings.install(loaded)
    args.data = args.data or loaded.eval_data
    args.cache = args.cache or loaded.eval_cache
    started = time.perf_counter()
    try:
        if args.dataset == "docs":
            if not args.inputs or not args.docs:
                print("nous: error: `nous eval docs` needs JSON files and --docs", file=sys.stderr)
                return 2
            for path in args.inputs:
                report.update_docs(args.docs, json.loads(path.read_text(encoding="utf-8")))
            return 0
        if args.inputs:
            print("nous: error: extra arguments (only `docs` takes files)", file=sys.stderr)
            return 2
        data = _fusion(args) if args.dataset == "fusion" else _evaluate(args)
    except NousError as exc:
        print(f"nous: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    data["seconds"] = round(time.perf_counter() - started, 1)
    data["command"] = (
        "nous eval " + " ".join(sys.argv[sys.argv.index("eval") + 1 :])
        if ("eval" in sys.argv)
        else f"nous eval {args.dataset}"
    )
    data["machine"] = _machine()
    data = report.rounded(data)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    if args.docs:
        report.update_docs(args.docs, data)
    if args.json:
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report.text(data))
    return 0
