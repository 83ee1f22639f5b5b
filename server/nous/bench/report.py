"""Targets (design §8, reported — never asserted), the text tables, and the docs/benchmarks.md
section, all from the bench JSON."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from nous.measurement.splice import between, splice

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
NOTES_START, NOTES_END = "<!-- bench:analysis:start -->", "<!-- bench:analysis:end -->"
"""A hand-written analysis between these markers survives regeneration of the section."""
MB = 1024 * 1024


def _size_row(data: dict[str, Any], size: int) -> dict[str, Any] | None:
    return next((s for s in data["sizes"] if s["size"] == size), None)


def _target(figure: str, target: str, value: float | None, ok: bool | None) -> dict[str, Any]:
    return {"figure": figure, "target": target, "value": value, "met": ok}


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each design §8 speed target with the measured value and met / missed / not measured."""
    out = []
    for size, limit in ((10_000, 50.0), (100_000, 150.0)):
        row = _size_row(data, size)
        for mode in ("turn", "startup"):
            value = row["context"][mode]["p95"] if row else None
            out.append(
                _target(
                    f"nous/context {mode} p95, warm, {size // 1000}k memories (ms)",
                    f"≤ {limit:g}",
                    value,
                    None if value is None else value <= limit,
                )
            )
    for row in data["sizes"]:
        ratio = row.get("ratio")
        out.append(
            _target(
                f"context turn p50 / sum of floors, {_k(row['size'])}",
                "≤ 3",  # issue 15's row: the pipeline's own work over the irreducible pieces
                ratio,
                None if ratio is None else ratio <= 3,
            )
        )
    for row in data["sizes"]:
        daemon = _daemon_cold(row)
        out.append(
            _target(
                f"cold start, daemon launch → first context, {_k(row['size'])} (s)",
                "≤ 1.5",
                daemon,
                None if daemon is None else daemon <= 1.5,
            )
        )
        cli = (row.get("cold") or {}).get("cli", {}).get("median")
        out.append(
            _target(
                f"one-shot `nous context` process, {_k(row['size'])} (s)",
                "≤ 1.0",  # design §8: a one-shot CLI command in a fresh process
                cli,
                None if cli is None else cli <= 1.0,
            )
        )
    for row in data["sizes"]:
        rate = row["build"]["write_per_s"] if row["build"]["sample"] else None
        out.append(
            _target(
                f"acknowledged writes, batches of 100, {_k(row['size'])} (memories/s)",
                "≥ 200",
                rate,
                None if rate is None else rate >= 200,
            )
        )
        embedded = row["build"].get("embed_per_s") if row["build"]["sample"] else None
        out.append(
            _target(
                f"background embedding, {_k(row['size'])} (memories/s)",
                "≥ 100",
                embedded,
                None if embedded is None else embedded >= 100,
            )
        )
    harvest = data.get("harvest") or {}
    rate = harvest.get("perSecond")
    out.append(
        _target(
            "harvest throughput (memories/s)", "≥ 200", rate, None if rate is None else rate >= 200
        )
    )
    for repo in (data.get("repos") or {}).get("repos", []):
        first = repo["firstAnswerSeconds"]
        out.append(
            _target(f"harvest of {repo['repo']} to first answer (s)", "≤ 5", first, first <= 5)
        )
    row = _size_row(data, 100_000)
    rss = _rss(row) if row else None
    out.append(
        _target("resident memory at 100k (MB)", "≤ 400", rss, None if rss is None else rss <= 400)
    )
    return out


def _daemon_cold(row: dict[str, Any]) -> float | None:
    """Daemon launch → first context answered, as the minimal client saw it (else pygls)."""
    stdio = row.get("stdio") or {}
    minimal = stdio.get("minimalClient") or {}
    value = minimal.get("firstContextSeconds", stdio.get("firstContextSeconds"))
    return float(value) if value is not None else None


def _rss(row: dict[str, Any]) -> float | None:
    """The daemon's RSS when the stdio run happened, else the probe process's."""
    stdio = row.get("stdio") or {}
    if stdio.get("daemonRssMb"):
        return float(stdio["daemonRssMb"])
    probe = (row.get("cold") or {}).get("probe") or {}
    value = probe.get("rssAfterWarmMb")
    return float(value) if value is not None else None


def _k(size: int) -> str:
    return f"{size // 1000}k" if size >= 1000 and size % 1000 == 0 else str(size)


def _f(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _met(ok: bool | None) -> str:
    return "not measured" if ok is None else "met" if ok else "MISSED"


Row = dict[str, Any]
Column = tuple[str, Callable[[Row], str]]


def _get(row: Row, *path: str) -> Any:
    """A nested value of a size row, or None anywhere along the path."""
    value: Any = row
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _col(header: str, *path: str, digits: int = 1) -> Column:
    return header, lambda row: _f(_get(row, *path), digits)


def _table(title: str, columns: list[Column], rows: list[Row]) -> Table:
    return title, [h for h, _ in columns], [[get(r) for _, get in columns] for r in rows]


Table = tuple[str, list[str], list[list[str]]]
SIZE: Column = ("size", lambda r: _k(r["size"]))


def _mb(*path: str) -> Callable[[Row], str]:
    return lambda r: _f(_get(r, *path) / MB if _get(r, *path) is not None else None)


def tables(data: dict[str, Any]) -> list[Table]:
    """(title, header, rows) for every table of the report."""
    sizes: list[Row] = data["sizes"]
    out = [
        _table("Memory sets", [
            SIZE, _col("memories", "build", "memories"), ("DB MB", _mb("build", "db_bytes")),
            _col("mean tokens", "build", "mean_tokens"),
            ("tokens", lambda r: "–".join(str(t) for t in r["build"]["token_range"])),
            _col("bulk: own real vector", "build", "bulk_real_own"),
            _col("bulk: variant (pool text's vector)", "build", "bulk_variants"),
            ("embedded while writing", lambda r: _f(r["build"]["sample"] + r["build"]["single"])),
            _col("bulk write s", "build", "bulk_seconds"),
            _col("store open s", "build", "index_load_seconds", digits=3),
        ], sizes),
        _table("Warm latency, ms (in-process `Engine`: the code the daemon runs)", [
            SIZE,
            *(_col(f"turn {p}", "context", "turn", p) for p in ("p50", "p95", "p99")),
            *(_col(f"startup {p}", "context", "startup", p) for p in ("p50", "p95", "p99")),
            *(_col(f"recall {p}", "recall", p) for p in ("p50", "p95", "p99")),
            _col("turn answer tokens", "turnAnswers", "meanTokens"),
        ], sizes),
        _table("Over stdio, `nous serve` (turn requests; ms unless noted)", [
            SIZE, _col("pygls client p50", "stdio", "turn", "p50"),
            _col("pygls p95", "stdio", "turn", "p95"),
            _col("minimal client p50", "stdio", "minimalClient", "turn", "p50"),
            _col("minimal p95", "stdio", "minimalClient", "turn", "p95"),
            _col("in-process p50", "context", "turn", "p50"),
            _col("answer bytes (median)", "stdio", "minimalClient", "answerBytesMedian"),
            _col("daemon RSS MB", "stdio", "daemonRssMb"),
        ], sizes),
        _table("Floors, ms (p50 over the same queries, same run)", [
            SIZE, _col("embed query", "floors", "embedQuery", "p50", digits=2),
            ("numpy top-k", lambda r: _f(_get(r, "floors", "topK", "p50"), 2)
             + f" (k={_get(r, 'floors', 'k')})"),
            _col("tiktoken count of context", "floors", "countRendered", "p50", digits=3),
            _col("sum of floors", "floors", "sumP50", digits=2),
            _col("context turn p50", "context", "turn", "p50"),
            _col("context p50 / floors", "ratio"),
        ], sizes),
        _table("Cold start, s", [
            SIZE, _col("`nous context` process (median)", "cold", "cli", "median", digits=2),
            _col("runs", "cold", "cli", "runs"),
            _col("probe: imports", "cold", "probe", "importSeconds", digits=2),
            _col("model load", "cold", "probe", "modelLoadSeconds", digits=2),
            _col("encoding load", "cold", "probe", "encodingLoadSeconds", digits=2),
            _col("store + index open", "cold", "probe", "storeOpenSeconds", digits=2),
            _col("first context", "cold", "probe", "firstContextSeconds", digits=2),
            _col("daemon: initialize", "stdio", "minimalClient", "initializeSeconds", digits=2),
            _col("daemon: launch → first context", "stdio", "minimalClient",
                 "firstContextSeconds", digits=2),
            _col("same, pygls client", "stdio", "firstContextSeconds", digits=2),
        ], sizes),
        _table("Writes and memory", [
            SIZE, _col("acknowledged write/s (batches of 100)", "build", "write_per_s"),
            _col("vectors/s (background, model)", "build", "embed_per_s"),
            _col("n", "build", "sample"),
            _col("remember/s (one at a time)", "build", "single_per_s"),
            _col("n", "build", "single"),
            _col("probe RSS MB (after 20 turns)", "cold", "probe", "rssAfterWarmMb"),
            _col("probe peak MB", "cold", "probe", "peakRssMb"),
            _col("daemon RSS MB", "stdio", "daemonRssMb"),
            ("DB MB", _mb("build", "db_bytes")),
        ], sizes),
    ]  # fmt: skip
    h = data.get("harvest") or {}
    if h and "skipped" not in h and "error" not in h:
        out.append(_table("Harvest (`Engine.harvest`, real model, empty database)", [
            _col("workspace", "workspace"), _col("files", "files"), _col("created", "created"),
            _col("confirmed", "confirmed"), _col("s (acknowledged)", "seconds", digits=2),
            _col("memories/s", "perSecond"),
            _col("s to last vector", "vectorsSeconds", digits=2),
            _col("unchanged re-harvest s", "unchangedSeconds", digits=2),
        ], [h]))  # fmt: skip
    r = (data.get("repos") or {}).get("repos")
    if r:
        out.append(_table("Harvest of the evaluation repositories (real model, empty database, "
                          "vectors deferred; first answer asked at once)", [
            _col("repository", "repo"), _col("files", "files"), _col("memories", "memories"),
            _col("s (acknowledged)", "harvestSeconds", digits=2),
            _col("s to first answer", "firstAnswerSeconds", digits=2),
            _col("answer tokens", "firstAnswerTokens"),
            _col("vectors pending then", "pendingAtFirstAnswer"),
            _col("s to last vector", "lastVectorSeconds", digits=2),
        ], r))  # fmt: skip
    w = data.get("watcher") or {}
    if w:
        storm = w.get("storm") or {}
        out.append(("Watcher (generated tree, 70% of it in node_modules)", [
            "files", "watched files", "walk s", "ready s", "inotify watches", "idle CPU %",
            "RSS MB", "renames + recreated", "index = fresh walk", "settle s",
        ], [[
            f"{w['files']:,}", f"{w['indexed']:,}", _f(w["walkSeconds"], 2),
            _f(w["readySeconds"], 2), str(w["watches"]), _f(w.get("idleCpuPercent"), 2),
            _f(w.get("rssMb"), 1),
            f"{storm.get('renamed', 0):,} + {storm.get('recreatedFiles', 0):,}",
            str(storm.get("indexEqualsFreshWalk")), _f(storm.get("settleSeconds"), 2),
        ]]))  # fmt: skip
    rows = [[t["figure"], t["target"], _f(t["value"], 2), _met(t["met"])] for t in data["targets"]]
    out.append(("Targets (design §8; reported, not asserted)", ["figure", "target", "measured", ""],
                rows))  # fmt: skip
    return out


def notes(data: dict[str, Any]) -> list[str]:
    out = [data["setDescription"]]
    for s in data["sizes"]:
        stdio = s.get("stdio") or {}
        if "skipped" in stdio:
            out.append(f"{_k(s['size'])}: stdio figures skipped: {stdio['skipped']}.")
        elif "error" in stdio:
            out.append(f"{_k(s['size'])}: stdio run failed: {stdio['error']}")
        cli = (s.get("cold") or {}).get("cli") or {}
        for error in cli.get("errors", []):
            out.append(f"{_k(s['size'])}: a cold `nous context` run failed: {error}")
        if s["build"]["bulk_lookup_misses"]:
            out.append(
                f"{_k(s['size'])}: {s['build']['bulk_lookup_misses']} bulk texts were not "
                "in the lookup table and were embedded with the model."
            )
    h = data.get("harvest") or {}
    if "skipped" in h or "error" in h:
        out.append(f"harvest: {h.get('skipped') or h.get('error')}")
    if "skipped" in (data.get("repos") or {}):
        out.append(f"evaluation repositories: {data['repos']['skipped']}")
    return out


def text(data: dict[str, Any]) -> str:
    lines = [
        f"nous bench — {data['date']} — {data['machine']['summary']}",
        f"command: {data['command']}",
        "",
    ]
    for title, header, rows in tables(data):
        lines += [title, *_aligned(header, rows), ""]
    lines += [f"note: {n}" for n in notes(data)]
    return "\n".join(lines) + "\n"


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()

    return [fmt(header), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)]


def markdown(data: dict[str, Any]) -> str:
    m = data["machine"]
    lines = [
        "## Speed, memory and scale (`nous bench`)",
        "",
        "Generated by `nous bench` from its JSON; design §8 targets are reported beside, never "
        "asserted. Regenerate this section with "
        "`nous bench --from-json bench.json --docs docs/benchmarks.md`.",
        "",
        f"- **Run**: {data['date']}, nous {data['nous']}, commit `{data.get('commit') or '?'}`",
        f"- **Machine**: {m['summary']}",
        f"- **Command**: `{data['command']}`",
        f"- **Requests per kind and size**: {data['settings']['queries']} (after "
        f"{data['settings']['warmup']} warm-up turns)",
        "",
    ]
    for title, header, rows in tables(data):
        lines += [
            f"### {title}",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(r) + " |" for r in rows),
            "",
        ]
    lines += ["### Notes", "", *(f"- {n}" for n in notes(data)), ""]
    lines += [NOTES_START, NOTES_END, ""]
    for s in data["sizes"]:
        prof = s.get("profile")
        if not prof:
            continue
        lines += [
            f"### Profile of the turn requests at {_k(s['size'])} (cProfile, "
            f"{prof['requests']} requests, {prof['wallMsPerRequest']} ms each under the "
            "profiler)",
            "",
            "| function | calls/request | own ms | cumulative ms |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| `{r['function']}` | {r['callsPerRequest']} | {r['ownMs']} | {r['cumMs']} |"
            for r in prof["byCumulative"][:20]
        ]
        lines.append("")
    return "\n".join(lines)


def update_docs(path: Path, section: str) -> None:
    """Replace the text between the bench markers (create the file / markers when missing)."""
    block = f"{START}\n{section.rstrip()}\n{END}"
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    kept = between(between(current, START, END) or "", NOTES_START, NOTES_END)
    if kept and kept.strip():
        block = block.replace(f"{NOTES_START}\n{NOTES_END}", f"{NOTES_START}{kept}{NOTES_END}")
    splice(path, START, END, block)
