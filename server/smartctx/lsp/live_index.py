"""The live index of one workspace folder: background indexing, coalesced updates, queries.

Threads, not the event loop, do all the work. One indexing thread owns the store: SQLite's write
connection must stay on the thread that opened it, and a single writer also serialises every
change. Queries run on a small pool, each on its own read-only snapshot, so they are answered from
whatever is committed, even while the first index runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from smartctx.core.context import ContextPack, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.history.changes import GitHistory
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.lsp.convert import StatusCounts
from smartctx.lsp.tasks import BackgroundTasks
from smartctx.retrieval.pipeline import build_context
from smartctx.store.database import IndexUnavailableError
from smartctx.store.index_store import IndexStore
from smartctx.store.snapshot import IndexSnapshot

# Progress notifications while indexing, at most this often (a first index reports every file).
STATUS_INTERVAL_S = 0.25
# Opening the index takes milliseconds; a query that arrives before it waits this long at most.
OPEN_WAIT_S = 30.0
QUERY_THREADS = 2

log = logging.getLogger(__name__)

StatusListener = Callable[[StatusCounts], None]


class IndexNotAvailableError(RuntimeError):
    """The index could not be opened; the message says why and what to do."""


class _Stopped(Exception):
    """Raised inside the indexer's progress callback to abandon work when the server stops."""


class LiveIndex:
    """Keeps the index of ``root`` up to date in the background and answers context requests."""

    def __init__(
        self, root: Path, index_dir: Path | None, on_status: StatusListener, tasks: BackgroundTasks
    ) -> None:
        self.root = root
        self._index_dir = index_dir
        self._on_status = on_status
        self._tasks = tasks
        self._index_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smartctx-index")
        self._query_threads = ThreadPoolExecutor(
            max_workers=QUERY_THREADS, thread_name_prefix="smartctx-query"
        )
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._opened = threading.Event()
        self._open_error: str | None = None
        self._store: IndexStore | None = None
        self._indexer: Indexer | None = None
        self._index_path: Path | None = None
        self._counters: dict[str, TokenCounter] = {}
        # Git "why" breadcrumbs, cached per file content for the life of the server.
        self.history = GitHistory(root)
        # Guarded by _lock: what the index thread is doing and what waits for it.
        self._busy = True
        self._done = 0
        self._total = 0
        self._queued: set[str] = set()
        self._drain_scheduled = False
        self._last_status_s = 0.0

    @property
    def query_threads(self) -> ThreadPoolExecutor:
        return self._query_threads

    def start(self) -> None:
        """Open the index and bring it up to date with the folder, in the background."""
        self._tasks.keep(f"indexing {self.root}", self._index_thread.submit(self._open_and_reconcile))

    def schedule_update(self, paths: Iterable[str]) -> None:
        """Re-index these workspace-relative paths from disk; bursts coalesce into one batch."""
        with self._lock:
            self._queued.update(paths)
            if self._drain_scheduled or not self._queued:
                return
            self._drain_scheduled = True
        self._tasks.keep(f"updating {self.root}", self._index_thread.submit(self._drain))

    def status(self) -> StatusCounts:
        with self._lock:
            return self._counts()

    def query(
        self, request: ContextRequest, overlays: Mapping[str, bytes], should_cancel: Callable[[], bool]
    ) -> ContextPack:
        """Build a pack from what is committed now; runs on a query thread, never the event loop."""
        if not self._opened.wait(OPEN_WAIT_S) or self._index_path is None:
            raise IndexNotAvailableError(self._open_error or "the index is still being opened; try again")
        counter = self._counter(request.options.tokenizer)
        with IndexSnapshot(self._index_path) as snapshot:
            return build_context(
                request,
                snapshot,
                counter,
                WorkspaceSources(self.root, overlays),
                history=self.history,
                pending_files=self.status().pending_files,
                should_cancel=should_cancel,
            )

    def close(self) -> None:
        """Stop indexing at the next file, close the store on its own thread, release the threads."""
        self._stop.set()
        self._tasks.keep(f"closing the index of {self.root}", self._index_thread.submit(self._close_store))
        self._index_thread.shutdown(wait=False, cancel_futures=False)
        self._query_threads.shutdown(wait=False, cancel_futures=True)

    def _open_and_reconcile(self) -> None:
        try:
            store = IndexStore(self.root, self._index_dir)
        except IndexUnavailableError as error:
            # A folder the user can fix: one line in the log, the reason in every status and answer.
            with self._lock:
                self._open_error = f"cannot open the index of {self.root}: {error}"
            log.error("%s", self._open_error)
            self._opened.set()
            self._finish_phase()
            return
        if store.rebuilt_reason:
            log.warning("rebuilding the index: %s", store.rebuilt_reason)
        self._store = store
        # The indexer spawns its parser workers (a fork of this threaded process could hang them),
        # so a large first index parses on both cores.
        self._indexer = Indexer(self.root, store, IndexConfig())
        self._index_path = store.path
        self._opened.set()
        self._publish(force=True)
        started = time.perf_counter()
        try:
            report = self._indexer.reconcile(self._progress)
        except _Stopped:
            return
        finally:
            self._finish_phase()
        log.info(
            "indexed %s in %.1f s: %d parsed, %d unchanged, %d removed",
            self.root,
            time.perf_counter() - started,
            report.files_parsed,
            report.files_unchanged,
            report.files_deleted,
        )

    def _drain(self) -> None:
        """Apply queued paths until none are left, then refresh scores once for the whole burst."""
        if self._indexer is None:
            # The index could not be opened; that was reported once, and every request says so.
            with self._lock:
                self._queued.clear()
                self._drain_scheduled = False
            return
        try:
            while not self._stop.is_set():
                with self._lock:
                    batch = sorted(self._queued)
                    self._queued.clear()
                    if not batch:
                        self._drain_scheduled = False
                        break
                    self._busy, self._done, self._total = True, 0, len(batch)
                self._publish(force=True)
                self._indexer.update_paths(batch, recompute_scores=False)
            if self._store is not None and not self._stop.is_set() and self._store.writer.scores_dirty():
                self._store.writer.recompute_scores()
        except BaseException:
            with self._lock:
                self._drain_scheduled = False
            raise
        finally:
            self._finish_phase()

    def _progress(self, done: int, total: int) -> None:
        if self._stop.is_set():
            raise _Stopped
        with self._lock:
            self._done, self._total = done, total
        self._publish(force=done == total)

    def _finish_phase(self) -> None:
        with self._lock:
            self._busy = bool(self._queued)
            self._done = self._total
        self._publish(force=True)

    def _publish(self, *, force: bool) -> None:
        now = time.monotonic()
        with self._lock:
            if not force and now - self._last_status_s < STATUS_INTERVAL_S:
                return
            self._last_status_s = now
            counts = self._counts()
        if not self._stop.is_set():
            self._on_status(counts)

    def _counts(self) -> StatusCounts:
        pending = (self._total - self._done if self._busy else 0) + len(self._queued)
        return StatusCounts(self._busy, self._done, self._total, pending, self._open_error)

    def _counter(self, tokenizer: str) -> TokenCounter:
        with self._lock:
            counter = self._counters.get(tokenizer)
        if counter is None:
            counter = TokenCounter(tokenizer)
            with self._lock:
                self._counters.setdefault(tokenizer, counter)
        return counter

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
