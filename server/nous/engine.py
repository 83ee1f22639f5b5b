"""The use-case layer shared by the CLI and the daemon: one workspace, one store, one encoding.

Everything here is plain Python (no server): resolve the project, pick the scopes a read may see,
and run remember / recall / expand / forget / status against the store.
"""

from __future__ import annotations

import json
import logging
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from nous.context.recall import RecallResult, recall
from nous.errors import InvalidMemory
from nous.memory import embedder as embedders
from nous.memory import tokens
from nous.memory.embedder import Embedder
from nous.memory.model import Draft, Memory
from nous.memory.store import MemoryStore, WriteResult, default_path
from nous.settings import Settings
from nous.workspace import detect, identity

log = logging.getLogger(__name__)


class Engine:
    """Nous for one workspace folder."""

    def __init__(
        self,
        settings: Settings,
        workspace: Path | str,
        embedder: Embedder | None = None,
        active_language: str | None = None,
    ) -> None:
        self.settings = settings
        self.workspace = Path(workspace).resolve()
        self.project = identity.resolve(self.workspace)
        self.active_language = active_language
        self._embedder = embedder

    @cached_property
    def languages(self) -> list[str]:
        return detect.languages(self.workspace, active=self.active_language)

    @cached_property
    def store(self) -> MemoryStore:
        embedder = self._embedder or embedders.default_embedder(self.settings.embedding_model)
        path = self.settings.db or default_path()
        return MemoryStore(path, embedder, tokens.counter(self.settings.encoding))

    def scopes(self) -> list[str]:
        """What a read may see: this project, its languages, universal — never another project."""
        return [self.project.scope, *(f"language:{lang}" for lang in self.languages), "universal"]

    def resolve_scope(self, scope: str | None) -> str:
        """`project` (or none) → this project's scope; `language` → the main language's."""
        if scope in (None, "", "project"):
            return self.project.scope
        if scope == "language":
            if not self.languages:
                return "universal"
            return f"language:{self.languages[0]}"
        return scope

    def remember(self, draft: Draft) -> WriteResult:
        draft = draft.model_copy(update={"scope": self.resolve_scope(draft.scope)})
        return self.store.remember(draft)

    def import_file(self, path: Path | None = None) -> list[WriteResult]:
        """Remember every memory of a JSON list / JSON-lines file (default: the demo set)."""
        if path is None:
            text = resources.files("nous").joinpath("data/project_memories.json").read_text()
        else:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except OSError as exc:
                raise InvalidMemory(f"cannot read {path}: {exc.strerror}") from exc
        try:
            stripped = text.lstrip()
            rows = (
                json.loads(text)
                if stripped.startswith("[")
                else [json.loads(line) for line in text.splitlines() if line.strip()]
            )
            drafts = [Draft.model_validate(row) for row in rows]
        except (ValueError, TypeError) as exc:
            raise InvalidMemory(f"{path or 'demo set'} is not a list of memories: {exc}") from exc
        return self.store.remember_many(
            [d.model_copy(update={"scope": self.resolve_scope(d.scope)}) for d in drafts]
        )

    def recall(
        self, query: str, budget: int | None = None, kinds: list[str] | None = None
    ) -> RecallResult:
        return recall(
            self.store, query, self.scopes(), budget or self.settings.recall_budget, kinds
        )

    def expand(self, memory_id: str) -> Memory:
        return self.store.get(memory_id)

    def forget(self, memory_id: str, purge: bool = False) -> Memory:
        return self.store.forget(memory_id, purge)

    def supersede(self, memory_id: str, new_id: str) -> Memory:
        return self.store.supersede(memory_id, new_id)

    def outcome(self, memory_id: str, outcome: str) -> Memory:
        return self.store.set_outcome(memory_id, outcome)

    def status(self) -> dict[str, Any]:
        store = self.store
        counts = store.counts()
        return {
            "project": self.project.id,
            "projectSource": self.project.source,
            "languages": self.languages,
            "database": str(store.path),
            "databaseBytes": store.size_bytes(),
            "memories": sum(sum(by.values()) for by in counts.values()),
            "counts": counts,
            "model": store.embedder.name,
            "dimension": store.embedder.dimension,
            "encoding": store.counter.name,
        }
