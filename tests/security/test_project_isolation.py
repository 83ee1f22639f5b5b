"""Projects that share a name are kept apart (design §4): four real folders all called `api` — a git
repository with a remote, one without, and two plain folders in different places — on one memory
file, through the use-case layer with the real model. Recall, harvest, id-based methods, sessions
and writes naming another project's scope."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from nous.context import chat
from nous.engine import Engine
from nous.errors import InvalidMemory, UnknownMemory
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.protocol import ContextParams, FeedbackParams, RecallParams
from nous.settings import Settings

RULES = {
    "remote": "Every endpoint of the billing gateway returns money as integer cents.",
    "local": "The scratch service logs requests to the journald socket, never to files.",
    "plain_a": "Feature flags in the inventory tool live in flags.yaml, reviewed weekly.",
    "plain_b": "The reporting job renders charts with vega-lite, never matplotlib.",
}


def git_repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def folders(base: Path) -> dict[str, Path]:
    made = {
        "remote": git_repo(base / "work" / "api", "git@github.com:acme/api.git"),
        "local": git_repo(base / "scratch" / "api"),
        "plain_a": base / "a" / "api",
        "plain_b": base / "b" / "api",
    }
    for name, folder in made.items():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "AGENTS.md").write_text(f"# Rules\n\n- {RULES[name]}\n")
        (folder / "main.py").write_text("print('hi')\n")
    return made


@pytest.fixture
def engines(tmp_path: Path, real_embedder: OnnxEmbedder) -> Iterator[dict[str, Engine]]:
    settings = Settings(db=tmp_path / "shared.db")
    made = {
        name: Engine(settings, folder, embedder=real_embedder)
        for name, folder in folders(tmp_path).items()
    }
    yield made
    for engine in made.values():
        engine.store.close()


def seen(engine: Engine, query: str) -> str:
    recalled = chat.recall(engine, RecallParams(query=query, budget=2000))
    context = chat.context(engine, ContextParams(input=query, mode="turn", budget=4000))
    return recalled.text + context.text


def test_four_folders_named_api_are_four_projects(engines: dict[str, Engine]) -> None:
    assert {e.project.name for e in engines.values()} == {"api"}
    assert len({e.project.scope for e in engines.values()}) == 4


def test_harvesting_one_never_retires_anothers_rules(engines: dict[str, Engine]) -> None:
    for engine in engines.values():  # each harvests AGENTS.md after the others did
        assert engine.harvest(git_limit=0)["created"] >= 1
    for engine in engines.values():
        engine.harvest(git_limit=0)  # and again: unchanged files, nothing retired
    for name, engine in engines.items():
        rows = engine.store._conn.execute(
            "SELECT content, status FROM memories WHERE scope = ? AND source LIKE 'file:%'",
            (engine.project.scope,),
        ).fetchall()
        assert [r for r in rows if RULES[name] in r[0] and r[1] != "inactive"], name
        assert all(r[1] != "inactive" for r in rows), rows


def test_recall_never_shows_another_projects_memories(engines: dict[str, Engine]) -> None:
    for engine in engines.values():
        engine.harvest(git_limit=0)
    engines["remote"].remember(
        Draft(kind="decision", content="The api deploys with the blue-green script in ops/.")
    )
    for name, engine in engines.items():
        # in general, then each rule by its own words (only relevant memories are injected, so
        # asking for another project's rule verbatim is the hard case)
        asks = [
            "api rules: money, logs, flags, charts, deploys",
            *RULES.values(),
            "blue-green deploys",
        ]
        text = "".join(seen(engine, ask) for ask in asks)
        assert RULES[name] in text, name  # sees its own: the test could fail
        for other, rule in RULES.items():
            if other != name:
                assert rule not in text, (name, other)
        assert ("blue-green" in text) == (name == "remote"), name
        assert ("blue-green" in seen(engine, "how does the api deploy")) == (name == "remote")


def test_id_based_methods_act_only_inside_the_requesting_project(
    engines: dict[str, Engine],
) -> None:
    a, b = engines["remote"], engines["local"]
    mine = a.remember(Draft(kind="decision", content="Adopt ruff for linting the api.")).memory
    other = a.remember(Draft(kind="fact", content="The api listens on port 8443.")).memory
    b_own = b.remember(Draft(kind="fact", content="The scratch api listens on 9000.")).memory
    attempts = [
        lambda: b.expand(mine.id),
        lambda: chat.expand(b, mine.id, "b-session"),
        lambda: b.forget(mine.id),
        lambda: b.forget(other.id, purge=True),
        lambda: b.supersede(mine.id, b_own.id),
        lambda: b.supersede(b_own.id, other.id),
        lambda: b.outcome(mine.id, "failure"),
    ]
    for attempt in attempts:
        with pytest.raises(UnknownMemory) as refused:
            attempt()
        with pytest.raises(UnknownMemory) as unknown:
            b.expand("0" * 32)
        # exactly the error of an id that does not exist, with that id in it
        assert type(refused.value) is type(unknown.value)
        assert str(refused.value).replace(refused.value.memory_id, "X") == str(
            unknown.value
        ).replace("0" * 32, "X")
    after = a.expand(mine.id)
    assert after.status == mine.status and after.outcome == mine.outcome
    assert a.expand(other.id).status == other.status
    assert b.expand(b_own.id).superseded_by is None
    # universal and language memories are shared by design: any project may act on them
    shared = a.remember(Draft(kind="preference", content="Prefer tabs", scope="universal"))
    assert b.expand(shared.memory.id).id == shared.memory.id


def test_another_projects_session_id_opens_a_session_of_ones_own(
    engines: dict[str, Engine],
) -> None:
    a, b = engines["remote"], engines["local"]
    a.harvest(git_limit=0)
    injected = chat.context(
        a, ContextParams(input="how is money returned?", mode="turn", session_id="chat-1")
    )
    ids = {i.id for s in injected.sections for i in s.items}
    assert ids
    stolen = chat.feedback(b, FeedbackParams(session_id="chat-1", response=RULES["remote"]))
    assert stolen.referenced == [] and stolen.not_referenced == []
    mine = chat.feedback(a, FeedbackParams(session_id="chat-1", response=RULES["remote"]))
    assert set(mine.referenced) | set(mine.not_referenced) == ids
    assert b.status()["session"] is None or b.status()["session"]["used"] == 0


@pytest.mark.parametrize("scope_of", ["key", "name-of-other", "made-up", "padded-key"])
def test_a_write_naming_another_projects_scope_is_refused(
    engines: dict[str, Engine], scope_of: str
) -> None:
    a, b = engines["remote"], engines["local"]
    scope = {
        "key": a.project.scope,
        "name-of-other": "project:billing",
        "made-up": "project:api-000000000000",
        "padded-key": f"  {a.project.scope}\n",
    }[scope_of]
    with pytest.raises(InvalidMemory, match="scope"):
        b.remember(Draft(kind="fact", content="planted", scope=scope))
    with pytest.raises(InvalidMemory, match="scope"):
        chat.recall(b, RecallParams(query="planted", scope=scope))
    assert a.store._conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


def test_own_scope_by_key_or_name_and_shared_scopes_are_accepted(
    engines: dict[str, Engine],
) -> None:
    b = engines["local"]
    for scope in (None, "project", b.project.scope, f"project:{b.project.name}"):
        written = b.remember(Draft(kind="fact", content=f"own {scope}", scope=scope))
        assert written.memory.scope == b.project.scope
    for scope in ("universal", "language:python", "language"):
        assert not b.remember(
            Draft(kind="fact", content=scope, scope=scope)
        ).memory.scope.startswith("project:")
