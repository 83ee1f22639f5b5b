"""Targets (SPEC §8, reported — never asserted), the text tables, and the docs/benchmarks.md
section, all from the bench JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
NOTES_START, NOTES_END = "<!-- bench:analysis:start -->", "<!-- bench:analysis:end -->"
"""A hand-written analysis between these markers survives regeneration of the section."""
MB = 1024 * 1024


def _size_row(data: dict[str, Any], size: int) -> dict[str, Any] | None:
    return next((s for s in data["sizes"] if s["size"] == size), None)


def _target(figure: str, target: str, value: float | None, ok: bool | None) -> dict[str, Any]:
    return {"figure": figure, "target": target, "value": value, "met": ok}


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each SPEC §8 speed target with the measured value and met / missed / not measured."""
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
        stdio = row.get("stdio") or {}
        daemon = stdio.get("firstContextSeconds")
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
                f"cold start, `nous context` process, {_k(row['size'])} (s)",
                "≤ 1.5",
                cli,
                None if cli is None else cli <= 1.5,
            )
        )
    for row in data["sizes"]:
        rate = row["build"]["write_per_s"] if row["build"]["sample"] else None
        out.append(
            _target(
                f"write throughput, batches of 100, {_k(row['size'])} (memories/s)",
                "≥ 200",
                rate,
                None if rate is None else rate >= 200,
            )
        )
    harvest = data.get("harvest") or {}
    rate = harvest.get("perSecond")
    out.append(
        _target(
            "harvest throughput (memories/s)", "≥ 200", rate, None if rate is None else rate >= 200
        )
    )
    row = _size_row(data, 100_000)
    rss = _rss(row) if row else None
    out.append(
        _target("resident memory at 100k (MB)", "≤ 400", rss, None if rss is None else rss <= 400)
    )
    return out


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


def tables(data: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) for every table of the report."""
    sizes = data["sizes"]
    out: list[tuple[str, list[str], list[list[str]]]] = []

    rows = []
    for s in sizes:
        b = s["build"]
        rows.append(
            [
                _k(s["size"]),
                _f(b["memories"]),
                _f(b["db_bytes"] / MB),
                _f(b["mean_tokens"]),
                f"{b['token_range'][0]}–{b['token_range'][1]}",
                _f(b["bulk_real_own"]),
                _f(b["bulk_variants"]),
                _f(b["sample"] + b["single"]),
                _f(b["bulk_seconds"]),
                _f(b["index_load_seconds"], 3),
            ]
        )
    out.append(
        (
            "Memory sets",
            [
                "size",
                "memories",
                "DB MB",
                "mean tokens",
                "tokens",
                "bulk: own real vector",
                "bulk: variant (pool vector)",
                "written with the model",
                "bulk write s",
                "index load s",
            ],
            rows,
        )
    )

    rows = []
    for s in sizes:
        c, r = s["context"], s["recall"]
        stdio = s.get("stdio") or {}
        st = stdio.get("turn") or {}
        rows.append(
            [
                _k(s["size"]),
                *(_f(c["turn"][p]) for p in ("p50", "p95", "p99")),
                *(_f(c["startup"][p]) for p in ("p50", "p95", "p99")),
                *(_f(r[p]) for p in ("p50", "p95", "p99")),
                _f(st.get("p50")),
                _f(st.get("p95")),
            ]
        )
    out.append(
        (
            "Warm latency, ms (in-process Engine, the daemon's code; stdio = pygls client → "
            "`nous serve`)",
            [
                "size",
                "turn p50",
                "turn p95",
                "turn p99",
                "startup p50",
                "startup p95",
                "startup p99",
                "recall p50",
                "recall p95",
                "recall p99",
                "stdio turn p50",
                "stdio turn p95",
            ],
            rows,
        )
    )

    rows = []
    for s in sizes:
        fl = s["floors"]
        rows.append(
            [
                _k(s["size"]),
                _f(fl["embedQuery"]["p50"], 2),
                _f(fl["topK"]["p50"], 2),
                _f(fl["countRendered"]["p50"], 3),
                _f(fl["sumP50"], 2),
                _f(s["context"]["turn"]["p50"]),
                _f(s["ratio"], 1),
            ]
        )
    out.append(
        (
            "Floors, ms (p50, measured in the same run)",
            [
                "size",
                "embed query",
                f"numpy top-{sizes[0]['floors']['k'] if sizes else 60}",
                "tiktoken count of context",
                "sum",
                "context turn p50",
                "context p50 / sum",
            ],
            rows,
        )
    )

    rows = []
    for s in sizes:
        cold = s.get("cold") or {}
        cli = cold.get("cli") or {}
        probe = cold.get("probe") or {}
        stdio = s.get("stdio") or {}
        rows.append(
            [
                _k(s["size"]),
                _f(cli.get("median"), 2),
                _f(cli.get("runs")),
                _f(probe.get("importSeconds"), 2),
                _f(probe.get("modelLoadSeconds"), 2),
                _f(probe.get("storeOpenSeconds"), 2),
                _f(probe.get("firstContextSeconds"), 2),
                _f(stdio.get("initializeSeconds"), 2),
                _f(stdio.get("firstContextSeconds"), 2),
            ]
        )
    out.append(
        (
            "Cold start, s",
            [
                "size",
                "`nous context` launch → answer (median)",
                "runs",
                "probe: imports",
                "model load",
                "store + index open",
                "first context",
                "daemon: initialize",
                "daemon: launch → first context",
            ],
            rows,
        )
    )

    rows = []
    for s in sizes:
        b = s["build"]
        probe = (s.get("cold") or {}).get("probe") or {}
        stdio = s.get("stdio") or {}
        rows.append(
            [
                _k(s["size"]),
                _f(b["write_per_s"]),
                _f(b["sample"]),
                _f(b["single_per_s"]),
                _f(b["single"]),
                _f(probe.get("rssAfterWarmMb")),
                _f(probe.get("peakRssMb")),
                _f(stdio.get("daemonRssMb")),
                _f(b["db_bytes"] / MB),
            ]
        )
    out.append(
        (
            "Writes and memory",
            [
                "size",
                "write/s (batches of 100, model)",
                "n",
                "remember/s (one at a time)",
                "n",
                "probe RSS MB",
                "probe peak MB",
                "daemon RSS MB",
                "DB MB",
            ],
            rows,
        )
    )

    h = data.get("harvest") or {}
    if h and "skipped" not in h and "error" not in h:
        out.append(
            (
                "Harvest (Engine.harvest, real model, empty database)",
                [
                    "workspace",
                    "files",
                    "created",
                    "confirmed",
                    "s",
                    "memories/s",
                    "unchanged re-harvest s",
                ],
                [
                    [
                        h["workspace"],
                        _f(h["files"]),
                        _f(h["created"]),
                        _f(h["confirmed"]),
                        _f(h["seconds"], 2),
                        _f(h["perSecond"]),
                        _f(h["unchangedSeconds"], 2),
                    ]
                ],
            )
        )

    rows = [
        [
            t["figure"],
            t["target"],
            _f(t["value"], 2) if isinstance(t["value"], float) else _f(t["value"]),
            _met(t["met"]),
        ]
        for t in data["targets"]
    ]
    out.append(
        ("Targets (SPEC §8; reported, not asserted)", ["figure", "target", "measured", ""], rows)
    )
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
        "Generated by `nous bench` from its JSON; SPEC §8 targets are reported beside, never "
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
    kept = _between(_between(current, START, END) or "", NOTES_START, NOTES_END)
    if kept and kept.strip():
        block = block.replace(f"{NOTES_START}\n{NOTES_END}", f"{NOTES_START}{kept}{NOTES_END}")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Benchmarks\n\n{block}\n", encoding="utf-8")
        return
    if START in current and END in current and current.index(START) < current.index(END):
        head, rest = current.split(START, 1)
        tail = rest.split(END, 1)[1]
        path.write_text(head + block + tail, encoding="utf-8")
    else:
        path.write_text(current.rstrip() + "\n\n" + block + "\n", encoding="utf-8")


def _between(text: str, start: str, end: str) -> str | None:
    if start in text and end in text.split(start, 1)[1]:
        return text.split(start, 1)[1].split(end, 1)[0]
    return None
