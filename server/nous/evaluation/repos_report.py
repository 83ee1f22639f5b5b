"""Tables of `nous eval repos` for the terminal and docs/benchmarks.md (through report.py): one
table per mode (a row per repository and overall), hit rates by note theme, and the answerable
questions recall missed with what came instead."""

from __future__ import annotations

from typing import Any

Table = tuple[list[str], list[list[str]]]

MODE_LABEL = {
    "turn": "turn context (frame default budget)",
    "startup": "startup (2,000 tokens)",
    "recall": "recall (500 tokens)",
    "bm25@500": "BM25 sections, 500 tokens",
    "bm25@same": "BM25 sections, the tokens Nous's recall used",
}
HEAD = [
    "repository", "strict", "lenient", "MRR", "median rank", "precision", "0 items",
    "tokens mean", "p95", "no-answer tokens", "rate", "greeting tokens", "rate", "always-on",
    "framing",
]  # fmt: skip


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * float(value):.1f}"


def _num(value: Any, digits: int = 0) -> str:
    return "–" if value is None else f"{float(value):,.{digits}f}"


def _row(name: str, s: dict[str, Any], baseline: bool) -> list[str]:
    a, na, gr = s["answerable"], s["noAnswer"], s["greeting"]
    return [
        name, _pct(a["strict"]), _pct(a["lenient"]), _num(a["mrr"], 3), _num(a["medianRank"], 1),
        _pct(a["precision"]), str(a["zeroItems"]), _num(a["meanTokens"]), _num(a["p95Tokens"]),
        _num(na["meanTokens"]), _pct(na["injectionRate"]), _num(gr["meanTokens"]),
        _pct(gr["injectionRate"]), "–" if baseline else _num(a.get("alwaysTokens")),
        "–" if baseline else _num(s["framing"]["meanTokens"]),
    ]  # fmt: skip


def _title(data: dict[str, Any], mode: str) -> str:
    k = data["kinds"]
    return (
        f"{MODE_LABEL.get(mode, mode)}: {k['answerable']} answerable, {k['no-answer']} no-answer, "
        f"{k['greeting']} greeting questions; hit, MRR and precision % over the answerable ones"
    )


def tables(data: dict[str, Any]) -> list[tuple[str, Table]]:
    out: list[tuple[str, Table]] = []
    for mode in data["modes"]:
        by_repo = data["summary"][mode]
        baseline = mode.startswith("bm25")
        rows = [_row(name, by_repo[name], baseline) for name in data["repos"]]
        rows += [_row(name.removeprefix("split:") + " split", by_repo[name], baseline)
                 for name in by_repo if name.startswith("split:")]  # fmt: skip
        rows.append(_row("overall", by_repo["overall"], baseline))
        out.append((_title(data, mode), (HEAD, rows)))
    themes = data["byTheme"]
    names = list(themes[data["modes"][0]])
    if names:
        head = ["note theme (n)", *data["modes"]]
        rows = [
            [f"{name} ({themes[data['modes'][0]][name]['n']})"]
            + [_pct(themes[m][name]["strict"]) for m in data["modes"]]
            for name in names
        ]
        out.append(("Strict hit % by note theme (a question can be in several)", (head, rows)))
    return out


def misses(data: dict[str, Any], mode: str = "recall") -> list[str]:
    """The answerable questions `mode` missed (strict), with the sources it injected instead."""
    lines = [f"Answerable questions {mode} missed (strict), and what it injected instead:"]
    for q in data["detail"]:
        if q["kind"] != "answerable" or q["modes"][mode]["strict"]:
            continue
        got = q["modes"][mode]
        lenient = " (lenient hit)" if got["lenient"] else ""
        sources: dict[str, int] = {}
        for item in got["items"]:
            for path in item.get("paths") or [item["source"] or "(no source)"]:
                sources[path] = sources.get(path, 0) + 1
        came = ", ".join(f"{p} ×{n}" if n > 1 else p for p, n in sources.items()) or "nothing"
        lines.append(f"- {q['id']}{lenient}: {q['question']}")
        lines.append(f"    expected {', '.join(q['expectedFiles'])}; got {came}")
    return lines if len(lines) > 1 else [f"{mode}: no answerable question missed"]


def notes(data: dict[str, Any]) -> list[str]:
    harvest = ", ".join(
        f"{name} {h['files']} files → {h['memories']} memories ({h['markdownFiles']} Markdown "
        f"files, {h['sections']} BM25 sections)"
        for name, h in data["harvest"].items()
    )
    turns: dict[str, int] = {}
    for q in data["detail"]:
        turn = q["modes"]["turn"]
        key = f"{turn.get('frame', '?')} {turn.get('budget', '?')}"
        turns[key] = turns.get(key, 0) + 1
    out = [
        f"harvest: {harvest}",
        "turn budgets (frame default, by the frame each question got): "
        + ", ".join(f"{k} ×{n}" for k, n in sorted(turns.items())),
        "strict = an item from an expected file holding all key phrases, lenient = one; "
        "median rank over the questions with a strict hit (hits count every injected item); "
        "precision and tokens = the retrieved items (the selected layers) "
        f"({data['encoding']}); always-on = the mean tokens of the items of the always-on layers "
        "(identity, censors, frame, working memory; the rules at a chat start), reported apart; "
        "framing = the rest of the rendered text (headings, fences, fixed layer text)",
        "no session id: every question is independent (its own ad-hoc session, no usage "
        f"feedback); answers cut by a session cap: {data['sessionCuts']}",
    ]
    if any(h["errors"] for h in data["harvest"].values()):
        out.append(
            "harvest errors: " + "; ".join(e for h in data["harvest"].values() for e in h["errors"])
        )
    return out


def timing(data: dict[str, Any]) -> str:
    t = data.get("timing") or {}
    parts = [f"total {data.get('seconds', '?')} s", f"harvest {_num(t.get('harvestSeconds'), 1)} s"]
    parts += [f"{m} {_num(ms, 1)} ms/question" for m, ms in (t.get("msPerQuestion") or {}).items()]
    return "; ".join(parts)
