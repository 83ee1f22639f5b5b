"""Shared fixtures: a real SQLite file per test, real token counting, the real model once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nous import settings
from nous.memory.embedder import HashEmbedder, OnnxEmbedder, default_embedder
from nous.memory.store import MemoryStore
from nous.text import tokens

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def real_embedder() -> OnnxEmbedder:
    return default_embedder()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    """A store on a real file with the deterministic embedder (pure-logic tests)."""
    s = MemoryStore(tmp_path / "memory.db", HashEmbedder(), tokens.counter())
    yield s
    s.close()


@pytest.fixture
def real_store(tmp_path: Path, real_embedder: OnnxEmbedder) -> Iterator[MemoryStore]:
    """A store on a real file with the real ONNX model."""
    s = MemoryStore(tmp_path / "memory.db", real_embedder, tokens.counter())
    yield s
    s.close()


@pytest.fixture
def environment() -> Iterator[Callable[..., settings.Settings]]:
    """`environment(NOUS_MODELS_DIR=...)`: the settings read from these variables, installed as
    an entry point installs them (`settings.load` + `settings.install`); the defaults again
    afterwards."""

    def use(**env: str) -> settings.Settings:
        loaded, problems = settings.load(env=env)
        assert problems == []
        settings.install(loaded)
        return loaded

    yield use
    settings.install(settings.Settings())
