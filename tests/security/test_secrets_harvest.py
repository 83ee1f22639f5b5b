"""The harvest channel (issue 28): secrets written in a workspace's documents never reach the
memory file, and look-alikes in them come back whole. Every secret of the provider families
(and the first of every other format) is one section of a Markdown document, harvested by the
real `nous harvest` (subprocess, real model) into a real SQLite file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.security import corpus, family_formats, fields, lookalike_families

DATA = corpus.generate()
FAMILY_NAMES = {name for names in family_formats.FAMILIES.values() for name in names}
PER_DOC = 40


def _sections(texts: list[str], title: str) -> list[str]:
    """One Markdown document per PER_DOC texts, each text a section of its own."""
    docs = []
    for start in range(0, len(texts), PER_DOC):
        parts = [f"# {title} {start // PER_DOC}\n"]
        for n, text in enumerate(texts[start : start + PER_DOC]):
            parts.append(f"## Note {start + n}\n\nWhat we wrote down for the deploy:\n\n{text}\n")
        docs.append("\n".join(parts))
    return docs


@pytest.fixture(scope="module")
def harvested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("harvest-secrets")
    workspace = base / "billing"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "pyproject.toml").write_text('[project]\nname = "billing"\n')
    first: dict[str, corpus.Secret] = {}
    for s in DATA.secrets:
        first.setdefault(s.format, s)
    secrets = [s.text for s in DATA.secrets if s.format in FAMILY_NAMES]
    secrets += [s.text for s in first.values() if s.format not in FAMILY_NAMES]
    lookalikes = [la.text for la in DATA.lookalikes if la.kind in lookalike_families.WIDE]
    for i, doc in enumerate(_sections(secrets, "Ops notes")):
        (workspace / "docs" / f"ops-{i}.md").write_text(doc)
    for i, doc in enumerate(_sections(lookalikes, "Reference")):
        (workspace / "docs" / f"reference-{i}.md").write_text(doc)
    env = {**os.environ, "NOUS_DB": str(base / "memory.db")}
    done = subprocess.run(
        [sys.executable, "-m", "nous", "--json", "harvest"], env=env, cwd=workspace,
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["created"] > 0
    return base / "memory.db"


def _rows(db: Path, prefix: str) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT content FROM memories WHERE source LIKE ?", (f"file:docs/{prefix}%",)
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


@pytest.mark.parametrize("family", sorted(family_formats.FAMILIES))
def test_harvested_documents_keep_no_secret_of_the_family(harvested: Path, family: str) -> None:
    stored = fields.database_bytes(harvested)
    members = [s for s in DATA.secrets if s.format in family_formats.FAMILIES[family]]
    leaked = [s.text for s in members if fields.leaks(s.values, stored)]
    assert len(members) >= 20 and len(leaked) <= 0.01 * len(members), leaked


def test_harvested_documents_keep_no_secret_of_any_format(harvested: Path) -> None:
    stored = fields.database_bytes(harvested)
    first: dict[str, corpus.Secret] = {}
    for s in DATA.secrets:
        first.setdefault(s.format, s)
    assert [s.text for s in first.values() if fields.leaks(s.values, stored)] == []
    assert sum("[REDACTED:" in row for row in _rows(harvested, "ops-")) >= 0.9 * len(first)


def test_harvested_look_alikes_are_not_redacted(harvested: Path) -> None:
    rows = _rows(harvested, "reference-")
    assert len(rows) >= len(lookalike_families.WIDE) * lookalike_families.PER_CLASS_WIDE * 0.5
    assert [row[:200] for row in rows if "[REDACTED" in row] == []
