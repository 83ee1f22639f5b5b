"""reStructuredText documents (a Python project's CONTRIBUTING.rst, docs/*.rst, RST decision
records) are read through docutils as the Markdown they say and harvested like any other: the
real converter, then the real harvest path (`Engine.harvest`, real model) and a real recall."""

from __future__ import annotations

from pathlib import Path

from nous.context import chat
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.protocol import RecallParams
from nous.settings import Settings
from nous.text import rst
from nous.workspace.harvest import adr, candidates, procedures

CONTRIBUTING = """\
============
Contributing
============

Thanks for your interest!

Development setup
=================

Create a virtualenv and install the package in editable mode::

    python -m venv .venv
    pip install -e ".[dev]"

Running the tests
-----------------

Run the suite with ``tox -e py312``. Integration tests need Docker:

.. code-block:: bash

   tox -e integration

Rules
-----

* Do not commit directly to ``main``.
* Every pull request must add a changelog fragment in ``changes/``.

.. note::

   Releases are cut by the maintainers only.

.. versionadded:: 2.1
   The ``--fast`` flag.

See :ref:`the install guide <install>` and :class:`~calsync.Client`.

.. toctree::
   :maxdepth: 2

   install
"""

ADR = """\
1. Use PostgreSQL for the event store
=====================================

Status
------

Accepted

Context
-------

We need transactions across the event log and the projections.

Decision
--------

We store events in PostgreSQL 16, one table per aggregate type.
"""


def test_sections_lists_code_and_sphinx_markup_become_markdown() -> None:
    text = rst.to_markdown(CONTRIBUTING)
    assert text.startswith("# Contributing\n")
    assert "## Development setup" in text and "### Running the tests" in text
    assert "install the package in editable mode:\n\n```\npython -m venv .venv" in text
    assert "```bash\ntox -e integration\n```" in text
    assert "- Do not commit directly to `main`." in text
    assert "Note: Releases are cut by the maintainers only." in text
    assert "Added in 2.1: The `--fast` flag." in text
    assert "See the install guide and `calsync.Client`." in text  # roles keep their text
    assert "toctree" not in text and "maxdepth" not in text  # site structure is no content


def test_no_file_is_read_from_the_text(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2-do-not-read")
    source = f"Title\n=====\n\n.. include:: {secret}\n\n.. raw:: html\n\n   <b>x</b>\n\nEnd.\n"
    text = rst.to_markdown(source)
    assert "hunter2" not in text and "<b>" not in text and "End." in text


def test_a_role_is_said_plainly() -> None:
    text = "Follow :pep:`8`. Use :pypi:`flake8`, :py:ref:`f-strings <fs>` and :class:`~a.Model`.\n"
    assert rst.to_markdown(text).strip() == "Follow PEP 8. Use flake8, f-strings and `a.Model`."


def test_plain_text_stays_plain() -> None:
    assert rst.to_markdown("plain words, nothing more\n").strip() == "plain words, nothing more"
    assert rst.to_markdown("").strip() == ""


def test_rst_documents_and_records_are_harvested(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    assert procedures.matches("CONTRIBUTING.rst") and procedures.matches("docs/development.rst")
    assert not procedures.matches("CHANGES.rst") and adr.matches("docs/adr/0001-use-pg.rst")
    assert procedures.matches("docs/internals/contributing/writing-code/unit-tests.rst")
    assert not procedures.matches("docs/ref/models/fields.rst")  # a manual: how to use it
    assert not procedures.matches("docs/topics/testing/overview.rst")  # a manual's chapter
    # Sphinx sources kept as .txt in a docs folder (Django's), not release notes nor other .txt
    assert procedures.matches("docs/internals/contributing/writing-code/coding-style.txt")
    assert not procedures.matches("docs/releases/5.1.txt")
    assert not procedures.matches("requirements.txt") and not procedures.matches(
        "docs/requirements.txt"
    )
    ws = tmp_path / "ws"
    (ws / "docs" / "adr").mkdir(parents=True)
    (ws / "CONTRIBUTING.rst").write_text(CONTRIBUTING)
    (ws / "docs" / "internals").mkdir(parents=True)  # Sphinx sources as .txt, as Django's
    (ws / "docs" / "internals" / "release-process.txt").write_text(
        "Release process\n===============\n\nFeature releases happen every eight months.\n"
    )
    (ws / "docs" / "adr" / "0001-use-postgresql.rst").write_text(ADR)
    assert {"CONTRIBUTING.rst", "docs/adr/0001-use-postgresql.rst"} <= set(
        candidates.plan(ws).paths
    )
    engine = Engine(Settings(db=tmp_path / "memory.db"), ws, embedder=real_embedder)
    try:
        assert engine.harvest()["errors"] == []
        rows = engine.store._conn.execute(
            "SELECT source, kind, status, content FROM memories WHERE source LIKE 'file:%'"
        ).fetchall()
        [decision] = [r for r in rows if r[0] == "file:docs/adr/0001-use-postgresql.rst#adr-1"]
        assert decision[1] == "decision" and "PostgreSQL 16" in decision[3]
        [release] = [r for r in rows if "every eight months" in r[3]]
        assert release[3].startswith("# docs/internals/release-process.txt: Release process")
        [rules] = [r for r in rows if "changelog fragment" in r[3]]
        assert rules[0].startswith("file:CONTRIBUTING.rst#") and "`main`" in rules[3]
        recall = chat.recall(
            engine,
            RecallParams(query="do I need a changelog entry for my pull request?", budget=500),
        )
        said = "\n".join(i.text for s in recall.sections for i in s.items)
        assert "changelog fragment" in said
    finally:
        engine.store.close()
