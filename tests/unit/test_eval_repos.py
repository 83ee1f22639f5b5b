"""`nous eval repos`: the repository-set metrics, the Markdown sections and the BM25 packing on
hand-made inputs, and a CI smoke run on one real repository (thunderbird-android, the smallest)
with the real model, checked against its own per-question detail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nous.evaluation import bm25, data, report, repos, repos_metrics
from nous.evaluation.repos_metrics import Injected, Row, judge, source_paths, summarise
from nous.protocol import ContextResult, Item, Section, SessionUse
from nous.text import tokens

ROOT = Path(__file__).resolve().parents[2]
SMOKE_REPO = "thunderbird-android"


# -- matching and the per-question metrics -------------------------------------------------------


def _item(path: str | None, text: str, n: int = 10) -> Injected:
    return Injected((path,) if path else (), text, n)


def test_source_paths_strip_file_prefix_and_anchor_and_skip_other_sources() -> None:
    sources = ["file:docs/adr/0003-x.md#adr-3", "git:abc123", "chat", "file:AGENTS.md", ""]
    assert source_paths(sources) == ("docs/adr/0003-x.md", "AGENTS.md")
    assert source_paths(["file:./README.md#usage", "file:README.md#other"]) == ("README.md",)


def test_strict_needs_all_phrases_in_one_item_from_an_expected_file() -> None:
    phrases = ["very similar to truth", "designed to work well with kotlin"]
    items = [
        _item("other.md", "Very similar to Truth and designed to work well with Kotlin"),
        _item("adr.md", "It is very   similar\nto TRUTH."),  # whitespace collapsed, case folded
        _item("adr.md", "very similar to truth; designed to work well with kotlin"),
    ]
    j = judge(items, ["adr.md"], phrases)
    assert (j.strict, j.lenient, j.rank_strict, j.rank_lenient) == (True, True, 3, 2)
    assert j.precision == pytest.approx(2 / 3)
    assert (j.items, j.tokens) == (3, 30)


def test_punctuation_is_not_stripped_and_other_files_never_count() -> None:
    j = judge([_item("a.md", "run pytest -m not integration")], ["a.md"], ['-m "not integration"'])
    assert not j.lenient and j.rank_lenient is None
    j = judge([_item("b.md", "must not"), _item(None, "must not")], ["a.md"], ["must not"])
    assert (j.strict, j.lenient, j.precision) == (False, False, 0.0)


def test_an_item_with_several_sources_counts_when_any_is_expected() -> None:
    merged = Injected(("AGENTS.md", "docs/testing.md"), "use assertk", 5)
    assert judge([merged], ["docs/testing.md"], ["use assertk"]).rank_strict == 1


def test_zero_items_give_precision_zero_and_are_counted_separately() -> None:
    empty = judge([], ["a.md"], ["x"])
    hit = judge([_item("a.md", "x y")], ["a.md"], ["x", "y"])
    rows = [Row("r", "answerable", "", empty), Row("r", "answerable", "", hit)]
    s = summarise(rows)["answerable"]
    assert (empty.precision, s["zeroItems"], s["precision"]) == (0.0, 1, 0.5)
    assert (s["strict"], s["mrr"], s["medianRank"]) == (0.5, 0.5, 1.0)


def test_greeting_and_no_answer_tokens_and_injection_rate_are_kept_apart() -> None:
    rows = [
        Row("r", "greeting", "", judge([_item("a.md", "hi", 40)], [], []), framing=12),
        Row("r", "greeting", "", judge([], [], []), framing=8),
        Row("r", "no-answer", "", judge([_item("a.md", "x", 7), _item("b.md", "y", 3)], [], [])),
    ]
    s = summarise(rows)
    assert s["greeting"] == {
        "n": 2,
        "meanTokens": 20.0,
        "injectionRate": 0.5,
        "meanItems": 0.5,
        "alwaysTokens": 0.0,
    }
    assert s["noAnswer"]["meanTokens"] == 10.0 and s["noAnswer"]["injectionRate"] == 1.0
    assert s["answerable"]["n"] == 0 and s["answerable"]["strict"] is None
    assert s["framing"] == {"meanTokens": 20 / 3, "maxTokens": 12}


def test_notes_group_into_themes() -> None:
    assert repos_metrics.themes_of("prohibition stated in a 'MUST NOT' list") == ["prohibition"]
    assert repos_metrics.themes_of("paraphrased; rule stated in an ADR") == ["rule", "paraphrased"]
    assert "deep in a long file" in repos_metrics.themes_of("answer deep inside a 44 KB doc")


def test_sources_list_is_used_when_the_wire_item_has_one() -> None:
    class Merged(Item):
        sources: list[str]

    base = {"id": "m", "kind": "fact", "scope": "s", "layer": "facts", "detail": "summary"}
    item = Merged(**base, tokens=3, score=1.0, source="file:a.md#x", sources=["chat", "file:b.md"])
    assert repos.item_sources(item) == ["chat", "file:b.md"]
    assert repos.item_sources(Item(**base, tokens=3, score=1.0, source="file:a.md#x")) == [
        "file:a.md#x"
    ]


def test_framing_is_the_rendered_text_without_the_item_lines() -> None:
    counter = tokens.counter()
    items = [Item(id="1", kind="fact", scope="s", layer="facts", detail="summary", tokens=5,
                  score=1.0, text="Use assertk for assertions", source="file:a.md#x")]  # fmt: skip
    text = "## Known Information\n```memories\n- Use assertk for assertions\n```"
    result = ContextResult(
        text=text, tokens=counter.count(text), budget=500, frame="question", mode="recall",
        sections=[Section(layer="facts", title="Known Information", used=0, cap=0, items=items)],
        session=SessionUse(id=None, used=0, cap=0, remaining=0),
    )  # fmt: skip
    assert repos.framing_tokens(result, counter) == counter.count(
        "## Known Information\n```memories\n```"
    )


# -- sections, BM25 and packing ------------------------------------------------------------------


def test_sections_split_at_headings_but_not_inside_code() -> None:
    text = (
        "Intro line\n# Build\nRun it:\n```bash\n# not a heading\nmake\n```\n"
        "  ~~~\n## still code\n  ~~~\n## Test\nrun tests\n"
    )
    sections = bm25.split_sections("README.md", text)
    assert [s.text.splitlines()[0] for s in sections] == ["Intro line", "# Build", "## Test"]
    assert "# not a heading" in sections[1].text and "## still code" in sections[1].text
    assert all(s.path == "README.md" for s in sections)


def test_bm25_ranks_matching_sections_and_drops_the_rest() -> None:
    docs = [["gradle", "build"], ["kotlin", "assertk", "assertk"], ["gradle"], ["unrelated"]]
    index = bm25.BM25(docs)
    assert index.rank(bm25.words("How do I use assertk with Gradle?")) == [1, 2, 0]
    assert bm25.words("How do I run THE tests?") == ["run", "tests"]


class _WordCounter:
    """One token per word: hand-checkable packing."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())

    def truncate(self, text: str, max_tokens: int) -> str:
        return " ".join(text.split()[:max_tokens])


def test_pack_takes_whole_sections_then_cuts_the_first_that_does_not_fit_and_stops() -> None:
    ranked = [bm25.Section("a.md", "one two three"), bm25.Section("b.md", "four five six seven"),
              bm25.Section("c.md", "eight")]  # fmt: skip
    packed = bm25.pack(ranked, 5, _WordCounter())
    assert [(p.path, p.text, p.tokens, p.cut) for p in packed] == [
        ("a.md", "one two three", 3, False), ("b.md", "four five", 2, True)
    ]  # fmt: skip
    assert bm25.pack(ranked, 0, _WordCounter()) == []
    assert [p.path for p in bm25.pack(ranked, 3, _WordCounter())] == ["a.md"]


def test_pack_with_the_real_counter_never_exceeds_the_budget() -> None:
    counter = tokens.counter()
    ranked = [bm25.Section("a.md", "# Long\n" + "word, punctuation; ünïcode 👋 " * 200)]
    packed = bm25.pack(ranked, 37, counter)
    assert len(packed) == 1 and packed[0].cut and 0 < packed[0].tokens <= 37
    assert counter.count(packed[0].text) == packed[0].tokens


# -- smoke: one real repository with the real model ----------------------------------------------


@pytest.fixture(scope="module")
def repo_set() -> Path:
    try:
        return data.repos_dir(data.data_dir())
    except data.EvalDataError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no ../shared/eval/repos beside the repository (CI has it): {exc}")


@pytest.fixture(scope="module")
def smoke(repo_set: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    docs = tmp_path_factory.mktemp("docs") / "benchmarks.md"
    docs.write_text(
        "# Benchmarks\n\n<!-- eval:start -->\n<!-- eval:notes:start -->\nmy analysis\n"
        "<!-- eval:notes:end -->\n\n<!-- eval:locomo-dev:start -->\nlocomo kept\n"
        "<!-- eval:locomo-dev:end -->\n<!-- eval:end -->\ntail kept\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    command = [sys.executable, "-m", "nous", "eval", "repos", "--repos", SMOKE_REPO, "--json",
               "--docs", str(docs), "--data", str(repo_set)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout)
    out["_docs"] = docs.read_text()
    return out


def test_smoke_report_has_every_field_in_range(smoke: dict[str, Any]) -> None:
    assert smoke["dataset"] == "repos" and smoke["repos"] == [SMOKE_REPO]
    assert smoke["kinds"] == {"answerable": 14, "no-answer": 3, "greeting": 2}
    assert smoke["questions"] == len(smoke["detail"]) == 19
    assert smoke["sessionCuts"] == 0
    assert set(smoke["summary"]) == set(repos.MODES) == set(smoke["modes"])
    for mode, by_repo in smoke["summary"].items():
        assert set(by_repo) == {SMOKE_REPO, "overall"}
        assert by_repo[SMOKE_REPO] == by_repo["overall"]
        a, na, gr = (by_repo["overall"][k] for k in ("answerable", "noAnswer", "greeting"))
        assert set(a) == {"n", "strict", "lenient", "mrr", "mrrLenient", "medianRank",
                          "medianRankLenient", "precision", "zeroItems", "meanItems",
                          "meanTokens", "p95Tokens", "alwaysTokens"}  # fmt: skip
        for key in ("strict", "lenient", "mrr", "mrrLenient", "precision"):
            assert 0.0 <= a[key] <= 1.0, (mode, key)
        assert a["strict"] <= a["lenient"] and a["mrr"] <= a["mrrLenient"] + 1e-9
        assert a["medianRank"] is None or a["medianRank"] >= 1
        for kind in (na, gr):
            assert set(kind) == {"n", "meanTokens", "injectionRate", "meanItems", "alwaysTokens"}
            assert 0.0 <= kind["injectionRate"] <= 1.0 and kind["meanTokens"] >= 0
    assert smoke["summary"]["recall"]["overall"]["answerable"]["p95Tokens"] <= 500
    h = smoke["harvest"][SMOKE_REPO]
    assert h["files"] > 0 and h["memories"] > 0 and h["commits"] == 0  # no git above the copy
    assert h["markdownFiles"] >= h["files"] and h["sections"] > h["markdownFiles"]


def test_smoke_bm25_baseline_ran_within_its_budgets(smoke: dict[str, Any]) -> None:
    bm = smoke["summary"]["bm25@500"]["overall"]["answerable"]
    assert bm["lenient"] > 0.3 and bm["zeroItems"] == 0  # plain BM25 finds the docs' words
    for q in smoke["detail"]:
        m = q["modes"]
        assert m["bm25@500"]["itemTokens"] <= 500
        assert m["bm25@same"]["budget"] == m["recall"]["itemTokens"]
        assert m["bm25@same"]["itemTokens"] <= m["recall"]["itemTokens"]
        assert all(i["detail"] in ("section", "cut") for i in m["bm25@500"]["items"])
        assert sum(i["detail"] == "cut" for i in m["bm25@500"]["items"]) <= 1


def test_smoke_detail_is_consistent_and_references_real_files(
    smoke: dict[str, Any], repo_set: Path
) -> None:
    root = repo_set / SMOKE_REPO
    # The harvested memories' sources parse to files (a change of source format shows here).
    recalled = [i for q in smoke["detail"] for i in q["modes"]["recall"]["items"]]
    assert sum(bool(i["paths"]) for i in recalled) > len(recalled) / 2
    for q in smoke["detail"]:
        for mode, m in q["modes"].items():
            items = m["items"]
            # retrieved tokens: the always-on layers' items are counted apart (design §9)
            retrieved = sum(i["tokens"] for i in items if not i.get("always"))
            assert m["itemTokens"] == retrieved, (q["id"], mode)
            assert m["alwaysTokens"] == sum(i["tokens"] for i in items if i.get("always"))
            assert not m["strict"] or m["lenient"], (q["id"], mode)
            for hit, rank in ((m["strict"], m["rankStrict"]), (m["lenient"], m["rankLenient"])):
                assert (rank is not None) == hit
                assert rank is None or 1 <= rank <= len(items)
            if m["rankStrict"] is not None:
                assert m["rankLenient"] <= m["rankStrict"]
            assert 0.0 <= m["precision"] <= 1.0 and (items or m["precision"] == 0.0)
            for item in items:
                assert len(item["text"]) <= repos.TEXT_CHARS
                if mode.startswith("bm25"):
                    assert item["paths"] == [item["source"]]
                else:
                    assert item["paths"] == list(source_paths(item["source"].split(", ")))
                for path in item["paths"]:
                    assert path != "SOURCE.md" and (root / path).is_file(), (mode, path)


def test_smoke_summary_matches_the_detail(smoke: dict[str, Any]) -> None:
    for mode in repos.MODES:
        answerable = [q["modes"][mode] for q in smoke["detail"] if q["kind"] == "answerable"]
        greetings = [q["modes"][mode] for q in smoke["detail"] if q["kind"] == "greeting"]
        s = smoke["summary"][mode]["overall"]
        hits = sum(m["strict"] for m in answerable) / len(answerable)
        assert s["answerable"]["strict"] == pytest.approx(hits, abs=1e-4)
        # A greeting's retrieved items are counted, whatever the pipeline decided to inject.
        tokens_ = [sum(i["tokens"] for i in m["items"]) for m in greetings]
        assert s["greeting"]["meanTokens"] == pytest.approx(sum(tokens_) / len(tokens_), abs=1e-3)
        assert s["greeting"]["injectionRate"] == pytest.approx(
            sum(bool(m["items"]) for m in greetings) / len(greetings)
        )


def test_smoke_tables_and_docs_block(smoke: dict[str, Any]) -> None:
    text = report.text(smoke)
    for label in ("turn context", "startup (2,000", "recall (500", "BM25 sections, 500"):
        assert label in text
    assert "overall" in text
    assert "questions recall missed" in text or "no answerable question missed" in text
    docs = smoke["_docs"]
    assert "my analysis" in docs and "locomo kept" in docs and "tail kept" in docs
    assert docs.count("<!-- eval:repos-dev:start -->") == 1
    assert docs.index("eval:locomo-dev:start") < docs.index("eval:repos-dev:start")
    assert "### Real repositories" in docs and f"| {SMOKE_REPO} |" in docs
