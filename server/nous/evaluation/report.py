"""Tables for the terminal and the quality section of docs/benchmarks.md, from the JSON (the
repository set's tables are in repos_report.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nous.evaluation import repos_report
from nous.evaluation.harness import rounded
from nous.measurement.machine import describe
from nous.measurement.splice import between, splice

__all__ = ["machine", "rounded", "text", "update_docs"]


def machine() -> dict[str, Any]:
    return describe()


# -- tables -------------------------------------------------------------------------------------

Table = tuple[list[str], list[list[str]]]

LOCOMO_REFERENCE = {
    "name": "DRAGON, dialog turns (LoCoMo paper, Table 3; all 10 conversations)",
    "R@5": 56.7,
    "R@10": 66.2,
    "R@25": 76.7,
    "categories": {  # R@5 / R@10 / R@25
        "single-hop": (68.0, 77.7, 87.1),
        "multi-hop": (35.4, 46.6, 62.5),
        "temporal": (70.4, 77.3, 83.5),
        "open-domain": (33.1, 40.8, 52.6),
        "adversarial": (43.9, 54.7, 66.3),
    },
}
SCIFACT_REFERENCES = [
    ("BM25 flat, Anserini (published, test split)", 0.6789, None, 0.9253),
    ("all-MiniLM-L6-v2, MTEB paper (published, test split)", 0.64508, 0.78333, 0.925),
]
SANITY = {
    "locomo": {"dense": (37.8, 47.7, 60.5), "bm25": (54.7, 62.8, 71.5), "rrf": (49.6, 59.0, 69.5)},
    "scifact": {"dense": (0.661, 0.932), "bm25": (0.701, 0.929), "rrf": (0.708, 0.955)},
}
"""shared/eval/README.md: an independent harness on the development split (`Speaker: text`)."""
SYSTEM_LABEL = {
    "nous": "nous (context.search.ranked)",
    "dense": "dense only (same model)",
    "bm25": "BM25 only (FTS5)",
}


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * float(value):.1f}"


def _num(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{float(value):.{digits}f}"


def _split_name(data: dict[str, Any]) -> str:
    if data["dataset"] == "scifact":
        held = "held-out" if data["split"] == "test" else "development"
        return f"{held} split ({data['qrels']} queries)"
    return "held-out split" if data["split"] == "test" else "development split"


def locomo_tables(data: dict[str, Any]) -> list[tuple[str, Table]]:
    systems = list(data["systems"])
    head = ["system", "R@5", "R@10", "R@25", "in 500 tokens", "in 2,000 tokens"]
    rows = [
        [SYSTEM_LABEL.get(s, s)]
        + [_pct(data["systems"][s].get(m)) for m in ("R@5", "R@10", "R@25", "B500", "B2000")]
        for s in systems
    ]
    if "nousRankedPacked" in data:
        packed = data["nousRankedPacked"]
        rows.append(
            ["nous ranking, packed like the baselines", "", "", "",
             _pct(packed.get("B500")), _pct(packed.get("B2000"))]
        )  # fmt: skip
    ref = LOCOMO_REFERENCE
    rows.append([str(ref["name"]), f"{ref['R@5']}", f"{ref['R@10']}", f"{ref['R@25']}", "", ""])
    out: list[tuple[str, Table]] = [
        (
            f"LoCoMo {_split_name(data)}: {data['questions']} questions, "
            f"{len(data['conversations'])} conversations, evidence recall %",
            (head, rows),
        )
    ]
    core = data.get("cat1to4") or {}
    if core:
        rows = [
            [SYSTEM_LABEL.get(s, s)]
            + [_pct(core[s].get(m)) for m in ("R@5", "R@10", "R@25", "B500", "B2000")]
            for s in systems
        ]
        out.append(
            (f"Categories 1–4 only ({data['questionsCat1to4']} questions, as Mem0/Zep/Letta "
             "count)", (head, rows))
        )  # fmt: skip
    cats = data.get("categories") or {}
    if cats:
        head2 = ["system (R@10)"] + [f"{c} ({v['n']})" for c, v in cats.items()]
        rows = [
            [SYSTEM_LABEL.get(s, s)] + [_pct(v["systems"][s]["R@10"]) for v in cats.values()]
            for s in systems
        ]
        categories = LOCOMO_REFERENCE["categories"]
        assert isinstance(categories, dict)
        rows.append(
            ["DRAGON (paper, all 10)"]
            + [f"{categories[c][1]}" if c in categories else "" for c in cats]
        )
        out.append(("R@10 by category", (head2, rows)))
        if all("nous" in v["systems"] for v in cats.values()):
            head3 = ["nous by category"] + [f"{c} ({v['n']})" for c, v in cats.items()]
            rows = [
                [label] + [_pct(v["systems"]["nous"].get(metric)) for v in cats.values()]
                for metric, label in (
                    ("R@5", "R@5"),
                    ("R@10", "R@10"),
                    ("R@25", "R@25"),
                    ("B500", "in 500 tokens"),
                    ("B2000", "in 2,000 tokens"),
                )
            ]
            title = "Nous by category: R@5, R@10, R@25, in 500 and 2,000 tokens"
            out.append((title, (head3, rows)))
    return out


def scifact_tables(data: dict[str, Any]) -> list[tuple[str, Table]]:
    head = ["system", "nDCG@10", "R@10", "R@100"]
    rows = [
        [SYSTEM_LABEL.get(s, s)] + [_num(v.get(m)) for m in ("nDCG@10", "R@10", "R@100")]
        for s, v in data["systems"].items()
    ]
    rows += [[name, _num(a), _num(b), _num(c)] for name, a, b, c in SCIFACT_REFERENCES]
    title = (
        f"SciFact {_split_name(data)}: {data['queries']} queries over {data['corpus']} abstracts"
    )
    return [(title, (head, rows))]


def fusion_tables(data: dict[str, Any], top: int = 15) -> list[tuple[str, Table]]:
    head = ["variant", "LoCoMo R@5", "R@10", "R@25", "SciFact nDCG@10", "R@100", "gain"]
    keep = {data["baseline"], "dense", "bm25"}
    rows = []
    for rank, row in enumerate(data["variants"], start=1):
        shipped = row["variant"].startswith("blend (pipeline")
        if rank > top and row["variant"] not in keep and not shipped:
            continue
        lo, sf = row["locomo"], row["scifact"]
        rows.append(
            [f"{rank}. {row['variant']}", _pct(lo["R@5"]), _pct(lo["R@10"]), _pct(lo["R@25"]),
             _num(sf["nDCG@10"]), _num(sf["R@100"]), f"{100 * row['gain']:+.1f}%"]
        )  # fmt: skip
    title = (
        f"Fusion variants, development split ({data['locomoQuestions']} LoCoMo questions, "
        f"{data['scifactQueries']} SciFact train queries); gain = mean relative change of "
        f"LoCoMo R@10 and SciFact nDCG@10 against `{data['baseline']}` (today's ranked)"
    )
    return [(title, (head, rows))]


def tables(data: dict[str, Any]) -> list[tuple[str, Table]]:
    kind = data["dataset"]
    if kind == "locomo":
        return locomo_tables(data)
    if kind == "scifact":
        return scifact_tables(data)
    if kind == "repos":
        return repos_report.tables(data)
    return fusion_tables(data)


def _aligned(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in [head, *rows]
    ]


def _timing_line(data: dict[str, Any]) -> str:
    if data["dataset"] == "repos":
        return repos_report.timing(data)
    t = data.get("timing") or {}
    parts = [f"total {data.get('seconds', '?')} s"]
    if data["dataset"] == "locomo":
        parts.append(f"building {_num(t.get('buildSeconds'), 1)} s "
                     f"({_num(t.get('turnsPerSecond'), 0)} turns/s)")  # fmt: skip
        parts += [f"{s} {_num(ms, 1)} ms/query" for s, ms in (t.get("queryMs") or {}).items()]
        parts.append(f"recall() {_num(t.get('recallMsPerCall'), 1)} ms/call")
    elif data["dataset"] == "scifact":
        how = "from the cache" if t.get("storeFromCache") else "built now"
        parts.append(f"corpus store {how} (build {_num(t.get('buildSeconds'), 0)} s)")
        parts += [f"{s} {_num(ms, 1)} ms/query" for s, ms in (t.get("queryMs") or {}).items()]
    else:
        parts.append(f"LoCoMo pass {_num(t.get('locomoSeconds'), 0)} s, "
                     f"SciFact pass {_num(t.get('scifactSeconds'), 0)} s")  # fmt: skip
    return "; ".join(parts)


def _notes(data: dict[str, Any]) -> list[str]:
    if data["dataset"] == "repos":
        return repos_report.notes(data)
    out = []
    if data["dataset"] == "locomo" and "nousPipeline" in data:
        pipe = data["nousPipeline"]
        out.append(
            "nous in-budget figures are `recall()` (the pipeline): mean "
            + ", ".join(
                f"{_num(v['meanItems'], 1)} items / {_num(v['meanTokens'], 0)} tokens at "
                f"{k.removeprefix('B')}"
                for k, v in pipe.items()
            )
            + "; dense and BM25 are their rankings packed best-first into the same budget."
        )
        out.append(f"turns stored as `{data['format']}`")
    if data["dataset"] == "fusion":
        out.append(f"winner: {data['winner']}")
        if data.get("beatBothSinglesOnBoth"):
            out.append(
                f"{len(data['beatBothSinglesOnBoth'])} variants beat both dense and BM25 on both "
                "datasets"
            )
    return out


def text(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for title, (head, rows) in tables(data):
        lines += [title, *_aligned(head, rows), ""]
    lines += _notes(data)
    if data["dataset"] == "repos":
        lines += ["", *repos_report.misses(data), ""]
    lines.append(_timing_line(data))
    return "\n".join(lines) + "\n"


# -- docs/benchmarks.md -------------------------------------------------------------------------

START, END = "<!-- eval:start -->", "<!-- eval:end -->"
ORDER = (
    "notes", "locomo-dev", "scifact-dev", "fusion-dev", "repos-dev", "locomo-test", "scifact-test",
)  # fmt: skip

INTRO = """## Retrieval quality (`nous eval`)

Generated from the JSON of `nous eval` runs (`scripts/eval locomo|scifact|fusion|repos --docs
docs/benchmarks.md`); each run replaces its own block below, the notes block is kept as written.
Data: `../shared/eval/` (LoCoMo locomo10.json, BEIR SciFact, repos/), never copied into the
repository.

- **Systems**, all over the same store and the same all-MiniLM-L6-v2 int8 model: `nous` =
  `context.search.ranked` (the hybrid retrieval the pipeline shares), `dense` =
  `MemoryStore.vector_search` only, `bm25` = `MemoryStore.text_search` only (FTS5 `porter
  unicode61`, OR of the non-stop words). Each returns its top 100.
- **LoCoMo**: one fresh store per conversation, each turn an `episode` memory (scope
  `universal`). Fractional evidence recall: per question, the share of its gold turn ids in the
  top k, averaged; questions without evidence skipped; malformed ids split (`D8:6; D9:17`),
  repaired (`D:11:26` → `D11:26`, `D30:05` → `D30:5`) or dropped (`D`); well-formed ids missing
  from the conversation count as misses. "In N tokens": for `nous` the items of
  `recall(store, question, ["universal"], N)` (the real pipeline: plan limits, threshold,
  composite score, rendering), for the baselines their ranking packed best-first as `- summary`
  lines. Development = conversations 0–4, held-out = 5–9.
- **SciFact**: each abstract a `fact` memory (`title` newline `text`, the model reads its first
  256 tokens), one store for the 5,183 abstracts, cached by model and content hash. nDCG@10 and
  recall@k as BEIR/trec_eval compute them. Development = train qrels (809 queries), held-out =
  test qrels (300).
- **Real repositories** (`../shared/eval/repos/`, development set): each repository's docs
  copied without SOURCE.md, harvested into a fresh store, every question through
  `chat.context` (turn at the frame's default budget, startup at 2,000) and
  `chat.recall` (500) with no session id; metrics as the set's README defines them.
  Beside it, Okapi BM25 (k1 1.2, b 0.75) over the same Markdown files split at headings, packed
  best-first into 500 tokens and into the tokens Nous's recall used (the last section cut).
- **Published references** (design §9) are printed beside ours. They come from other harnesses and
  other splits (DRAGON: all 10 LoCoMo conversations; SciFact: the test split), so they are
  context, not a like-for-like comparison.
"""


def _block_name(data: dict[str, Any]) -> str:
    return f"{data['dataset']}-{data['split']}"


def _markdown_table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c or " " for c in r) + " |" for r in rows]
    return out


def markdown(data: dict[str, Any]) -> str:
    """One run's block: heading, machine, command, tables, notes."""
    name = _block_name(data)
    titles = {
        "locomo": "LoCoMo",
        "scifact": "SciFact",
        "fusion": "Fusion variants for `nous` (development split, both datasets)",
        "repos": "Real repositories",
    }
    split = (
        "held-out split (reported once, never tuned on)"
        if data["split"] == "test"
        else ("development split")
    )
    heading = titles[data["dataset"]]
    if data["dataset"] == "repos":
        split = "development set (tuned on; final numbers come from other repositories)"
    if data["dataset"] != "fusion":
        heading += f", {split}"
    m = data.get("machine") or {}
    lines = [
        f"### {heading}",
        "",
        f"`{data.get('command', '')}` · {m.get('date', '?')} · commit {m.get('commit', '?')} · "
        f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores · Python {m.get('python', '?')}, "
        f"onnxruntime {m.get('onnxruntime', '?')}, SQLite {m.get('sqlite', '?')}",
        "",
    ]
    for title, (head, rows) in tables(data):
        lines += [f"**{title}**", "", *_markdown_table(head, rows), ""]
    for note in _notes(data):
        lines.append(f"- {note}")
    lines.append(f"- runtime: {_timing_line(data)}")
    return (
        f"<!-- eval:{name}:start -->\n" + "\n".join(lines).rstrip() + f"\n<!-- eval:{name}:end -->"
    )


def update_docs(path: Path, data: dict[str, Any]) -> None:
    """Replace this run's block inside the eval section (creating file, section or block)."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    section = between(current, START, END) or ""
    blocks: dict[str, str] = {}
    for name in ORDER:
        start, end = f"<!-- eval:{name}:start -->", f"<!-- eval:{name}:end -->"
        inner = between(section, start, end)
        if inner is not None:
            blocks[name] = f"{start}{inner}{end}"
    blocks[_block_name(data)] = markdown(data)
    if "notes" not in blocks:
        blocks["notes"] = "<!-- eval:notes:start -->\n<!-- eval:notes:end -->"
    body = "\n\n".join(blocks[n] for n in ORDER if n in blocks)
    splice(path, START, END, f"{START}\n{INTRO}\n{body}\n{END}")
