"""The per-folder object: one workspace folder's identity, store and config, shared by the CLI
and the daemon (one per folder in a multi-root window).

Plain Python (no server). It resolves the project, picks the scopes a read may see, normalises
the active file, and runs the memory verbs (remember / import / forget / supersede / outcome /
harvest / status) that act inside its project. The chat requests (context, recall, expand,
feedback) are `nous.context.chat`, which takes this object as its `Folder`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from nous.context import chat, pipeline, rarity
from nous.context import config as configs
from nous.context.config import Config
from nous.errors import AmbiguousMemory, InvalidMemory, UnknownMemory
from nous.memory import embedder as embedders
from nous.memory import lifecycle
from nous.memory import scope as scopes
from nous.memory.embedder import Embedder

# The memory types the engine's verbs take and give, and their vocabularies, re-exported: the
# adapters (lsp, cli, mcp) name them here, never in memory/ (a handler reaches the store only
# through a use case: docs/architecture.md).
from nous.memory.model import KINDS as KINDS
from nous.memory.model import OUTCOMES as OUTCOMES
from nous.memory.model import Draft as Draft
from nous.memory.model import Memory as Memory
from nous.memory.model import now
from nous.memory.store import MemoryStore, default_path
from nous.memory.writes import WriteResult
from nous.settings import Settings
from nous.text import markdown, tokens
from nous.text.secrets import library
from nous.workspace import detect, identity

log = logging.getLogger(__name__)
MIN_PREFIX = 4
"""The shortest id prefix that names a memory (git's rule for short shas)."""


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
        self.folder = Path(workspace)
        """The folder as given (a client's URI path); `workspace` is it resolved."""
        self.workspace = self.folder.resolve()
        self.project = identity.resolve(self.workspace)
        self.active_language = active_language
        self.active_file: str | None = None
        self.task: str | None = None
        self.index_state = "pending"
        """`pending`, `indexing` or `ready`: set by the daemon around the startup harvest."""
        self.last_session: str | None = None
        self.later: Callable[[Callable[[], object]], object] = _now
        """Runs work that need not hold up an answer (keeping a chat turn): at once here; the
        daemon queues it on the store thread behind the answer it follows."""
        self._embedder = embedder
        self.defer_vectors = False
        """Set before the store opens: writes are acknowledged before their vectors are computed
        (in the background; `MemoryStore(defer_vectors=...)`). The daemon sets it."""
        self.config: Config
        self.config, self.problems = configs.load(self.workspace)
        library.preload()  # every read is redacted: its rules compile while the store opens
        rarity.preload()  # every query weighs its words by it

    @cached_property
    def languages(self) -> list[str]:
        return detect.languages(self.workspace, active=self.active_language)

    @cached_property
    def store(self) -> MemoryStore:
        embedder = self._embedder or embedders.default_embedder(self.settings.embedding_model)
        path = self.settings.db or default_path()
        store = MemoryStore(
            path, embedder, tokens.counter(self.settings.encoding), self.defer_vectors
        )
        store.projects.claim(self.project.key, self.project.name, self.project.aliases)
        url = self.settings.team_store
        if url is not None and str(path) != ":memory:":
            from nous.memory.teamlink import TeamLink, TeamServer

            secret = self.settings.team_store_password
            server = TeamServer(
                url,
                secret.get_secret_value() if secret else None,
                self.settings.team_timeout_ms / 1000,
            )
            store.team = TeamLink(
                server, self.project.key, self.project.scope, store.path, store.dimension,
                store.model_name,
            )  # fmt: skip
        return store

    @property
    def project_key(self) -> str:
        return self.project.key

    def warm(self) -> None:
        """Open the store and load what a first request would load on its way (the daemon's
        start-up): the model loads on a thread of its own (ONNX Runtime releases the GIL while
        it builds its session) while the token encoding and the Markdown parser load here
        (both hold it); then one embedding."""
        if "store" not in self.__dict__ and self._embedder is None:
            model = threading.Thread(
                target=_quietly, args=(embedders.default_embedder, self.settings.embedding_model),
                name="nous-model", daemon=True,
            )  # fmt: skip
            model.start()
            _quietly(tokens.counter, self.settings.encoding)
            _quietly(markdown.parse, "")
            model.join()
        self.store.embed("warm up")

    def close(self) -> None:
        """Close the store if it was opened."""
        store = self.__dict__.pop("store", None)
        if store is not None:
            store.close()

    def save_snapshot(self) -> None:
        """Keep the store's vector index beside its file, if the store was opened (a process
        that ends without closing it: the daemon's exit)."""
        store = self.__dict__.get("store")
        if store is not None:
            store.save_snapshot()

    def reseal(self) -> int:
        """One batch of the store's sealing pass (`MemoryStore.reseal`) if the store was opened;
        how many rows it stamped (0: none left)."""
        store = self.__dict__.get("store")
        return store.reseal() if store is not None else 0

    def set_language(self, language: str) -> None:
        """The language of the file being edited: it leads the detected ones from now on."""
        self.active_language = language
        self.__dict__.pop("languages", None)

    def relative(self, active_file: str | None) -> str | None:
        """An active file as it arrives (a `file://` URI or a path) → workspace-relative path
        (absolute when outside the folder): normalised once, where the request comes in."""
        if not active_file:
            return active_file
        path = uri_to_path(active_file)
        for base in (self.folder, self.workspace):
            if path.is_absolute() and path.is_relative_to(base):
                return str(path.relative_to(base))
        return str(path)

    def scopes(self) -> list[str]:
        """What a read may see: this project, its languages, universal — never another project."""
        return scopes.readable(self.project.scope, self.languages)

    def resolve_scope(self, scope: str | None) -> str:
        """`project` (or none, or `project:<this name>`) → this project's scope; `language` → the
        main language's. Another project's scope is refused (`InvalidMemory` naming `scope`): a
        request acts only inside the project it comes from."""
        scope = scope.strip() if scope else scope  # the store strips too: check what it stores
        if scope in (None, "", "project", "team", scopes.project(self.project.name)):
            return self.project.scope
        if scope == "language":
            if not self.languages:
                return scopes.UNIVERSAL
            return scopes.language(self.languages[0])
        if scopes.is_project(scope) and scope != self.project.scope:
            raise InvalidMemory(
                f"invalid scope {scope!r}: not this project's scope ({self.project.scope}); "
                "write to 'project', 'language', 'universal' or 'language:<id>'"
            )
        return scope

    def visible(self, scope: str) -> bool:
        """Whether a request from this project may see or change a memory of `scope`: its own
        project scope, any language, universal — never another project's."""
        return scope == self.project.scope or not scopes.is_project(scope)

    def own(self, memory_id: str) -> Memory:
        """The memory, if this project may act on it; another project's memory is reported
        exactly like an unknown id (`UnknownMemory`), so ids cannot be probed across projects.
        A unique prefix of at least `MIN_PREFIX` characters names a memory as git's short shas
        do (`AmbiguousMemory` lists the candidates when several share it). An id this file does
        not hold is looked up in the team store (this project's rows)."""
        memory_id = memory_id.strip()
        try:
            memory = self.store.get(memory_id)
        except UnknownMemory:
            team = self.store.team
            found = team.get(memory_id) if team is not None else None
            if found is None:
                found = self._by_prefix(memory_id)
            memory = found
        if not self.visible(memory.scope):
            raise UnknownMemory(memory_id)
        return memory

    def _by_prefix(self, prefix: str) -> Memory:
        found = self.store.ids_starting(prefix, self.project.scope, limit=6) if prefix else []
        if not found:
            raise UnknownMemory(prefix)
        if len(prefix) < MIN_PREFIX:
            raise InvalidMemory(
                f"id {prefix!r} is too short: give at least {MIN_PREFIX} characters of it"
            )
        if len(found) > 1:
            raise AmbiguousMemory(prefix, found[:5])
        return self.store.get(found[0][0])

    def _drafted(self, draft: Draft) -> Draft:
        """The draft in this project: scope `team` is this project's scope, shared."""
        shared = draft.shared or (draft.scope or "").strip() == "team"
        return draft.model_copy(update={"scope": self.resolve_scope(draft.scope), "shared": shared})

    def remember(self, draft: Draft) -> WriteResult:
        return self.store.remember(self._drafted(draft))

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
        return self.remember_many(drafts)

    def remember_many(self, drafts: list[Draft]) -> list[WriteResult]:
        """Remember a batch in this project (scope `team`: shared), in one transaction."""
        return self.store.remember_many([self._drafted(d) for d in drafts])

    def view(self, active_file: str | None = None) -> pipeline.View:
        return pipeline.View(
            project=self.project.name,
            project_scope=self.project.scope,
            languages=list(self.languages),
            task=self.task,
            active_file=self.relative(active_file) or self.active_file,
        )

    def expand(self, memory_id: str) -> Memory:
        return self.own(memory_id)

    def forget(self, memory_id: str, purge: bool = False) -> Memory:
        memory = self.own(memory_id)
        memory_id = memory.id
        if not purge and memory.status == lifecycle.INACTIVE:
            raise InvalidMemory(f"memory {memory_id} is already forgotten")
        if memory.origin == "team":  # someone else's shared memory: the change goes to the team
            if purge and memory.kind == "decision":
                raise InvalidMemory("decisions are never deleted; forget marks them inactive")
            target = "purged" if purge else lifecycle.on_forget(memory.kind, memory.status)
            op = "delete" if purge else "status"
            change = {"status": target, "at": now()}
            self.store.outbox.add(memory_id, self.project.scope, op, change)
            return memory.model_copy(update={"status": target})
        return self.store.forget(memory_id, purge)

    def harvest(self, git_limit: int = 50) -> dict[str, Any]:
        """Harvest the workspace folder's instruction files, ADRs, procedures and git history:
        the folder's own, never those of a git root above it (design §4 boundary)."""
        from dataclasses import asdict

        from nous.workspace.harvest import sync

        with self.store.vectors_held():  # the harvest first, its vectors after (design §8: ≤ 5 s)
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
        old = self.own(memory_id)
        memory_id, new_id = old.id, self.own(new_id).id
        if old.origin == "team":
            if memory_id == new_id:
                raise InvalidMemory("a memory cannot supersede itself")
            target = lifecycle.on_supersede(old.kind, old.status)
            self.store.outbox.add(
                memory_id, self.project.scope, "status",
                {"status": target, "at": now(), "superseded_by": new_id},
            )  # fmt: skip
            return old.model_copy(update={"status": target, "superseded_by": new_id})
        return self.store.supersede(memory_id, new_id)

    def outcome(self, memory_id: str, outcome: str) -> Memory:
        return self.store.set_outcome(self.own(memory_id).id, outcome)

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
            "model": store.model_name,
            "dimension": store.dimension,
            "encoding": store.counter.name,
            "task": self.task,
            "capture": self.settings.capture,
            "indexState": self.index_state,
            "modelLoaded": True,  # the store loads the model; an unloadable one is an AssetError
            "pendingVectors": store.pending_vectors(),  # written, vector still to come
            "session": (use.model_dump(by_alias=True) if (use := chat.session_use(self)) else None),
            "team": self.team_status(),
        }

    def team_state(self) -> str:
        """`off` without a team store, else its state (`TeamLink.state`)."""
        team = self.store.team
        return "off" if team is None else team.state

    def team_status(self) -> dict[str, Any]:
        """The team store's state (design §13): `off` when none is configured, else `up`,
        `connecting`, `slow` or `down`, with the changes still queued for it."""
        team = self.store.team
        queued = self.store.outbox.count(self.project.scope)
        if team is None:
            return {"state": "off", "queued": queued}
        return team.status(queued)


def _now(work: Callable[[], object]) -> object:
    return work()


def file_path(uri: str) -> Path | None:
    """The path of a `file://` URI (percent-decoded); `None` for any other URI or text."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def uri_to_path(uri: str) -> Path:
    """A file as a client names it → a path: a `file://` URI's path (percent-decoded), anything
    else (a plain path, another scheme) as it is. The one URI → path of the daemon, the CLI and
    the MCP server."""
    found = file_path(uri) if "://" in uri else None
    return Path(uri) if found is None else found


def _quietly(load: Callable[..., object], *args: object) -> None:
    """A warm-up load: a failure is the store's to report when it loads the same thing."""
    try:
        load(*args)
    except Exception:
        log.debug("warm-up load failed", exc_info=True)
