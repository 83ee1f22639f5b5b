"""The workspace folders of one connection: an `Engine` per folder (multi-root: one project
identity each), routing a request to the folder of its active file, the startup indexing
(warm the model, harvest each folder, `nous/indexed`) and the file watchers."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from nous.engine import Engine, uri_to_path
from nous.settings import Settings, load

log = logging.getLogger(__name__)
_LANGUAGE_ID = re.compile(r"[a-z0-9][a-z0-9_+#.-]{0,39}")
SAVE_TIMEOUT_S = 5.0
"""How long a shutdown waits for the vector snapshots (a 100k index: ~0.1 s)."""


class Folders:
    """Engines by workspace folder; every engine is used on the store thread (`worker`) only."""

    def __init__(self, worker: ThreadPoolExecutor) -> None:
        self.worker = worker
        self.settings = Settings()
        self.paths: list[Path] = []
        self.engines: dict[Path, Engine] = {}
        self.indexed = threading.Event()
        self.watchers: list[Any] = []
        self._warming: Future[None] | None = None
        self._stopping = False

    def configure(
        self, options: object, paths: list[Path], flags: dict[str, Any], env: dict[str, str]
    ) -> list[str]:
        """Settings and folders from `initialize`: the flags over the client's
        `initializationOptions` over the environment (`settings.load`); returns the settings
        problems."""
        settings, problems = load(options if isinstance(options, dict) else {}, env=env,
                                  flags=flags)  # fmt: skip
        self.settings = settings
        self.paths = paths
        return problems

    def warm(self) -> Future[None]:
        """Start warming the model and the first request's paths on the store thread (once;
        at `initialize`, so it runs while the client answers it and sends its first request)."""
        if self._warming is None:
            self._warming = self.worker.submit(self._warm)
        return self._warming

    def engine_for(self, active_file: str | None = None, folder: Path | None = None) -> Engine:
        """The engine of `folder`, else of the folder holding `active_file`, else of the first
        folder. The active file is remembered workspace-relative. Store thread only."""
        folders = self.paths or [Path.cwd()]
        if folder is None:
            folder = folders[0]
            if active_file:
                path = uri_to_path(active_file)
                matches = [f for f in folders if path.is_relative_to(f)]
                if matches:
                    folder = max(matches, key=lambda f: len(f.parts))
        if folder not in self.engines:
            self.engines[folder] = Engine(self.settings, folder)
            self.engines[folder].defer_vectors = True
            self.engines[folder].index_state = "ready" if self.indexed.is_set() else "indexing"
            self.engines[folder].later = self._later
        engine = self.engines[folder]
        if active_file:
            engine.active_file = engine.relative(active_file)
        return engine

    def _later(self, work: Callable[[], object]) -> object:
        """Queue `work` on the store thread: it runs once the request in hand has returned its
        answer (one worker: nothing runs beside it), and a failure is logged, never lost."""

        def run() -> None:
            try:
                work()
            except Exception:
                log.exception("deferred work failed")

        return self.worker.submit(run)

    def index(self, stopping: Callable[[], bool]) -> dict[str, Any]:
        """Startup work off the request path: warm the model, harvest each folder on a store
        connection of its own (requests keep being answered), start the watchers. Returns the
        `nous/indexed` report."""
        started = time.perf_counter()
        report: dict[str, Any] = {"folders": [], "errors": []}
        try:
            self.warm().result()
            for folder in self.paths:
                engine = Engine(self.settings, folder)
                # acknowledged once the rows are in: requests find them by text at once, and
                # the vectors follow on the backlog's thread (closing does not wait for them)
                engine.defer_vectors = True
                try:
                    harvested = engine.harvest() if self.settings.harvest else {}
                    report["folders"].append(
                        {
                            "folder": str(folder),
                            "project": engine.project.name,
                            "projectKey": engine.project.key,
                            **harvested,
                        }
                    )
                finally:
                    engine.close()
                if self.settings.watch and not stopping():
                    self._watch(folder)
        except Exception as exc:
            log.exception("startup indexing failed")
            report["errors"].append(str(exc))
        report["seconds"] = round(time.perf_counter() - started, 3)
        self.indexed.set()
        self.worker.submit(self._mark_ready)
        return report

    def stop(self) -> None:
        self._stopping = True
        for watcher in self.watchers:
            watcher.stop()
        try:  # the exit that follows ends the process without closing the stores
            self.worker.submit(self._save_snapshots).result(timeout=SAVE_TIMEOUT_S)
        except Exception:
            log.warning("vector snapshots not saved at shutdown", exc_info=True)

    def _save_snapshots(self) -> None:
        """Each open store keeps its vector index beside its file for the next start (store
        thread)."""
        for engine in self.engines.values():
            engine.save_snapshot()

    def _mark_ready(self) -> None:
        for engine in self.engines.values():
            engine.index_state = "ready"
        self._reseal()

    def _reseal(self) -> None:
        """Stamp one batch of the rows the secret rules in force have not scanned (rows from
        before the seal, or from another rule set: scrubbed on every read until then), then
        queue the next behind whatever requests came meanwhile (store thread)."""
        if self._stopping:
            return
        try:
            stamped = sum(engine.reseal() for engine in list(self.engines.values()))
        except Exception:
            log.warning("sealing stopped: rows are scrubbed on read as before", exc_info=True)
            return
        if stamped:
            self.worker.submit(self._reseal)

    def _warm(self) -> None:
        for folder in self.paths or [Path.cwd()]:
            self.engine_for(folder=folder).warm()

    def _watch(self, folder: Path) -> None:
        from nous.workspace.watcher import Watcher

        def changed(paths: set[str]) -> None:
            self.worker.submit(lambda: self.engine_for(folder=folder).on_files_changed(paths))

        watcher = Watcher(folder, changed)
        watcher.start()
        self.watchers.append(watcher)

    def opened(self, uri: str, language: str | None) -> None:
        """A document was opened or changed: its folder's active file (and language)."""
        if language is not None:
            # A languageId becomes a `language:<id>` scope and part of the rendered context:
            # only a plain identifier is taken (`python`, `objective-c`, `c#`), anything else
            # (newlines, headings, 10k characters) is ignored.
            language = language.strip().lower()
            if not _LANGUAGE_ID.fullmatch(language):
                log.info("ignored languageId %r", language[:80])
                language = None

        def update() -> None:
            engine = self.engine_for(uri)
            if language:
                engine.set_language(language)

        self.worker.submit(update)
