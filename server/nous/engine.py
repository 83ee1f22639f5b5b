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

from nous.context import config as configs
from nous.context import frame as frames
from nous.context import pipeline
from nous.context import session as sessions
from nous.context.config import Config
from nous.errors import InvalidMemory, UnknownMemory
from nous.memory import embedder as embedders
from nous.memory import projects, tokens, usage
from nous.memory.embedder import Embedder, Vector
from nous.memory.model import Draft, Memory
from nous.memory.store import MemoryStore, WriteResult, default_path
from nous.memory.usage import Session
from nous.protocol import (
    ContextParams,
    ContextResult,
    FeedbackParams,
    FeedbackResult,
    RecallParams,
    SessionUse,
)
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
        self.active_file: str | None = None
        self.task: str | None = None
        self.index_state = "pending"
        """`pending`, `indexing` or `ready`: set by the daemon around the startup harvest."""
        self.last_session: str | None = None
        self._embedder = embedder
        self._topic: Vector | None = None
        self.config: Config
        self.config, self.problems = configs.load(self.workspace)

    @cached_property
    def languages(self) -> list[str]:
        return detect.languages(self.workspace, active=self.active_language)

    @cached_property
    def store(self) -> MemoryStore:
        embedder = self._embedder or embedders.default_embedder(self.settings.embedding_model)
        path = self.settings.db or default_path()
        store = MemoryStore(path, embedder, tokens.counter(self.settings.encoding))
        projects.claim(store, self.project.key, self.project.name, self.project.aliases)
        return store

    def scopes(self) -> list[str]:
        """What a read may see: this project, its languages, universal — never another project."""
        return [self.project.scope, *(f"language:{lang}" for lang in self.languages), "universal"]

    def resolve_scope(self, scope: str | None) -> str:
        """`project` (or none, or `project:<this name>`) → this project's scope; `language` → the
        main language's. Another project's scope is refused (`InvalidMemory` naming `scope`): a
        request acts only inside the project it comes from."""
        scope = scope.strip() if scope else scope  # the store strips too: check what it stores
        if scope in (None, "", "project", f"project:{self.project.name}"):
            return self.project.scope
        if scope == "language":
            if not self.languages:
                return "universal"
            return f"language:{self.languages[0]}"
        if scope.startswith("project:") and scope != self.project.scope:
            raise InvalidMemory(
                f"invalid scope {scope!r}: not this project's scope ({self.project.scope}); "
                "write to 'project', 'language', 'universal' or 'language:<id>'"
            )
        return scope

    def visible(self, scope: str) -> bool:
        """Whether a request from this project may see or change a memory of `scope`: its own
        project scope, any language, universal — never another project's."""
        return scope == self.project.scope or not scope.startswith("project:")

    def own(self, memory_id: str) -> Memory:
        """The memory, if this project may act on it; another project's memory is reported
        exactly like an unknown id (`UnknownMemory`), so ids cannot be probed across projects."""
        memory = self.store.get(memory_id)
        if not self.visible(memory.scope):
            raise UnknownMemory(memory_id)
        return memory

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

    def view(self, active_file: str | None = None) -> pipeline.View:
        return pipeline.View(
            project=self.project.name,
            project_scope=self.project.scope,
            languages=list(self.languages),
            task=self.task,
            active_file=active_file or self.active_file,
        )

    def _session(self, session_id: str | None) -> Session:
        return sessions.open_session(
            self.store, session_id, self.project.key, self.settings.session_cap
        )

    def context(self, params: ContextParams) -> ContextResult:
        """`nous/context`: startup (counted against the session cap) or turn mode."""
        session = self._session(params.session_id)
        self.last_session = params.session_id or self.last_session
        if params.mode == "startup":
            requested = params.budget or self.settings.startup_budget
        else:
            frame = frames.select(params.input, params.frame)
            requested = params.budget or self.config.frames.budgets.get(frame, 3000)
            if params.model_max_tokens:
                share = self.config.session.model_window_share
                requested = min(requested, int(params.model_max_tokens * share))
        granted, note = sessions.grant(session, params.mode, requested)
        frame_now = frames.select(params.input, params.frame)
        refresh = (
            sessions.refresh_reason(self.store, self.config, session, params.input, frame_now)
            if params.session_id and params.mode == "turn"
            else None
        )
        result = pipeline.assemble(
            self.store,
            self.config,
            self.view(params.active_file),
            pipeline.Request(
                input=params.input, mode=params.mode, budget=granted, frame=params.frame,
                profile=params.profile, conversation=params.conversation,
                instructions=params.injected_instructions, cut_note=note,
            ),
        )  # fmt: skip
        result.refresh = refresh
        if params.session_id and params.input.strip():
            self._topic = self.store.embedder.embed(params.input)
        return self._finish(session, result, counted=params.mode == "startup", cut=bool(note))

    def recall_request(self, params: RecallParams) -> ContextResult:
        """`nous/recall`: the recall budget, at most `max_recalls_per_session` per session."""
        session = self._session(params.session_id)
        self.last_session = params.session_id or self.last_session
        requested = params.budget or self.settings.recall_budget
        note = None
        if params.session_id and session.recalls >= self.settings.max_recalls_per_session:
            granted = 0
            note = (
                f"recall limit reached: {session.recalls} of "
                f"{self.settings.max_recalls_per_session} recalls used in this session"
            )
        else:
            granted, note = sessions.grant(session, "recall", requested)
        view = self.view()
        if params.scope:
            wanted = self.resolve_scope(params.scope)
            view_scopes = [s for s in view.scopes if s == wanted]
            if not view_scopes:
                view_scopes = [view.project_scope]
            view.languages = [
                s.removeprefix("language:") for s in view_scopes if s.startswith("language:")
            ]
        result = pipeline.assemble(
            self.store,
            self.config,
            view,
            pipeline.Request(
                input=params.query, mode="recall", budget=granted, kinds=params.kinds,
                cut_note=note,
            ),
        )  # fmt: skip
        return self._finish(session, result, counted=True, cut=granted < requested)

    def _finish(
        self, session: Session, result: ContextResult, counted: bool, cut: bool
    ) -> ContextResult:
        sessions.record(self.store, session, result, counted, self._topic)
        self._topic = None
        result.session = sessions.use_of(session, cut=cut)
        return result

    def recall(
        self, query: str, budget: int | None = None, kinds: list[str] | None = None
    ) -> ContextResult:
        """Recall outside any chat session (the CLI)."""
        return self.recall_request(RecallParams(query=query, budget=budget, kinds=kinds))

    def feedback(self, params: FeedbackParams) -> FeedbackResult:
        return sessions.feedback(
            self.store, self.config, self._session(params.session_id), params.response
        )

    def expand_into_session(
        self, memory_id: str, session_id: str | None
    ) -> tuple[Memory, SessionUse]:
        """The full record; with a session, its content counts against the cap (cut to fit)."""
        memory = self.own(memory_id)
        if not session_id:
            return memory, SessionUse(id=None, used=0, cap=0, remaining=0)
        session = self._session(session_id)
        cost = self.store.counter.count(memory.content)
        granted, note = sessions.grant(session, "expand", cost)
        if note:
            memory = memory.model_copy(
                update={"content": self.store.counter.truncate(memory.content, granted)}
            )
        session.injected.append({"id": memory.id, "text": memory.summary, "judged": False})
        usage.save_session(self.store, session, min(cost, granted))
        return memory, sessions.use_of(session, cut=bool(note))

    def expand(self, memory_id: str) -> Memory:
        return self.own(memory_id)

    def forget(self, memory_id: str, purge: bool = False) -> Memory:
        self.own(memory_id)
        return self.store.forget(memory_id, purge)

    def harvest(self, git_limit: int = 50) -> dict[str, Any]:
        """Harvest the workspace folder's instruction files, ADRs, procedures and git history:
        the folder's own, never those of a git root above it (SPEC §4 boundary)."""
        from dataclasses import asdict

        from nous.workspace.harvest import sync

        return asdict(sync.sync(self.store, self.project.key, self.workspace, git_limit))

    def on_files_changed(self, changed: set[str]) -> dict[str, Any]:
        """React to workspace changes: re-harvest when a harvested source may have changed, and
        demote memories whose code anchors are gone. Call on the store's thread."""
        from nous.workspace import anchors
        from nous.workspace.harvest import sync

        out: dict[str, Any] = {"harvest": None, "demoted": []}
        if any(sync.harvestable(rel) for rel in changed):
            out["harvest"] = self.harvest(git_limit=10)
        out["demoted"] = anchors.check(self.store, self.project.scope, self.workspace, changed)
        return out

    def supersede(self, memory_id: str, new_id: str) -> Memory:
        self.own(memory_id)
        self.own(new_id)
        return self.store.supersede(memory_id, new_id)

    def outcome(self, memory_id: str, outcome: str) -> Memory:
        self.own(memory_id)
        return self.store.set_outcome(memory_id, outcome)

    def status(self) -> dict[str, Any]:
        store = self.store
        counts = store.counts(self.scopes())  # what this project can see, not the whole file
        return {
            "project": self.project.name,
            "projectKey": self.project.key,
            "projectSource": self.project.source,
            "languages": self.languages,
            "database": str(store.path),
            "databaseBytes": store.size_bytes(),
            "memories": sum(sum(by.values()) for by in counts.values()),
            "counts": counts,
            "model": store.embedder.name,
            "dimension": store.embedder.dimension,
            "encoding": store.counter.name,
            "task": self.task,
            "indexState": self.index_state,
            "modelLoaded": True,  # the store loads the model; an unloadable one is an AssetError
            "session": (
                sessions.use_of(self._session(self.last_session)).model_dump(by_alias=True)
                if self.last_session
                else None
            ),
        }
