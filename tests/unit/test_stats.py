"""The seeds' metrics (seed 001's table, design §14, issue 27 item 3): sessions driven through the
real pipeline and the real model, each figure computed by hand from the answers and compared
with `nous stats --json` (the project, one session, and another project's rows left out)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from nous import cli
from nous.context import chat
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.protocol import ContextParams, ContextResult, FeedbackParams, FeedbackResult, RecallParams
from nous.settings import Settings

REBUILDS = {"frame-switch", "decision-point", "topic-drift", "token-pressure"}


def workspace(tmp_path: Path, name: str) -> Path:
    ws = tmp_path / name
    ws.mkdir(exist_ok=True)
    (ws / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n')
    return ws


def engine(tmp_path: Path, embedder: OnnxEmbedder, name: str = "newton") -> Engine:
    e = Engine(Settings(db=tmp_path / "m.db"), workspace(tmp_path, name), embedder=embedder)
    e.import_file()
    return e


def stats(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    capsys.readouterr()
    ws = str(tmp_path / "newton")
    code = cli.main(["--db", str(tmp_path / "m.db"), "--workspace", ws, "stats", "--json", *extra])
    assert code == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def figures(data: dict[str, object]) -> dict[str, float | None]:
    metrics = data["metrics"]
    assert isinstance(metrics, list)
    return {m["name"]: m["value"] for m in metrics}


def referenced(replies: list[FeedbackResult]) -> tuple[int, int]:
    judged = sum(len(f.referenced) + len(f.not_referenced) for f in replies)
    return judged, sum(len(f.referenced) for f in replies)


def drive(
    e: Engine,
) -> tuple[list[ContextResult], list[ContextResult], list[FeedbackResult], float]:
    """Session `s1`: a chat start (the engine's first answer: a cold start), four turns (a
    follow-up, a frame switch, a decision), a recall and two judged replies, the client
    reporting its conversation's tokens on three turns. Returns (every answer, the turns, the
    judged replies, the chat start's wall time in ms as the test saw it)."""

    def turn(text: str, conversation: int | None = None) -> ContextResult:
        params = ContextParams(input=text, session_id="s1", conversation_tokens=conversation)
        return chat.context(e, params)

    began = time.perf_counter()
    start = chat.context(e, ContextParams(mode="startup", session_id="s1", budget=1500))
    wall_ms = (time.perf_counter() - began) * 1000
    turns = [
        turn("What is our storage setup?", 2000),
        turn("What is the SQLite storage setup?", 2600),
        turn("the build fails with a traceback in the writer"),
        turn("Should we switch the storage to Postgres?", 4100),
    ]
    recalled = chat.recall(e, RecallParams(query="sqlite writes", session_id="s1", budget=400))
    items = [i for s in turns[0].sections for i in s.items]
    assert items, "the first turn injected nothing to judge"
    replies = [
        chat.feedback(e, FeedbackParams(session_id="s1", response=f"As noted: {items[0].text}")),
        chat.feedback(e, FeedbackParams(session_id="s1", response="Let me look at the stack.")),
    ]
    return [start, *turns, recalled], turns, replies, wall_ms


def test_stats_match_a_hand_computed_session(
    tmp_path: Path, real_embedder: OnnxEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    e = engine(tmp_path, real_embedder)
    answers, turns, replies, cold_ms = drive(e)
    other = chat.context(e, ContextParams(input="How do I deploy?", session_id="s2"))
    other_reply = chat.feedback(e, FeedbackParams(session_id="s2", response="Deploying now."))
    e.close()
    elsewhere = engine(tmp_path, real_embedder, "billing")  # another project, same file
    chat.context(elsewhere, ContextParams(input="What is our storage setup?", session_id="s1"))
    chat.feedback(elsewhere, FeedbackParams(session_id="s1", response="Storage setup."))
    elsewhere.close()

    # by hand, session s1
    judged, used = referenced(replies)
    assert used >= 1
    utilization = sum(a.tokens / a.budget for a in answers) / len(answers)
    verdicts = [t.refresh for t in turns]
    # after the chat start (frame `conversation`) the first question is a frame switch
    assert verdicts == ["frame-switch", "none", "frame-switch", "frame-switch"]
    rebuilt = sum(1 for v in verdicts if v in REBUILDS)
    reported = [(turns[0], 2000), (turns[1], 2600), (turns[3], 4100)]
    overhead = sum(t.tokens for t, _ in reported) / sum(n for _, n in reported)

    one = stats(tmp_path, capsys, "--session", "s1")
    assert (one["sessionId"], one["answers"], one["turns"], one["sessions"]) == ("s1", 6, 4, 1)
    assert (one["judged"], one["referenced"], one["refreshes"]) == (judged, used, rebuilt)
    got = figures(one)
    assert got["contextRelevance"] == pytest.approx(used / judged)
    assert got["budgetUtilization"] == pytest.approx(utilization)
    assert got["refreshRate"] == pytest.approx(rebuilt / 4)
    assert got["overhead"] == pytest.approx(overhead)
    # the chat start was the engine's first answer: its build time, within what the test saw
    assert got["coldStart"] is not None and 0 < got["coldStart"] <= cold_ms
    cold = got["coldStart"]

    # by hand, the project: s1 and s2, not the other project's session of the same id
    everything = [*answers, other]
    project = stats(tmp_path, capsys)
    assert (project["sessionId"], project["answers"], project["sessions"]) == (None, 7, 2)
    judged_all, used_all = referenced([*replies, other_reply])
    assert (project["judged"], project["referenced"]) == (judged_all, used_all)
    got = figures(project)
    assert got["contextRelevance"] == pytest.approx(used_all / judged_all)
    assert got["budgetUtilization"] == pytest.approx(
        sum(a.tokens / a.budget for a in everything) / len(everything)
    )
    assert other.refresh == "initial"  # s2's one turn: a build, not a refresh
    assert got["refreshRate"] == pytest.approx(rebuilt / 5)
    assert got["overhead"] == pytest.approx(overhead)  # s2 reported no conversation tokens
    assert got["coldStart"] == cold  # s2's answer came warm; billing's first is billing's


def test_stats_without_records_say_unknown(
    tmp_path: Path, real_embedder: OnnxEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    engine(tmp_path, real_embedder).close()
    data = stats(tmp_path, capsys)
    assert data["answers"] == 0
    assert set(figures(data).values()) == {None}
    capsys.readouterr()
    ws = str(tmp_path / "newton")
    assert cli.main(["--db", str(tmp_path / "m.db"), "--workspace", ws, "stats"]) == 0
    text = capsys.readouterr().out
    assert "context relevance" in text and "unknown" in text and "cold start" in text
