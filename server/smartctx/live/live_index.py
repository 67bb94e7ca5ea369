"""The live index of one workspace folder: background indexing, coalesced updates, snapshots.

Threads, not the event loop, do all the work. One indexing thread owns the store: SQLite's write
connection must stay on the thread that opened it, and a single writer also serialises every
change. Queries (workspace.py) run on a small pool, each on its own read-only snapshot, so they are
answered from whatever is committed, even while the first index runs.

Freshness: a :class:`Watcher` (its own thread) feeds changed paths into the same queue as saves and
the changes a client reports (LSP's ``workspace/didChangeWatchedFiles``). Its watches are placed
before the first index scans, so a change made while that index runs is queued and applied right
after it. Whatever piles up while the index thread is busy becomes one batch (a branch switch parses
in the worker processes); a request for a full reconcile (lost events, an ignore file changed, the
periodic safety net) runs on the index thread and is coalesced with any other one still waiting.

Sharing (sharing.py, roles.py): only the process holding the index folder's writer lock does any of
the above, and publishes its status and memory of edits for the others. Any other process on the
same folder follows: it answers from snapshots of what the writer commits, mirrors the writer's
progress in its own status, and keeps its own editor buffers to itself (they are read when packing,
as overlays, but never written into the shared index). It watches no files, so it learns of the
user's saves from the memory of edits the writer publishes, and adds that to its own for editor
focus. When the writer exits or dies it takes over: it opens the index read-write, reconciles it
with the folder (which also finishes whatever the dead writer left half done and puts back the disk
text of files the writer had indexed from its own unsaved buffers), then indexes its own buffers.

Watching only (:meth:`LiveIndex.watch`): when a team's base answers for the folder for good, the
folder is watched but not indexed, and the index folder is left alone; the watcher's changes are
counted so that the workspace lays the files that differ from the base over it again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from smartctx.core.context import RecentEdit
from smartctx.history.changes import GitHistory
from smartctx.indexing.indexer import (
    UNDECODABLE_NAMES_KEY,
    IndexConfig,
    Indexer,
    IndexReport,
    undecodable_names,
)
from smartctx.indexing.scanner import ScanConfig, is_decodable
from smartctx.indexing.watcher import Watcher
from smartctx.live.edits import EditMemory
from smartctx.live.roles import Follower, Publisher, WriterLook, named
from smartctx.live.sharing import WriterLock, read_edits
from smartctx.live.status import IndexRole, StatusCounts, WriterInfo
from smartctx.live.tasks import BackgroundTasks
from smartctx.store.database import IndexUnavailableError
from smartctx.store.index_store import IndexStore, default_index_dir
from smartctx.store.snapshot import IndexSnapshot, SnapshotPool

# Progress notifications while indexing, at most this often (a first index reports every file).
STATUS_INTERVAL_S = 0.25
# Opening the index takes milliseconds; a query that arrives before it waits this long at most.
OPEN_WAIT_S = 30.0
# Graph scores are recomputed once updates have been quiet this long: on django a recompute takes
# about a second on the index thread, which a save arriving meanwhile would have to wait for.
SCORES_QUIET_S = 2.0

log = logging.getLogger(__name__)

StatusListener = Callable[[StatusCounts], None]


class IndexNotAvailableError(RuntimeError):
    """The index could not be opened; the message says why and what to do."""


class _Stopped(Exception):
    """Raised inside the indexer's progress callback to abandon work when the server stops."""


class LiveIndex:
    """Keeps the index of ``root`` up to date in the background and answers context requests."""

    def __init__(
        self,
        root: Path,
        index_dir: Path | None,
        on_status: StatusListener,
        tasks: BackgroundTasks,
        exclude: tuple[str, ...] = (),
    ) -> None:
        self.root = root
        self._index_dir = (
            index_dir.expanduser().absolute() if index_dir is not None else default_index_dir(root)
        )
        self._writer_lock = WriterLock(self._index_dir)
        self._on_status = on_status
        self._tasks = tasks
        self._index_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smartctx-index")
        self._watch_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smartctx-watch")
        # What this process publishes while it writes, and what it reads of the writer while it follows.
        self._publisher = Publisher(self._index_dir)
        self._follower = Follower(root, self._index_dir)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._opened = threading.Event()
        self._open_error: str | None = None
        self._store: IndexStore | None = None
        self._indexer: Indexer | None = None
        self._config = IndexConfig(scan=ScanConfig(extra_ignores=exclude))
        self._watcher: Watcher | None = None
        self._index_path: Path | None = None
        # Queries' read connections, kept between requests (store/snapshot.py).
        self._snapshots = SnapshotPool()
        # Git "why" breadcrumbs, cached per file content for the life of the server.
        self.history = GitHistory(root)
        # The files edited lately: buffers changed in the editor, saves the watcher sees.
        self.edits = EditMemory(on_change=self._edits_changed)
        # Serialises the publications of that memory (as a writer).
        self._edits_lock = threading.Lock()
        # Guarded by _lock: what the index thread is doing and what waits for it.
        self._busy = True
        self._done = 0
        self._total = 0
        # Files in the index, counted after each phase, and the names it skipped as not UTF-8.
        self._indexed_files = 0
        self._undecodable_names: tuple[str, ...] = ()
        self._queued: set[str] = set()
        # Open editor buffers by workspace-relative path: indexed instead of the disk file until closed.
        self._buffers: dict[str, bytes] = {}
        self._drain_scheduled = False
        self._reconcile_scheduled = False
        # Bumped by every drain; a scores recompute scheduled by an older drain is skipped.
        self._scores_generation = 0
        self._last_status_s = 0.0
        # Guarded by _lock. Whether this process writes the index or follows another that does;
        # while following, the writer and what it last published.
        self._role: IndexRole = "writer"
        self._writer: WriterInfo | None = None
        self._followed: StatusCounts | None = None
        # Guarded by _lock. Whether the index has once held the whole folder (a phase of the writer
        # ended with nothing queued, or the followed writer said it was ready), and whether the
        # watcher saw a file change since this process started: until the first and while not the
        # second, a published base of the same commit answers for the folder (workspace.py).
        self._settled_once = False
        # Batches of changes the watcher saw since this process started (git rewrites included).
        self._changes = 0
        # Guarded by _lock. Whether the folder is watched but not indexed (watch()), and whether
        # start() ran (it runs once).
        self._watch_only = False
        self._started = False

    def start(self) -> None:
        """Write the index (bringing it up to date with the folder) if no other process does, else
        follow the one that does; in the background. After :meth:`watch`, index the folder after all.
        Only the first call does anything."""
        with self._lock:
            if self._started or self._stop.is_set():
                return
            self._started, self._watch_only = True, False
            # Submitted under the lock, so close() cannot shut the thread down in between.
            claiming = self._index_thread.submit(self._claim)
        self._tasks.keep(f"indexing {self.root}", claiming)

    def watch(self) -> None:
        """Watch the folder without indexing it, in the background: a team's base answers for it
        and the workspace indexes only the files that differ from the base, again whenever the
        changes counted here (:meth:`settled_and_changes`) say the folder changed. Saves still go into
        the memory of edits. The index folder is left alone, for another process to write."""
        with self._lock:
            self._watch_only = True
        placing = self._index_thread.submit(self._start_watching)
        self._tasks.keep(f"placing the watches of {self.root}", placing)
        # The workspace's status of a folder only watched says whether its base is found yet.
        self._publish(force=True)

    @property
    def watching_only(self) -> bool:
        """Whether the folder is watched and not indexed: :meth:`watch` ran, :meth:`start` did not."""
        with self._lock:
            return self._watch_only

    def schedule_update(self, paths: Iterable[str]) -> None:
        """Re-index these workspace-relative paths (files or folders) from disk; bursts coalesce into
        one batch. Safe from any thread."""
        paths = list(paths)
        with self._lock:
            if self._watch_only:
                # What the client reports (saves, watched files the watcher cannot see) changes the
                # folder as the watcher's batches do; the first index, if ever, reconciles anyway.
                self._changes += bool(paths)
                return
            if self._stop.is_set() or self._role == "follower":
                # A follower's writer sees the same files change; its takeover reconciles anyway.
                return
            self._queued.update(paths)
            if self._drain_scheduled or not self._queued:
                return
            self._drain_scheduled = True
            # Submitted under the lock, so close() cannot shut the thread down in between.
            future = self._index_thread.submit(self._drain)
        self._tasks.keep(f"updating {self.root}", future)

    def _files_changed(self, paths: list[str]) -> None:
        """The watcher's batch: index it, and remember a save as an edit (not of a file whose name is
        not UTF-8, which is never indexed, so no focus can name it)."""
        self.edits.record_saves([path for path in paths if is_decodable(path)])
        with self._lock:
            self._changes += bool(paths)
        self.schedule_update(paths)

    def schedule_reconcile(self, reason: str) -> None:
        """Bring the whole index in line with the folder; requests waiting to run merge into one."""
        with self._lock:
            # git rewrote the work tree, or what is indexed changed: no longer the tree at start.
            self._changes += 1
            # A follower's writer reconciles; so does the first index of a folder only watched.
            following = self._role == "follower"
            if self._stop.is_set() or self._reconcile_scheduled or following or self._watch_only:
                return
            self._reconcile_scheduled = True
            future = self._index_thread.submit(self._reconcile, reason)
        self._tasks.keep(f"reconciling {self.root} ({reason})", future)

    def reindex(self) -> Future[IndexReport | None]:
        """Reconcile the whole folder again (after the work already queued); the future ends with it."""
        future = self._index_thread.submit(self._reindex)
        self._tasks.keep(f"re-indexing {self.root}", future)
        return future

    def update_buffer(self, path: str, text: bytes) -> None:
        """Index an editor buffer's unsaved text in place of the disk file, until it is closed."""
        with self._lock:
            self._buffers[path] = text
        self.schedule_update([path])

    def close_buffer(self, path: str) -> None:
        """The editor closed ``path``: index it from disk again."""
        with self._lock:
            self._buffers.pop(path, None)
        self.schedule_update([path])

    def status(self) -> StatusCounts:
        with self._lock:
            return self._counts()

    def settled_and_changes(self) -> tuple[bool, int]:
        """Whether the index has once held the whole folder, and how many batches of file changes
        the watcher saw since this process started."""
        with self._lock:
            return self._settled_once, self._changes

    def recent_edits(self) -> tuple[RecentEdit, ...]:
        """The files edited lately, newest first: those this process saw, and while it follows
        another, those the writer saw."""
        with self._lock:
            following = self._role == "follower"
        return self.edits.recent(self._follower.writer_edits() if following else [])

    def _edits_changed(self) -> None:
        """The memory of edits changed: as the writer, publish it for the followers. The file is
        written on the publish thread, since edits of editor buffers are recorded on the server's
        event loop."""
        with self._edits_lock:
            edited = self.edits.edited()
            with self._lock:
                writing = self._role == "writer" and self._writer_lock.held and not self._stop.is_set()
                # Under the lock, so close() cannot release the publish thread in between.
                publishing = self._publisher.edits(edited) if writing else None
        if publishing is not None:
            self._tasks.keep(f"publishing the edits of {self.root}", publishing)

    @property
    def config(self) -> IndexConfig:
        """What the folder is indexed under (the user's exclude patterns among it)."""
        return self._config

    def set_exclude(self, exclude: tuple[str, ...]) -> None:
        """Index under other user exclude patterns (gitignore syntax): files they now exclude leave
        the index, files they no longer exclude join it, by one reconcile."""
        with self._lock:
            if exclude == self._config.scan.extra_ignores:
                return
            self._config = replace(self._config, scan=replace(self._config.scan, extra_ignores=exclude))
            if self._indexer is not None:
                self._indexer.config = self._config
            watcher = self._watcher
        if watcher is not None:
            watcher.set_config(self._config.scan, "the exclude setting changed")
        else:
            self.schedule_reconcile("the exclude setting changed")

    def close(self) -> None:
        """Stop watching, stop indexing at the next file, close the store on its own thread, release
        the threads."""
        with self._lock:
            self._stop.set()
            watcher = self._watcher
            closing = self._index_thread.submit(self._close_store)
        if watcher is not None:
            watcher.stop()
        self._tasks.keep(f"closing the index of {self.root}", closing)
        self._index_thread.shutdown(wait=False, cancel_futures=False)
        self._watch_thread.shutdown(wait=False, cancel_futures=True)
        self._publisher.close()
        self._snapshots.close()

    def snapshot(self) -> IndexSnapshot:
        """A snapshot of what is committed now, once the index is open (waiting briefly for that).
        Queries read it on a query thread, never the event loop."""
        if not self._opened.wait(OPEN_WAIT_S) or self._index_path is None:
            raise IndexNotAvailableError(self._open_error or "the index is still being opened; try again")
        return self._snapshots.snapshot(self._index_path)

    def _claim(self) -> None:
        """On the index thread: write the index if no other process does, else follow the one that
        does."""
        try:
            acquired = self._writer_lock.try_acquire()
        except OSError as error:
            self._fail_open(
                f"cannot open the index of {self.root}: cannot create index folder {self._index_dir}:"
                f" {error.strerror}"
            )
            return
        if acquired:
            self._open_and_reconcile("on opening")
            return
        with self._lock:
            if self._stop.is_set():
                return
            self._role = "follower"
            # A follower watches no files, its writer does: the watches of a folder first only
            # watched go, which frees the watch thread for following.
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
        with self._lock:
            if self._stop.is_set():
                return
            future = self._watch_thread.submit(self._follow)
        self._tasks.keep(f"following the index of {self.root}", future)

    def _fail_open(self, message: str) -> None:
        """A folder the user can fix: one line in the log, the reason in every status and answer."""
        with self._lock:
            self._open_error = message
        log.error("%s", message)
        self._opened.set()
        self._finish_phase()

    def _follow(self) -> None:
        """On the watch thread: follow the writer's commits and progress until this process gets
        the lock, then take over writing on the index thread."""
        if not self._follower.follow(self._writer_lock, self._stop, self._looked):
            return
        with self._lock:
            if self._stop.is_set():
                # close() already ran: hand the lock on rather than keep it until this process exits.
                self._writer_lock.release()
                return
            future = self._index_thread.submit(self._take_over, self._writer)
        self._tasks.keep(f"taking over the index of {self.root}", future)

    def _looked(self, look: WriterLook) -> None:
        """While following: mirror what the writer committed and published; publishes this
        process's status when it changed."""
        with self._lock:
            before = self._counts()
            if look.published is not None:
                self._followed, self._writer = look.published
                self._settled_once = self._settled_once or self._followed.state == "ready"
            if look.indexed_files is not None:
                self._indexed_files = look.indexed_files
            self._open_error = look.error
            if look.index_path is not None:
                self._index_path = look.index_path
            ready_to_read = look.index_path is not None or look.error is not None
            changed = self._counts() != before
        if ready_to_read:
            self._opened.set()
        if changed:
            self._publish(force=True)

    def _take_over(self, previous: WriterInfo | None) -> None:
        """On the index thread, holding the lock: the writer is gone; write the index from now on."""
        log.info("%s no longer writes the index of %s; this process takes over", named(previous), self.root)
        with self._lock:
            self._role, self._writer, self._followed = "writer", None, None
            self._open_error = None
            self._busy = True
        self._open_and_reconcile(f"took over from {named(previous)}")

    def _reindex(self) -> IndexReport | None:
        with self._lock:
            following, writer, watch_only = self._role == "follower", self._writer, self._watch_only
        if watch_only:
            raise IndexNotAvailableError(
                f"{self.root} is answered from its team's base and not indexed here: only the files"
                " that differ from the base are"
            )
        if following:
            raise IndexNotAvailableError(
                f"{named(writer)} writes the index of {self.root} and keeps it up to date: re-index"
                " there, or stop it and this process takes over"
            )
        return self._reconcile("re-index requested")

    def _open_and_reconcile(self, reason: str) -> None:
        """On the index thread, holding the writer lock: open the index read-write and reconcile."""
        # Followers learn at once who writes now.
        self._publish(force=True)
        # The edits the last writer remembered stay remembered (and are published again as ours).
        self.edits.adopt(read_edits(self._index_dir))
        try:
            store = IndexStore(self.root, self._index_dir)
        except IndexUnavailableError as error:
            self._fail_open(f"cannot open the index of {self.root}: {error}")
            return
        if store.rebuilt_reason:
            log.warning("rebuilding the index: %s", store.rebuilt_reason)
        self._store = store
        # The indexer spawns its parser workers (a fork of this threaded process could hang them),
        # so a large first index parses on both cores.
        self._indexer = Indexer(self.root, store, self._config)
        self._index_path = store.path
        self._opened.set()
        self._start_watching()
        self._reconcile(reason)

    def _start_watching(self) -> None:
        """Place the watches before the first index scans: a change made during it is then queued.
        On the index thread, once: a folder first only watched keeps its watches when indexed."""
        with self._lock:
            if self._watcher is not None:
                return
        watcher = Watcher(self.root, self._config.scan, self._files_changed, self.schedule_reconcile)
        with self._lock:
            if self._stop.is_set():
                return
            self._watcher = watcher
        started = time.perf_counter()
        watcher.start()
        log.info(
            "watching %d folders of %s (placed in %.2f s)",
            len(watcher.watched_dirs()),
            self.root,
            time.perf_counter() - started,
        )
        with self._lock:
            if self._stop.is_set():
                # close() ran while the watches were placed; it may have seen no watcher to stop.
                watcher.stop()
                return
            future = self._watch_thread.submit(watcher.run)
        self._tasks.keep(f"watching {self.root}", future)

    def _reconcile(self, reason: str) -> IndexReport | None:
        """Bring the whole folder up to date; None when the server stopped first. On the index thread."""
        with self._lock:
            self._reconcile_scheduled = False
            if self._stop.is_set():
                return None
            if self._indexer is None:
                raise IndexNotAvailableError(self._open_error or "the index is not open")
            # Changes queued before this scan starts are covered by it.
            self._queued.clear()
            self._busy, self._done, self._total = True, 0, 0
        self._publish(force=True)
        started = time.perf_counter()
        try:
            report = self._indexer.reconcile(self._progress)
        except _Stopped:
            return None
        finally:
            self._finish_phase()
        # A reconcile indexes the disk; open buffers take their place again.
        with self._lock:
            open_paths = list(self._buffers)
        self.schedule_update(open_paths)
        log.info(
            "indexed %s (%s) in %.1f s: %d parsed, %d unchanged, %d removed",
            self.root,
            reason,
            time.perf_counter() - started,
            report.files_parsed,
            report.files_unchanged,
            report.files_deleted,
        )
        return report

    def _drain(self) -> None:
        """Apply queued paths until none are left; scores are refreshed once updates go quiet.

        A queued path with an open buffer is indexed from the buffer. A batch of buffers whose text
        is already indexed (a file opened unchanged) does nothing and publishes no status.
        """
        if self._indexer is None:
            # The index could not be opened; that was reported once, and every request says so.
            with self._lock:
                self._queued.clear()
                self._drain_scheduled = False
            return
        changed = False
        try:
            while not self._stop.is_set():
                with self._lock:
                    batch = sorted(self._queued)
                    self._queued.clear()
                    if not batch:
                        self._drain_scheduled = False
                        break
                    buffers = {path: self._buffers[path] for path in batch if path in self._buffers}
                    from_disk = len(buffers) < len(batch)
                    if from_disk:
                        self._busy, self._done, self._total = True, 0, len(batch)
                if from_disk:
                    self._publish(force=True)
                report = self._indexer.update_paths(batch, buffers=buffers, recompute_scores=False)
                changed = changed or from_disk or report.files_parsed > 0 or report.files_deleted > 0
            if changed:
                self._schedule_scores()
        except BaseException:
            changed = True
            with self._lock:
                self._drain_scheduled = False
            raise
        finally:
            self._finish_phase(publish=changed)

    def _schedule_scores(self) -> None:
        with self._lock:
            self._scores_generation += 1
            generation = self._scores_generation
        timer = threading.Timer(SCORES_QUIET_S, self._submit_scores, (generation,))
        timer.daemon = True
        timer.start()

    def _submit_scores(self, generation: int) -> None:
        with self._lock:
            if self._stop.is_set() or generation != self._scores_generation:
                return
            future = self._index_thread.submit(self._recompute_scores, generation)
        self._tasks.keep(f"recomputing the scores of {self.root}", future)

    def _recompute_scores(self, generation: int) -> None:
        with self._lock:
            if self._stop.is_set() or generation != self._scores_generation:
                return
        if self._store is not None and self._store.writer.scores_dirty():
            self._store.writer.recompute_scores()

    def _progress(self, done: int, total: int) -> None:
        if self._stop.is_set():
            raise _Stopped
        with self._lock:
            self._done, self._total = done, total
        self._publish(force=done == total)

    def _finish_phase(self, *, publish: bool = True) -> None:
        """On the index thread: the phase's work is done; count what the index now holds."""
        writer = self._store.writer if self._store is not None else None
        indexed = writer.file_count() if writer is not None else 0
        names = undecodable_names(writer.meta(UNDECODABLE_NAMES_KEY)) if writer is not None else ()
        with self._lock:
            self._busy = bool(self._queued)
            self._settled_once = self._settled_once or (not self._busy and self._open_error is None)
            self._done = self._total
            self._indexed_files = indexed
            self._undecodable_names = names
        if publish:
            self._publish(force=True)

    def _publish(self, *, force: bool) -> None:
        now = time.monotonic()
        with self._lock:
            if not force and now - self._last_status_s < STATUS_INTERVAL_S:
                return
            self._last_status_s = now
            counts = self._counts()
            writing = self._role == "writer" and self._writer_lock.held
        if self._stop.is_set():
            return
        if writing:
            self._publisher.status(counts)
        self._on_status(counts)

    def _counts(self) -> StatusCounts:
        if self._role == "follower":
            # Until the writer publishes, it is taken to be at its first index.
            followed = self._followed or StatusCounts(True, 0, 0, 0)
            return replace(
                followed,
                error=self._open_error or followed.error,
                indexed_files=self._indexed_files,
                role="follower",
                writer=self._writer,
            )
        pending = (self._total - self._done if self._busy else 0) + len(self._queued)
        return StatusCounts(
            self._busy,
            self._done,
            self._total,
            pending,
            self._open_error,
            self._indexed_files,
            undecodable_names=self._undecodable_names,
        )

    def _close_store(self) -> None:
        """On the index thread: close the store, then let another process write."""
        if self._store is not None:
            self._store.close()
            self._store = None
        self._writer_lock.release()
