"""The team store (design §13) against a real PostgreSQL with pgvector that the tests start:
users on separate machines (separate SQLite files, separate processes) share team memories,
projects stay apart on one server, secrets never leave, and a team server that is down or hung
never stops a local answer."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nous.context import chat
from nous.engine import Engine
from nous.errors import InvalidMemory, UnknownMemory
from nous.memory.model import Draft
from nous.memory.team import Row, TeamStore
from nous.protocol import ListParams, RecallParams, UpdateParams
from nous.settings import Settings

from .conftest import REMOTE_A, REMOTE_B, clone, rows

NOUS = [sys.executable, "-m", "nous"]
AWS = "AKIAQ4F2VJ7PXN3LT5WE"
GITHUB = "ghp_" + "8fK2mQ7xZ1pL4sV9nB3cR6tY0wE5uJ2hG7aD"


def nous(db: Path, workspace: Path, url: str, *args: str) -> Any:
    result = subprocess.run(
        [*NOUS, "--json", *args, "--db", str(db), "--workspace", str(workspace),
         "--team-store", url],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def items(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for section in answer["sections"] for i in section["items"]]


def recall(engine: Engine, query: str) -> Any:
    return chat.recall(engine, RecallParams(query=query))


@pytest.fixture
def engines(tmp_path: Path, team_url: str, real_embedder: Any) -> Iterator[list[Engine]]:
    """Two users of one project: separate files, one team server."""
    made = [
        Engine(Settings(db=tmp_path / f"{user}.db", team_store=team_url),
               clone(tmp_path / user), embedder=real_embedder)
        for user in ("ana", "ben")
    ]  # fmt: skip
    yield made
    for engine in made:
        engine.close()


def pushed(engine: Engine) -> None:
    team = engine.store.team
    assert team is not None
    assert team.flush(30.0), team.status(engine.store.outbox.count(engine.project.scope))


# -- sharing between users -------------------------------------------------------------------


def test_two_users_processes_see_each_others_team_memories(tmp_path: Path, team_url: str) -> None:
    ana_ws, ben_ws = clone(tmp_path / "ana"), clone(tmp_path / "ben")
    ana_db, ben_db = tmp_path / "ana.db", tmp_path / "ben.db"
    wrote = nous(ana_db, ana_ws, team_url, "remember", "--kind", "decision", "--scope", "team",
                 "We deploy the api with blue-green releases behind the nginx load balancer")  # fmt: skip
    nous(ben_db, ben_ws, team_url, "remember", "--kind", "convention", "--scope", "team",
         "Database migrations are written with alembic and reviewed by two people")  # fmt: skip

    seen_by_ben = nous(ben_db, ben_ws, team_url, "recall", "how do we deploy the api?")
    found = {i["id"]: i for i in items(seen_by_ben)}
    assert wrote["id"] in found
    assert found[wrote["id"]]["origin"] == "team"
    assert "blue-green" in seen_by_ben["text"]
    seen_by_ana = nous(ana_db, ana_ws, team_url, "recall", "how are database migrations written?")
    assert "alembic" in seen_by_ana["text"]
    assert {i["origin"] for i in items(seen_by_ana)} == {"team"}

    # Ben's file never held Ana's memory: his local list does not, his team list does
    local = nous(ben_db, ben_ws, team_url, "list")
    assert wrote["id"] not in {m["id"] for m in local["items"]}
    team = nous(ben_db, ben_ws, team_url, "list", "--origin", "team")
    listed = {m["id"]: m for m in team["items"]}
    assert listed[wrote["id"]]["origin"] == "team" and listed[wrote["id"]]["shared"]
    assert team["total"] == 2


def test_a_memory_marked_shared_in_the_browser_reaches_the_team(engines: list[Engine]) -> None:
    from nous import browsing

    ana, ben = engines
    memory = ana.remember(
        Draft(kind="fact", content="The staging cluster runs in eu-west-1")
    ).memory
    assert not memory.shared
    updated = browsing.update(ana, UpdateParams(id=memory.id, shared=True))
    assert updated.memory.shared and "shared" in updated.changed
    pushed(ana)
    assert "eu-west-1" in recall(ben, "which region is the staging cluster in?").text

    browsing.update(ana, UpdateParams(id=memory.id, shared=False))  # taken back: gone from team
    pushed(ana)
    assert memory.id not in _team_ids(ben)


def test_a_team_memory_someone_else_forgets_is_gone_for_everyone(engines: list[Engine]) -> None:
    ana, ben = engines
    old = ana.remember(Draft(kind="decision", scope="team",
                             content="Feature flags live in LaunchDarkly")).memory  # fmt: skip
    pushed(ana)
    assert "LaunchDarkly" in recall(ben, "where do feature flags live?").text
    forgotten = ben.forget(old.id)
    assert forgotten.status == "inactive" and forgotten.origin == "team"
    pushed(ben)
    assert _team_status(ben, old.id) == "inactive"
    with pytest.raises(InvalidMemory):  # someone else's team memory is not edited in place
        from nous import browsing

        browsing.update(ben, UpdateParams(id=old.id, content="changed"))


def test_supersede_a_team_memory_with_a_new_one(engines: list[Engine]) -> None:
    ana, ben = engines
    old = ana.remember(Draft(kind="decision", scope="team", content="CI runs on Jenkins")).memory
    pushed(ana)
    recall(ben, "where does CI run?")  # ben's search brings ana's memory in
    new = ben.remember(Draft(kind="decision", scope="team",
                             content="CI runs on GitHub Actions since March")).memory  # fmt: skip
    done = ben.supersede(old.id, new.id)
    assert done.status == "superseded" and done.superseded_by == new.id
    pushed(ben)
    assert _team_status(ben, old.id) == "superseded"


# -- what leaves the machine -------------------------------------------------------------------


def test_secrets_are_redacted_before_they_reach_the_team_store(
    engines: list[Engine], team_url: str
) -> None:
    ana, _ = engines
    result = ana.remember(Draft(
        kind="fact", scope="team", tags=[f"key-{GITHUB}"], source=f"chat:{AWS}",
        content=f"Deploy with AWS key {AWS} and the GitHub token {GITHUB} from the vault",
    ))  # fmt: skip
    assert result.redactions
    pushed(ana)
    stored = rows(team_url, "SELECT content, summary, micro, tags, source FROM nous_memories")
    assert len(stored) == 1
    text = json.dumps(stored)
    assert AWS not in text and GITHUB not in text
    assert "Deploy with AWS key" in text


def test_only_team_and_shared_memories_leave_the_machine(
    engines: list[Engine], team_url: str
) -> None:
    ana, _ = engines
    ana.remember(Draft(kind="fact", content="My local scratch note about the api"))
    ana.remember(Draft(kind="preference", scope="universal", content="I like short answers"))
    ana.remember(Draft(kind="fact", scope="team", content="The api listens on port 8443"))
    pushed(ana)
    assert [r[0] for r in rows(team_url, "SELECT content FROM nous_memories")] == [
        "The api listens on port 8443"
    ]
    with pytest.raises(InvalidMemory, match="team store"):
        ana.store.remember(Draft(kind="fact", scope="universal", content="x y z", shared=True))


# -- isolation ---------------------------------------------------------------------------------


def test_project_b_never_sees_project_a_rows_on_one_server(
    tmp_path: Path, team_url: str, real_embedder: Any
) -> None:
    def engine(name: str, remote: str) -> Engine:
        return Engine(Settings(db=tmp_path / f"{name}.db", team_store=team_url),
                      clone(tmp_path / name, remote), embedder=real_embedder)  # fmt: skip

    api, billing = engine("api", REMOTE_A), engine("billing", REMOTE_B)
    try:
        assert api.project.key != billing.project.key
        secret_plan = "The api rate limit is 300 requests per minute per token"
        a = api.remember(Draft(kind="decision", scope="team", content=secret_plan)).memory
        b = billing.remember(Draft(kind="decision", scope="team",
                                   content="Invoices are generated nightly at 02:00 UTC")).memory  # fmt: skip
        pushed(api)
        pushed(billing)
        assert len(rows(team_url)) == 2  # both on the one server

        answer = recall(billing, "what is the api rate limit per minute?")
        assert a.id not in {i.id for s in answer.sections for i in s.items}
        assert "300 requests" not in answer.text
        team = billing.store.team
        assert team is not None
        vector = billing.store.embed(secret_plan)
        hits = team.collect(team.start(secret_plan, vector, 50, None), timeout=10)
        assert [h.memory.id for h in hits] == [b.id]  # even unscoped, with A's exact words

        with pytest.raises(UnknownMemory):  # A's id is unknown to B, as any unknown id
            billing.expand(a.id)
        with pytest.raises(UnknownMemory):
            billing.forget(a.id)
        store_b = TeamStore(team_url, billing.project.key, 384, billing.store.model_name)
        try:
            assert store_b.get_many([a.id]) == {} and store_b.vectors([a.id]) == {}
            assert store_b.ids() == [b.id]
            # a row of A's id pushed under B's key never overwrites A's row
            fields = {**a.model_dump(), "content": "overwritten", "updated_at": "9999"}
            store_b.put_many([Row(fields, vector, billing.store.model_name)])
        finally:
            store_b.close()
        assert rows(team_url, f"SELECT content FROM nous_memories WHERE id = '{a.id}'") == [
            (secret_plan,)
        ]
        listed = billing_list(billing)
        assert [m.id for m in listed.items] == [b.id]
    finally:
        api.close()
        billing.close()


def billing_list(engine: Engine) -> Any:
    from nous import browsing

    return browsing.list_memories(engine, ListParams(origin="team"))


# -- retries, idempotence, migrations ----------------------------------------------------------


def test_pushing_the_same_rows_again_changes_nothing(engines: list[Engine], team_url: str) -> None:
    ana, _ = engines
    memory = ana.remember(Draft(kind="fact", scope="team", content="Logs ship to Loki")).memory
    pushed(ana)
    store = TeamStore(team_url, ana.project.key, 384, ana.store.model_name)
    try:
        vector = ana.store.vectors([memory.id])[memory.id]
        newer = {**memory.model_dump(), "content": "Logs ship to Loki via promtail",
                 "updated_at": "2999-01-01T00:00:00.000Z"}  # fmt: skip
        older = {**memory.model_dump(), "content": "Logs ship to syslog",
                 "updated_at": "2000-01-01T00:00:00.000Z"}  # fmt: skip
        for _ in range(3):  # a retried batch is one row
            store.put_many([Row(newer, vector, ana.store.model_name)])
        store.put_many([Row(older, vector, ana.store.model_name)])  # late: never wins
        assert store.count() == 1
        assert store.get(memory.id).content == newer["content"]
        assert store.schema_version() == 1
    finally:
        store.close()
    again = TeamStore(team_url, ana.project.key, 384, ana.store.model_name)  # migrations: once
    try:
        assert again.schema_version() == 1
        assert rows(team_url, "SELECT count(*) FROM nous_team_schema") == [(1,)]
    finally:
        again.close()


def test_team_store_offers_the_shared_verbs_of_the_store_interface(
    engines: list[Engine], team_url: str
) -> None:
    from nous.memory.interface import SharedStore

    ana, _ = engines
    texts = ["Payments retry three times with exponential backoff",
             "The frontend is built with Vite and React",
             "Postgres backups run every night at 03:00"]  # fmt: skip
    made = [ana.remember(Draft(kind="decision", scope="team", content=t)).memory for t in texts]
    pushed(ana)
    store = TeamStore(team_url, ana.project.key, 384, ana.store.model_name)
    try:
        assert isinstance(store, SharedStore)
        query = ana.store.embed("how often are the database backups taken?")
        assert store.vector_search(query, 3, [ana.project.scope])[0][0] == made[2].id
        assert [i for i, _ in store.text_search("Vite frontend", 5)] == [made[1].id]
        assert store.vector_search(query, 3, ["project:someone-else"]) == []
        assert set(store.get_many([m.id for m in made])) == {m.id for m in made}
        assert store.forget(made[0].id).status == "inactive"  # left out of both searches
        assert made[0].id not in [i for i, _ in store.text_search("payments retry backoff", 5)]
        assert store.supersede(made[1].id, made[2].id).superseded_by == made[2].id
        with pytest.raises(InvalidMemory):
            store.forget(made[2].id, purge=True)  # decisions are never deleted
        with pytest.raises(UnknownMemory):
            store.get("no-such-id")
    finally:
        store.close()
    methods = {r[0]: r[1] for r in rows(team_url, "SELECT indexname, indexdef FROM pg_indexes "
                                                   "WHERE tablename = 'nous_memories'")}  # fmt: skip
    assert "hnsw (embedding vector_cosine_ops)" in methods["nous_memories_embedding"]
    assert "gin (tsv)" in methods["nous_memories_tsv"]


def test_four_writer_processes_lose_nothing_and_duplicate_nothing(
    tmp_path: Path, team_url: str
) -> None:
    procs = [write(tmp_path, f"user{n}", team_url, "25", f"w{n}") for n in range(4)]
    acked: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        acked += [line.split()[1] for line in out.splitlines() if line.startswith("ack ")]
        assert out.splitlines()[-1] == "queued 0"
    assert len(acked) == 100 == len(set(acked))
    stored = rows(team_url, "SELECT id, content FROM nous_memories")
    assert sorted(r[0] for r in stored) == sorted(acked)
    assert len({r[1] for r in stored}) == 100


def write(tmp_path: Path, user: str, url: str, *args: str) -> subprocess.Popen[str]:
    """One user's writer process (`team_writer.py`) on a file and a checkout of its own."""
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("team_writer.py")),
         str(tmp_path / f"{user}.db"), str(clone(tmp_path / user)), url, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


# -- the team server down, hung, killed ---------------------------------------------------------


def test_team_server_down_never_stops_a_local_answer(tmp_path: Path, real_embedder: Any) -> None:
    nowhere = f"postgresql://nous@/nous?host={tmp_path / 'no-server'}"
    engine = Engine(Settings(db=tmp_path / "m.db", team_store=nowhere), clone(tmp_path / "ws"),
                    embedder=real_embedder)  # fmt: skip
    try:
        engine.remember(Draft(kind="convention", content="Use ruff for linting Python code"))
        wrote = engine.remember(Draft(kind="decision", scope="team",
                                      content="Releases are cut every second Tuesday"))  # fmt: skip
        assert wrote.status == "created"  # acknowledged: committed here, queued for the team
        answer = recall(engine, "which linter do we use for Python?")
        assert "ruff" in answer.text
        assert "Releases are cut" in recall(engine, "when are releases cut?").text  # local copy
        status = engine.status()["team"]
        assert status["state"] == "down" and status["queued"] == 1
        assert "no-server" in (status["lastError"] or "")
    finally:
        engine.close()


def test_hung_team_server_never_stops_a_local_answer(tmp_path: Path, real_embedder: Any) -> None:
    silent = socket.socket()  # accepts connections on loopback, never says a word
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(silent.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    url = f"postgresql://nous@127.0.0.1:{silent.getsockname()[1]}/nous"
    engine = Engine(Settings(db=tmp_path / "m.db", team_store=url), clone(tmp_path / "ws"),
                    embedder=real_embedder)  # fmt: skip
    try:
        engine.remember(Draft(kind="convention", content="Use ruff for linting Python code"))
        for _ in range(3):
            assert "ruff" in recall(engine, "which linter do we use for Python?").text
        assert engine.status()["team"]["state"] in ("slow", "down", "connecting")
    finally:
        engine.close()
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        silent.close()


def test_killing_the_team_server_mid_write_loses_no_acknowledged_write(
    tmp_path: Path, real_embedder: Any
) -> None:
    import pgserver
    import psutil

    from .conftest import database_url

    server = pgserver.get_server(tmp_path / "pg", cleanup_mode="stop")
    url = database_url(server)
    writer = write(tmp_path, "writer", url, "40", "k", "0.05", "120")
    reader = Engine(Settings(db=tmp_path / "r.db", team_store=url), clone(tmp_path / "reader"),
                    embedder=real_embedder)  # fmt: skip
    acked: list[str] = []
    try:
        assert writer.stdout is not None
        for line in writer.stdout:
            acked.append(line.split()[1])
            if len(acked) == 10:
                break
        postmaster = psutil.Process(server.get_pid())
        doomed = [postmaster, *postmaster.children(recursive=True)]
        for proc in doomed:
            proc.kill()
        psutil.wait_procs(doomed, timeout=30)

        # the server is gone: the writer keeps acknowledging, the reader keeps answering
        reader.remember(Draft(kind="convention", content="Use ruff for linting Python code"))
        assert "ruff" in recall(reader, "which linter do we use for Python?").text
        for line in writer.stdout:
            if not line.startswith("ack "):
                tail = line
                break
            acked.append(line.split()[1])
            if len(acked) == 25:
                assert reader.status()["team"]["state"] in ("down", "slow")
                server.ensure_postgres_running()  # back: the outboxes drain
        else:
            tail = ""
        out, err = writer.communicate(timeout=180)
        assert writer.returncode == 0, err
        assert (tail + out).strip().splitlines()[-1] == "queued 0"
    finally:
        if writer.poll() is None:
            writer.kill()
        reader.close()
    assert len(acked) == 40
    stored = [r[0] for r in rows(url, "SELECT id FROM nous_memories")]
    assert sorted(stored) == sorted(acked)  # every acknowledged write, each once
    server.cleanup()


# -- settings: the password never sits in synced settings -------------------------------------


def test_a_password_in_the_settings_url_is_refused_without_echoing_it() -> None:
    from nous import settings as settings_module

    loaded, problems = settings_module.load(
        {"teamStore": "postgresql://nous:hunter2secret@db.internal:5432/nous"}
    )
    assert loaded.team_store is None
    assert len(problems) == 1 and "NOUS_TEAM_STORE_PASSWORD" in problems[0]
    assert "hunter2secret" not in problems[0]
    ok, none = settings_module.load({"teamStore": "postgresql://nous@db.internal:5432/nous"})
    assert ok.team_store == "postgresql://nous@db.internal:5432/nous" and not none


def test_the_cli_refuses_a_password_on_the_command_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [*NOUS, "status", "--db", str(tmp_path / "m.db"), "--team-store",
         "postgresql://nous:hunter2secret@db.internal/nous"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert "--team-store" in result.stderr and "hunter2secret" not in result.stderr


def test_the_password_comes_from_the_environment() -> None:
    from nous import settings as settings_module
    from nous.memory import team_url

    url = "postgresql://nous@db.internal/nous"
    loaded, problems = settings_module.load(
        env={"NOUS_TEAM_STORE": url, "NOUS_TEAM_STORE_PASSWORD": "s3cret"}
    )
    assert loaded.team_store == url and problems == []
    secret = loaded.team_store_password
    assert secret is not None and "s3cret" not in repr(loaded)
    assert team_url.password(url, secret.get_secret_value()) == "s3cret"
    assert settings_module.load(env={})[0].team_store is None
    # only the environment may hold the password in the URL itself (psycopg reads it there)
    inline = "postgresql://nous:s3cret@db/nous"
    assert settings_module.load(env={"NOUS_TEAM_STORE": inline})[0].team_store == inline
    assert team_url.password(inline, "other") is None
    assert team_url.redact(inline) == "postgresql://nous:***@db/nous"
    bad, problems = settings_module.load(env={"NOUS_TEAM_STORE": "mysql://db/nous"})
    assert bad.team_store is None and len(problems) == 1 and "NOUS_TEAM_STORE" in problems[0]
    with pytest.raises(team_url.BadTeamUrl):
        team_url.check("mysql://db/nous")


def test_status_reports_the_team_store_state(engines: list[Engine], real_embedder: Any) -> None:
    ana, _ = engines
    recall(ana, "anything at all about the api")
    pushed(ana)
    team = ana.status()["team"]
    assert team["state"] == "up" and team["queued"] == 0
    assert team["url"].startswith("postgresql://")
    alone = Engine(Settings(db=ana.settings.db), ana.folder, embedder=real_embedder)
    try:
        assert alone.team_status()["state"] == "off"
    finally:
        alone.close()


def _team_ids(engine: Engine) -> list[str]:
    store = TeamStore(_url(engine), engine.project.key, 384, engine.store.model_name)
    try:
        return store.ids()
    finally:
        store.close()


def _team_status(engine: Engine, memory_id: str) -> str:
    store = TeamStore(_url(engine), engine.project.key, 384, engine.store.model_name)
    try:
        return store.get(memory_id).status
    finally:
        store.close()


def _url(engine: Engine) -> str:
    assert engine.settings.team_store is not None
    return engine.settings.team_store
