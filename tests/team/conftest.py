"""A real PostgreSQL 16 with pgvector for the team-store tests, started by the tests themselves
(`pgserver` ships both), under pytest's temporary directory; one fresh database per test."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pgserver
import psycopg
import pytest

REMOTE_A = "https://example.com/team/api.git"
REMOTE_B = "https://example.com/other/billing.git"


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pgserver.PostgresServer]:
    server = pgserver.get_server(tmp_path_factory.mktemp("pg") / "data", cleanup_mode="stop")
    yield server
    server.cleanup()


def database_url(server: pgserver.PostgresServer) -> str:
    """A new, empty database on `server`: its URL (a Unix socket, no network)."""
    base = server.get_uri()
    name = f"nous_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


@pytest.fixture
def team_url(pg_server: pgserver.PostgresServer) -> str:
    return database_url(pg_server)


def clone(path: Path, remote: str = REMOTE_A) -> Path:
    """A checkout of the team's repository (same remote → same project key on every machine)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def rows(url: str, sql: str = "SELECT * FROM nous_memories") -> list[tuple[object, ...]]:
    """Read the team database directly (what actually left the machine)."""
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql).fetchall())
