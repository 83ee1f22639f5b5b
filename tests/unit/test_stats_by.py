"""Fingerprints that learn (seed 002, issue 27 item 4): `nous stats --by profile|frame` credits
each judged item to the answer that injected it and each session's reviewed decisions to its
answers. Sessions are driven through the real pipeline and the real model; every figure is
computed here by hand from the answers and the judged replies and compared with the CLI's JSON."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from nous import cli
from nous.context import chat
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.protocol import ContextParams, ContextResult, FeedbackParams, RecallParams
from nous.settings import Settings

REBUILDS = {"frame-switch", "decision-point", "topic-drift", "token-pressure"}
WORTH = {"success": 1.0, "partial": 0.5, "failure": 0.0}


@dataclass
class Given:
    """One answer as the test saw it, with what the test credits to it by hand."""

    result: ContextResult
    session: str | None
    profile: str
    judged: int = 0
    referenced: int = 0


@dataclass
class Ledger:
    """The answers in order, and per session which answer last injected each memory."""

    answers: list[Given] = field(default_factory=list)
    last: dict[str, dict[str, Given]] = field(default_factory=lambda: defaultdict(dict))
    unattributed: int = 0

    def answer(self, e: Engine, text: str, session: str, profile: str) -> ContextResult:
        params = ContextParams(input=text, session_id=session, profile=profile)
        result = chat.context(e, params)
        given = Given(result, session, profile)
        self.answers.append(given)
        for item in (i for s in result.sections for i in s.items):
            self.last[session][item.id] = given
        return result

    def reply(self, e: Engine, session: str, text: str) -> None:
        judged = chat.feedback(e, FeedbackParams(session_id=session, response=text))
        for memory_id in [*judged.referenced, *judged.not_referenced]:
            given = self.last[session].get(memory_id)
            if given is None:
                self.unattributed += 1
                continue
            given.judged += 1
            given.referenced += memory_id in judged.referenced


def engine(tmp_path: Path, embedder: OnnxEmbedder) -> Engine:
    ws = tmp_path / "newton"
    ws.mkdir(exist_ok=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "newton"\n')
    e = Engine(Settings(db=tmp_path / "m.db"), ws, embedder=embedder)
    e.import_file()
    return e


def decide(e: Engine, text: str, source: str, outcome: str, kind: str = "decision") -> str:
    tags = ["dec", "chat"] if kind == "note" else []
    memory = e.remember(Draft(kind=kind, content=text, source=source, tags=tags)).memory
    e.outcome(memory.id, outcome)
    return memory.id


def stats_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    capsys.readouterr()
    args = ["--db", str(tmp_path / "m.db"), "--workspace", str(tmp_path / "newton"), "stats"]
    assert cli.main([*args, "--json", *extra]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def by_hand(
    answers: list[Given], key: str, decisions: dict[str, list[str]]
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Given]] = defaultdict(list)
    for g in answers:
        groups[g.profile if key == "profile" else g.result.frame].append(g)
    out = {}
    for name, members in groups.items():
        turns = [g for g in members if g.result.refresh is not None]
        rebuilt = sum(1 for g in turns if g.result.refresh in REBUILDS)
        judged = sum(g.judged for g in members)
        referenced = sum(g.referenced for g in members)
        sessions = {g.session for g in members if g.session}
        outcomes = [o for s in sorted(sessions) for o in decisions.get(s, [])]
        out[name] = {
            "answers": len(members),
            "turns": len(turns),
            "refreshes": rebuilt,
            "judged": judged,
            "referenced": referenced,
            "referencedShare": referenced / judged if judged else None,
            "utilization": sum(g.result.tokens / g.result.budget for g in members) / len(members),
            "refreshRate": rebuilt / len(turns) if turns else None,
            "sessions": len(sessions),
            "decisions": len(outcomes),
            "decisionAccuracy": sum(WORTH[o] for o in outcomes) / len(outcomes)
            if outcomes
            else None,
        }
    return out


def same(got: dict[str, Any], want: dict[str, Any]) -> None:
    for name, value in want.items():
        if isinstance(value, float):
            assert got[name] == pytest.approx(value), name
        else:
            assert got[name] == value, name


def test_stats_by_profile_and_frame_match_hand_computed_sessions(
    tmp_path: Path, real_embedder: OnnxEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    e = engine(tmp_path, real_embedder)
    book = Ledger()
    # s1, an implementer (knight): two questions, then a reply that says the first answer's
    # first memory in its own words plus a memory only expanded (no answer injected it)
    first = book.answer(e, "What is our storage setup?", "s1", "knight")
    book.answer(e, "Should we switch the storage to Postgres?", "s1", "knight")
    items = [i for s in first.sections for i in s.items]
    assert items, "the first answer injected nothing to judge"
    injected = {i.id for g in book.answers for s in g.result.sections for i in s.items}
    demo = [w.memory.id for w in e.import_file()]  # the demo set again: confirmed, same ids
    others = [m for m in demo if m not in injected]
    chat.expand(e, others[0], "s1")  # expanded, never injected by an answer
    book.reply(e, "s1", f"As noted: {items[0].text}")
    # s2, a narrow helper (peasant): its answers load memories its replies never use
    book.answer(e, "What is our storage setup?", "s2", "peasant")
    book.reply(e, "s2", "Let me look at the stack.")
    book.answer(e, "the build fails with a traceback in the writer", "s2", "peasant")
    book.reply(e, "s2", "Running the tests again now.")
    # a one-shot recall: no session, the default profile
    recalled = chat.recall(e, RecallParams(query="sqlite writes", budget=400))
    book.answers.append(Given(recalled, None, "default"))
    # decisions the sessions left, reviewed; a pending one, another session's and a harvested
    # one do not count
    decide(e, "Keep SQLite for the store; revisit at 100k memories.", "chat:s1", "success")
    decide(e, "Write through one writer thread.", "chat:s1#3", "partial")
    decide(e, "Retry the flaky writer test once.", "chat:s2", "failure")
    decide(e, "Log the writer's queue depth.", "chat:s2#1", "success", kind="note")
    decide(e, "Split the writer module later.", "chat:s2", "pending")
    decide(e, "Use tabs in the Makefile.", "chat:s9", "success")
    decide(e, "ADR: build with hatch.", "file:docs/adr/0002.md#adr-2", "failure")
    e.close()
    decisions = {"s1": ["success", "partial"], "s2": ["failure", "success"]}

    assert book.unattributed == 1
    knight = sum(g.referenced for g in book.answers if g.profile == "knight")
    peasant = [g for g in book.answers if g.profile == "peasant"]
    assert knight >= 1 and sum(g.judged for g in peasant) >= 1
    assert sum(g.referenced for g in peasant) == 0

    for key in ("profile", "frame"):
        data = stats_json(tmp_path, capsys, "--by", key)
        assert data["by"] == key and data["unattributed"] == 1
        want = by_hand(book.answers, key, decisions)
        got = {g["key"]: g for g in data["groups"]}
        assert set(got) == set(want)
        for name in want:
            same(got[name], want[name])
        assert sum(g["judged"] for g in data["groups"]) + 1 == data["judged"]
    # the profile that loads what is never used shows up
    profiles = {g["key"]: g for g in stats_json(tmp_path, capsys, "--by", "profile")["groups"]}
    assert profiles["peasant"]["referencedShare"] == 0
    assert profiles["knight"]["referencedShare"] > 0
    assert profiles["default"]["decisionAccuracy"] is None  # no session, no decisions

    # one session's breakdown: only its answers and its judged items
    one = stats_json(tmp_path, capsys, "--session", "s2", "--by", "profile")
    assert [g["key"] for g in one["groups"]] == ["peasant"] and one["unattributed"] == 0
    same(one["groups"][0], by_hand(peasant, "profile", decisions)["peasant"])

    capsys.readouterr()
    ws = str(tmp_path / "newton")
    assert (
        cli.main(["--db", str(tmp_path / "m.db"), "--workspace", ws, "stats", "--by", "frame"]) == 0
    )
    text = capsys.readouterr().out
    assert "by frame:" in text and "refresh/turn" in text
    assert "1 judged items from answers that did not name their items" in text


def test_stats_without_by_have_no_groups(
    tmp_path: Path, real_embedder: OnnxEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    e = engine(tmp_path, real_embedder)
    chat.context(e, ContextParams(input="What is our storage setup?", session_id="s1"))
    e.close()
    data = stats_json(tmp_path, capsys)
    assert (data["by"], data["groups"], data["unattributed"]) == (None, [], 0)
