"""Unit vectors (`memory.units`, issue 25): one vector per sentence, item or line of a record
harvested from a file, kept current with its content and model, read with the candidates, and
the gate's `ucos` feature: one line of a long section answers what the section as a whole is far
from. Real SQLite files and the real model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nous.context import chat, relevance
from nous.context.config import defaults
from nous.engine import Engine
from nous.memory import units
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.memory.store import Edit, MemoryStore
from nous.protocol import RecallParams
from nous.settings import Settings
from nous.text import tokens

SECTION = """# CLAUDE.md › Simplicity Rules › PRs
- PR descriptions are as simple as possible: what changed and why.
- Keep PRs under 700 lines of code; if a change is larger, propose a split first.
- Link the issue the PR closes.
- Prefer one commit per logical change."""


def _draft(content: str, source: str = "file:CLAUDE.md#prs") -> Draft:
    return Draft(kind="convention", content=content, scope="project:demo", source=source)


def test_a_harvested_record_has_one_vector_per_unit_and_a_remembered_one_none(
    real_store: MemoryStore, real_embedder: OnnxEmbedder
) -> None:
    doc = real_store.remember(_draft(SECTION)).memory
    chat_row = real_store.remember(_draft("Keep PRs small, please.", source="chat")).memory
    one = real_store.remember(_draft("One line only.", source="file:N.md#n")).memory
    read = real_store.candidates([doc.id, chat_row.id, one.id])
    assert set(read.units) == {doc.id}  # a chat memory is one fact; a one-unit record has none
    said = units.texts(doc.content)
    assert read.units[doc.id].shape == (len(said), real_embedder.dimension)
    # each row is the vector of that unit's text: the PR-size line is the one a size question
    # is nearest
    question = real_embedder.embed("Is there a size limit for pull requests?")
    best = said[int(np.argmax(read.units[doc.id] @ question))]
    assert "700 lines" in best
    np.testing.assert_allclose(
        read.units[doc.id][said.index(best)], real_embedder.embed(best), atol=1e-5
    )


def test_unit_vectors_follow_the_content_and_leave_with_the_memory(
    real_store: MemoryStore,
) -> None:
    doc = real_store.remember(_draft(SECTION)).memory
    conn = real_store._conn
    assert units.pending(conn, real_store.model_name) == []
    real_store.edit(doc.id, Edit(content=SECTION + "\n- Squash before merging."))
    # stale: read as absent until computed again (the next store to open the file does)
    assert real_store.candidates([doc.id]).units == {}
    assert units.pending(conn, real_store.model_name) == [doc.id]
    assert units.pending(conn, "another-model") == [doc.id]
    units.fill(conn, real_store._embedder, [doc.id])
    assert real_store.candidates([doc.id]).units[doc.id].shape[0] == len(
        units.texts(real_store.get(doc.id).content)
    )
    real_store.forget(doc.id, purge=True)
    assert conn.execute("SELECT count(*) FROM unit_vectors").fetchone()[0] == 0


def test_a_deferring_store_computes_them_in_the_background_and_on_open(
    tmp_path: Path, real_embedder: OnnxEmbedder
) -> None:
    path = tmp_path / "m.db"
    counter = tokens.counter()
    store = MemoryStore(path, real_embedder, counter, defer_vectors=True)
    doc = store.remember(_draft(SECTION)).memory
    assert store.wait_embedded(timeout=120)
    assert doc.id in store.candidates([doc.id]).units
    with store.write() as conn:  # as a file written before migration 9 is after it
        conn.execute("DELETE FROM unit_vectors")
    store.close()
    again = MemoryStore(path, real_embedder, counter, defer_vectors=True)
    try:
        assert again.wait_embedded(timeout=120)
        assert doc.id in again.candidates([doc.id]).units
    finally:
        again.close()


def test_the_unit_cosine_is_a_gate_feature_and_defaults_to_the_cosine() -> None:
    query = relevance.query("size limit for pull requests", {"size": 1}, 5)
    plain = relevance.features(query, SECTION, relevance.Signals(0.21, 0.5, 0.3))
    lifted = relevance.features(query, SECTION, relevance.Signals(0.21, 0.5, 0.3, False, 0.62))
    ucos = relevance.FEATURES.index("ucos")
    assert plain[ucos] == plain[relevance.FEATURES.index("cosine")] == 0.21
    assert lifted[ucos] == 0.62
    weights = defaults().gate.model
    assert weights.get("ucos", 0) > 0  # the fitted model reads it
    assert relevance.probability(lifted, weights) > relevance.probability(plain, weights)


def test_a_recall_reads_the_units_and_the_gate_rates_the_section_by_its_best_line(
    tmp_path: Path, real_embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Harvest → unit vectors → `Store.candidates` → the `ucos` feature → the gate, in a real
    recall: the section's best line is nearer the question than the section, and the section's
    relevance is higher with its unit vectors than without them."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text(
        "# AGENTS.md\n\n## Working here\n\n"
        "- Use the Makefile targets; do not call cargo directly.\n"
        "- Every public function gets a doc comment with an example.\n"
        "- Branch names start with the ticket number.\n"
        "- Never write customer email addresses or phone numbers to the logs.\n"
        "- Feature flags live in config/flags.yaml and default to off.\n"
        "- Benchmarks run nightly, not on every push.\n\n"
        "## Releases\n\nReleases are cut on Tuesdays. Tag the commit, then run `make release`.\n",
        encoding="utf-8",
    )
    seen: list[tuple[list[float], str]] = []
    features = relevance.features

    def spy(query: relevance.Query, content: str, signals: relevance.Signals) -> list[float]:
        values = features(query, content, signals)
        seen.append((values, content))
        return values

    monkeypatch.setattr(relevance, "features", spy)
    question = "Are we allowed to put customer contact details in log output?"
    engine = Engine(Settings(db=tmp_path / "m.db"), ws, embedder=real_embedder)
    try:
        engine.harvest()
        runs = []
        for read in (units.read, lambda *_: {}):
            monkeypatch.setattr(units, "read", read)
            seen.clear()
            chat.recall(engine, RecallParams(query=question))
            runs.append(next(v for v, c in seen if "Working here" in c))
    finally:
        engine.store.close()
    with_units, without = runs
    cosine, ucos = relevance.FEATURES.index("cosine"), relevance.FEATURES.index("ucos")
    assert without[ucos] == without[cosine]
    assert with_units[ucos] > with_units[cosine] + 0.1  # "Never write customer email …"
    model = defaults().gate.model
    assert relevance.probability(with_units, model) > relevance.probability(without, model)
