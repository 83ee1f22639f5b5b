"""The in-memory vector index keeps int8 rows with a scale each: its cosines and its top-k must
track the exact float32 ones on real model vectors, and a bulk load must equal one-by-one puts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from nous.memory.embedder import HashEmbedder, OnnxEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.memory.vectors import LOAD_ROWS, VectorIndex, quantise
from nous.text import tokens

SENTENCES = [
    f"{subject} {verb} {thing}"
    for subject in ("The order service", "Our CI pipeline", "The billing team", "Every migration")
    for verb in ("must use", "never calls", "is tested against", "depends on")
    for thing in ("PostgreSQL 16", "the payments API", "a feature flag", "ruff and mypy")
]


def test_quantised_cosines_track_the_exact_ones(real_embedder: OnnxEmbedder) -> None:
    vectors = real_embedder.embed_batch(SENTENCES)
    index = VectorIndex(real_embedder.dimension, real_embedder.name)
    for i, vector in enumerate(vectors):
        index.put(str(i), "project", True, vector)
    query = real_embedder.embed_batch(["which database does the order service use?"])[0]
    exact = vectors @ query
    got = dict(index.search(query, len(SENTENCES)))
    errors = [abs(got[str(i)] - float(exact[i])) for i in range(len(SENTENCES))]
    assert max(errors) < 0.01, max(errors)
    assert index.search(query, 3)[0][0] == str(int(np.argmax(exact)))
    stored = index.vectors(["5"])["5"]
    assert float(stored @ vectors[5]) > 0.999


def test_a_zero_vector_quantises_without_dividing_by_zero() -> None:
    values, scales = quantise(np.zeros((2, 8), dtype=np.float32))
    assert (scales == 1.0).all() and not values.any()


def test_a_bulk_load_over_several_blocks_equals_single_puts(tmp_path: Path) -> None:
    """`pull` quantises stored rows a block at a time; more rows than a block must land in the
    same rows with the same values as putting them one by one, scopes and exclusion kept."""
    store = MemoryStore(tmp_path / "m.db", HashEmbedder(), tokens.counter())
    words = [f"w{i}" for i in range(60)]
    texts = [
        f"{words[i % 60]} {words[i // 60 % 60]} {words[i % 7]} {i}" for i in range(LOAD_ROWS + 40)
    ]
    ids = [r.memory.id for r in store.remember_many([Draft(content=t, kind="fact") for t in texts])]
    store.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    loaded = VectorIndex(384, HashEmbedder().name)
    loaded.pull(conn)
    single = VectorIndex(384, HashEmbedder().name)
    for memory_id, blob in conn.execute("SELECT id, embedding FROM memories"):
        single.put(memory_id, "project", True, blob)
    query = HashEmbedder().embed_batch(["w3 w17 w5"])[0]
    assert len(loaded) == len(ids) == len(single)
    assert loaded.search(query, 20) == single.search(query, 20)
    assert loaded.search(query, 5, scopes=["other"]) == []
