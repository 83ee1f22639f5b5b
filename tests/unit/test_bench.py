"""`nous bench`: a CI smoke run (tiny set, few requests) checking that the JSON has every field
with sane values — no timing assertions — plus the pure pieces (set generation, percentiles,
size parsing, the docs section)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nous.bench import build, corpus, measure, report
from nous.bench.cli import _sizes
from nous.memory.embedder import HashEmbedder
from nous.memory.model import KINDS
from nous.text import tokens

ROOT = Path(__file__).resolve().parents[2]
SIZE = 200


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("bench")
    docs = base / "benchmarks.md"
    docs.write_text(
        "# Benchmarks\n\nintro kept\n\n<!-- eval:start -->\neval kept\n<!-- eval:end -->\n"
    )
    out = base / "bench.json"
    command = [
        sys.executable, "-m", "nous", "bench", "--sizes", str(SIZE), "--queries", "6",
        "--write-sample", "20", "--single", "4", "--pool", "60", "--cold-runs", "1",
        "--harvest-scale", "0.05", "--repos", "thunderbird-android", "--watcher", "3000", "--json", "--out", str(out), "--docs", str(docs),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout)
    assert json.loads(out.read_text()) == data
    data["_docs"] = docs.read_text()
    return data


def _latency(stats: dict[str, Any], n: int) -> None:
    assert stats["n"] == n
    assert 0 < stats["p50"] <= stats["p95"] <= stats["p99"] <= stats["max"]
    assert stats["mean"] > 0


def test_smoke_has_every_field(smoke: dict[str, Any]) -> None:
    assert {"nous", "date", "commit", "command", "machine", "settings", "sizes", "harvest",
            "setDescription", "targets"} <= set(smoke)  # fmt: skip
    assert smoke["machine"]["cores"] >= 1 and smoke["machine"]["summary"]
    assert smoke["settings"]["queries"] == 6 and smoke["settings"]["model"]
    [row] = smoke["sizes"]
    assert row["size"] == SIZE

    b = row["build"]
    assert b["memories"] == SIZE
    assert b["bulk"] + b["sample"] + b["single"] == SIZE
    assert (b["sample"], b["single"]) == (20, 4)
    assert b["bulk_real_own"] == 60 and b["bulk_variants"] == SIZE - 24 - 60
    assert b["bulk_lookup_misses"] == 0
    assert b["write_per_s"] > 0 and b["single_per_s"] > 0
    assert b["db_bytes"] > 0
    assert corpus.MIN_TOKENS <= b["token_range"][0] <= b["token_range"][1] <= corpus.MAX_TOKENS
    assert set(b["kinds"]) <= set(KINDS) and sum(b["kinds"].values()) == SIZE
    assert any(s.startswith("project:") and s != f"project:{corpus.PROJECT}" for s in b["scopes"])

    _latency(row["context"]["turn"], 6)
    _latency(row["context"]["startup"], 6)
    _latency(row["recall"], 6)
    assert row["turnAnswers"]["meanTokens"] > 0

    floors = row["floors"]
    assert floors["vectors"] == SIZE and floors["k"] > 0
    for key in ("embedQuery", "topK", "countRendered"):
        _latency(floors[key], 6)
    assert floors["sumP50"] > 0 and row["ratio"] > 0

    cli = row["cold"]["cli"]
    assert cli["runs"] == 1 and cli["errors"] == [] and cli["median"] > 0 and cli["tokens"] > 0
    probe = row["cold"]["probe"]
    assert "error" not in probe, probe
    assert 0.8 * SIZE <= probe["liveVectors"] <= SIZE
    assert 0 < probe["rssAfterFirstMb"] <= probe["peakRssMb"]
    for key in ("importSeconds", "modelLoadSeconds", "storeOpenSeconds", "firstContextSeconds"):
        assert probe[key] >= 0

    stdio = row["stdio"]
    assert "error" not in stdio, stdio
    if "skipped" not in stdio:
        _latency(stdio["turn"], 6)
        assert 0 < stdio["initializeSeconds"] <= stdio["firstContextSeconds"]
        assert stdio["firstContextTokens"] > 0
        assert stdio["daemonRssMb"] > 0

    h = smoke["harvest"]
    if "skipped" not in h:
        assert h["errors"] == []
        assert h["created"] > 0 and h["commits"] > 0 and h["perSecond"] > 0
        assert h["memories"] >= h["created"]

    repos = smoke["repos"]
    if "skipped" not in repos:  # the evaluation set beside the checkout (shared/eval/repos)
        (row,) = repos["repos"]
        assert row["repo"] == "thunderbird-android" and row["errors"] == []
        assert row["created"] > 100 and row["memories"] == row["created"]
        assert 0 < row["harvestSeconds"] < row["firstAnswerSeconds"] <= row["lastVectorSeconds"]
        assert row["firstAnswerTokens"] > 0

    figures = [t["figure"] for t in smoke["targets"]]
    assert any("10k" in f for f in figures) and any("100k" in f for f in figures)
    for t in smoke["targets"]:
        assert t["met"] in (True, False, None)
        assert (t["value"] is None) == (t["met"] is None)


def test_smoke_docs_section_keeps_the_rest(smoke: dict[str, Any]) -> None:
    docs = smoke["_docs"]
    assert "intro kept" in docs and "eval kept" in docs
    assert docs.count(report.START) == 1 and docs.count(report.END) == 1
    assert "### Warm latency" in docs and "### Targets" in docs


def test_an_unknown_repository_is_refused_before_any_work(tmp_path: Path) -> None:
    from nous.evaluation import data

    try:
        data.repos_dir(data.data_dir())
    except data.EvalDataError:
        pytest.skip("the evaluation set is not beside the checkout")
    command = [sys.executable, "-m", "nous", "bench", "--sizes", "200", "--repos", "nope",
               "--keep", str(tmp_path / "kept")]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode != 0 and "--repos: unknown nope" in done.stderr
    assert not (tmp_path / "kept").exists()  # refused before building anything


def test_update_docs_replaces_only_its_section_and_keeps_the_analysis(tmp_path: Path) -> None:
    path = tmp_path / "b.md"
    report.update_docs(path, f"first\n{report.NOTES_START}\n{report.NOTES_END}")
    text = path.read_text()
    assert text.startswith("# Benchmarks") and "first" in text
    text = text.replace(report.NOTES_END, "hand-written analysis\n" + report.NOTES_END)
    path.write_text("before\n" + text + "\nafter\n")
    report.update_docs(path, f"second\n{report.NOTES_START}\n{report.NOTES_END}")
    text = path.read_text()
    assert "first" not in text and "second" in text
    assert "before" in text and "after" in text and "hand-written analysis" in text


def test_corpus_is_deterministic_and_shaped() -> None:
    counter = tokens.counter()
    a = corpus.Corpus(counter, seed=3, pool=50)
    b = corpus.Corpus(counter, seed=3, pool=50)
    specs = list(a.specs(0, 120))
    assert [s.draft for s in specs] == [s.draft for s in b.specs(0, 120)]
    assert len({s.draft.content for s in specs}) == 120
    assert all(corpus.MIN_TOKENS <= s.tokens <= corpus.MAX_TOKENS for s in specs)
    assert all(counter.count(s.draft.content) == s.tokens for s in specs)
    variant, base = specs[53], specs[3]
    assert variant.base == 3 and variant.draft.kind == base.draft.kind
    assert variant.draft.content != base.draft.content
    assert corpus.Corpus(counter, seed=4, pool=50).spec(0).draft != specs[0].draft
    assert len(corpus.queries(30)) == 30 and len({q.frame for q in corpus.queries(60)}) >= 4


def test_lookup_embedder_uses_the_table_and_counts_misses() -> None:
    real = HashEmbedder()
    table = {"known text": np.ones(real.dimension, dtype=np.float32)}
    lookup = build.LookupEmbedder(real, table)
    out = lookup.embed_many(["known text", "other text"])
    assert np.allclose(out[0], 1.0)
    assert np.allclose(out[1], real.embed("other text"))
    assert lookup.misses == 1 and lookup.name == real.name


def test_split_and_percentiles_and_sizes() -> None:
    assert build.split(100_000, 1000, 100) == (98_900, 1000, 100)
    assert build.split(100, 1000, 100) == (40, 50, 10)
    stats = measure.percentiles([float(x) for x in range(1, 101)])
    assert stats["n"] == 100 and stats["p50"] == 50.5 and stats["max"] == 100.0
    assert measure.percentiles([])["n"] == 0
    assert _sizes("1k,10k, 100000") == [1000, 10_000, 100_000]
    with pytest.raises(argparse.ArgumentTypeError):
        _sizes("5")


def test_smoke_watcher_ignores_node_modules_and_keeps_its_index(smoke: dict[str, Any]) -> None:
    w = smoke["watcher"]
    assert w["files"] == 3000 and w["tree"]["node_modules"] == 2100
    assert w["indexed"] == w["tree"]["kept"] + 2  # + .gitignore and the readiness probe
    assert 0 < w["watches"] < 200 and w["mode"] == "watching" and w["readySeconds"] is not None
    assert w["storm"]["renamed"] > 0 and w["storm"]["indexEqualsFreshWalk"] is True
    assert "Watcher (generated tree" in smoke["_docs"]
