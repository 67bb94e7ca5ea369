"""Watch a workspace folder for changes made outside the editor, and hand them over in batches.

Why not watchdog's ``Observer``: a recursive watch puts an inotify watch on every folder below the
root, ``node_modules`` and ``.git`` included, and a non-recursive schedule per folder starts one
emitter thread per folder (django has 3,200 folders). So this module drives watchdog's inotify layer
(``InotifyFD``: one inotify instance, one reader thread) directly, with one non-recursive watch per
folder the scanner enters. The scanner's own walk (``scan(...).dirs``) decides which folders those
are, so no ignore rule is restated here.

Threads: watchdog's reader thread only records events in a pending map, never scans or parses (a
CPU-bound thread in the same process delayed events by 20-25 s through the GIL). :meth:`Watcher.run`,
on a thread the caller owns, debounces, places watches on new folders, filters paths and calls
``on_paths``; the caller does the indexing elsewhere.

Events are merged per path and delivered after ``debounce_s`` of quiet, or at the latest
``max_delay_s`` after the first one, so a stream of events cannot hold updates back; the one
exception is git rewriting the work tree (its index lock exists), whose events are delivered
together once it is done (``GIT_SETTLE_MAX_S`` at most). A folder that
appears (created or moved in) is watched with its whole subtree and delivered as one path, which the
indexer reconciles as a subtree; a folder that disappears loses its watches and is delivered the same
way. A change to a ``.gitignore`` or ``.smartctxignore`` can change the verdict of any path, so it asks
for a full reconcile. Only writes that end in a close (``IN_CLOSE_WRITE``), creations, deletions and
moves are watched: editors and git all close what they write, and ``IN_MODIFY`` would multiply the
events of a branch switch.

Lost events, as watchdog 7 surfaces them (``watchdog/observers/inotify_c.py``):

* A kernel queue overflow (``IN_Q_OVERFLOW``, beyond ``fs.inotify.max_queued_events``) reaches no event
  queue: ``InotifyFD.handle_event`` logs a warning and calls ``on_queue_overflow`` on every callback.
* A full watch table (``fs.inotify.max_user_watches``) raises ``OSError(ENOSPC)`` from
  ``add_callback``; too many inotify instances raise ``OSError(EMFILE)`` from ``InotifyFD()``.

Each becomes ``on_reconcile(reason)`` and a log line; the watches are placed again first, so the
reconcile's scan cannot miss what changes after it. A periodic reconcile is the safety net for anything
else that is missed. Without inotify (not Linux) only the periodic reconcile runs.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from smartctx.indexing.git import git_dir
from smartctx.indexing.ignore import GITIGNORE_NAME, SMARTCTXIGNORE_NAME
from smartctx.indexing.scanner import IgnoreRules, ScanConfig, scan
from smartctx.parsing.languages import language_for_path

# watchdog's inotify module loads inotify from libc as it is imported, which fails off Linux.
if sys.platform.startswith("linux"):
    from watchdog.observers.inotify_c import (
        CallbackId,
        InotifyConstants,
        InotifyEvent,
        InotifyFD,
        Mask,
        WatchDescriptor,
    )

    WATCH_MASK = Mask(
        InotifyConstants.IN_CREATE
        | InotifyConstants.IN_DELETE
        | InotifyConstants.IN_MOVED_FROM
        | InotifyConstants.IN_MOVED_TO
        | InotifyConstants.IN_CLOSE_WRITE
        | InotifyConstants.IN_DELETE_SELF
        | InotifyConstants.IN_ONLYDIR
        | InotifyConstants.IN_DONT_FOLLOW
        | InotifyConstants.IN_EXCL_UNLINK
    )

# A save produces its events within a millisecond; this much quiet ends a burst.
DEBOUNCE_S = 0.05
# However long a stream of events goes on, what arrived first is delivered after this long.
MAX_DELAY_S = 1.0
# A full reconcile this often catches whatever the events missed.
RECONCILE_INTERVAL_S = 600.0
# While git rewrites the work tree it holds its index lock (a checkout, merge, rebase, reset): events
# are held back until the lock goes, so a branch switch arrives as one batch and is indexed by one
# reconcile, not by one every MAX_DELAY_S while the checkout runs (each a full scan, parse of what
# changed so far, resolution and scores). A checkout writes files without pause, so a lock with no
# work-tree event for GIT_QUIET_S is not a checkout: one left behind by a killed git, or held by a
# `git commit` waiting for its message to be written. Nor does a stream of events go on being held back
# longer than GIT_SETTLE_MAX_S after its first event.
GIT_QUIET_S = 2.0
GIT_SETTLE_MAX_S = 120.0
GIT_LOCK_POLL_S = 0.05
GIT_INDEX_LOCK_NAME = "index.lock"

IGNORE_FILE_NAMES = frozenset({GITIGNORE_NAME, SMARTCTXIGNORE_NAME})

PathsListener = Callable[[list[str]], None]
ReconcileListener = Callable[[str], None]

log = logging.getLogger(__name__)


def _supported(path: str) -> bool:
    return language_for_path(path) is not None


def _has_ancestor_in(path: str, folders: set[str]) -> bool:
    parts = path.split("/")
    return any("/".join(parts[:depth]) in folders for depth in range(1, len(parts)))


class Watcher:
    """Watches the folders of ``root`` that the scanner enters; see the module docstring."""

    def __init__(
        self,
        root: Path,
        config: ScanConfig,
        on_paths: PathsListener,
        on_reconcile: ReconcileListener,
        *,
        debounce_s: float = DEBOUNCE_S,
        max_delay_s: float = MAX_DELAY_S,
        reconcile_interval_s: float = RECONCILE_INTERVAL_S,
        git_quiet_s: float = GIT_QUIET_S,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self._config = config
        self._on_paths = on_paths
        self._on_reconcile = on_reconcile
        self._debounce_s = debounce_s
        self._max_delay_s = max_delay_s
        self._reconcile_interval_s = reconcile_interval_s
        self._git_quiet_s = git_quiet_s
        self._rules = IgnoreRules.load(self.root, config)
        self._inotify: InotifyFD | None = None
        self._lock = threading.Lock()
        self._wakeup = threading.Condition(self._lock)
        # Guarded by _lock, written by the reader thread: changed path -> whether it is a folder.
        self._pending: dict[str, bool] = {}
        self._first_event_s = 0.0
        self._last_event_s = 0.0
        self._lost_events: str | None = None
        self._stopped = False
        # Guarded by _lock: the watched folders, workspace-relative ("" is the root), both ways.
        self._dir_by_wd: dict[int, str] = {}
        self._wd_by_dir: dict[str, int] = {}
        self._watch_limit_reached = False
        self._callback_id = CallbackId(id(self))
        repository = git_dir(self.root)
        self._git_index_lock = None if repository is None else repository / GIT_INDEX_LOCK_NAME

    def start(self) -> None:
        """Place the watches; a change made after this returns is delivered (or triggers a reconcile)."""
        if not sys.platform.startswith("linux"):
            log.warning(
                "file watching needs inotify (Linux): changes made outside the editor are found by "
                "didChangeWatchedFiles and by a full reconcile every %.0f s",
                self._reconcile_interval_s,
            )
            return
        try:
            inotify = InotifyFD()
        except OSError as error:
            log.error(
                "cannot watch %s for changes: %s; a full reconcile every %.0f s finds them instead "
                "(raise fs.inotify.max_user_instances)",
                self.root,
                error,
                self._reconcile_interval_s,
            )
            return
        inotify.start()
        with self._lock:
            if self._stopped:
                inotify.stop()
                return
            self._inotify = inotify
        self._place_watches()

    def stop(self) -> None:
        """Remove every watch and end :meth:`run`; returns at once."""
        with self._lock:
            self._stopped = True
            inotify = self._inotify
            self._wakeup.notify_all()
        if inotify is not None:
            inotify.stop()

    def watched_dirs(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._wd_by_dir)

    def run(self) -> None:
        """Debounce events and deliver them until :meth:`stop`; call it on a thread of its own."""
        next_reconcile_s = time.monotonic() + self._reconcile_interval_s
        while True:
            with self._lock:
                now = self._wait_for_work(next_reconcile_s)
                if self._stopped:
                    return
                batch, self._pending = self._pending, {}
                lost, self._lost_events = self._lost_events, None
            if lost is None and now >= next_reconcile_s:
                lost = "periodic safety net"
            if lost is not None:
                # The reconcile covers whatever the batch held.
                self._place_watches()
                log.info("full reconcile of %s: %s", self.root, lost)
                self._on_reconcile(lost)
                next_reconcile_s = time.monotonic() + self._reconcile_interval_s
            elif batch:
                self._deliver(batch)

    def _wait_for_work(self, next_reconcile_s: float) -> float:
        """With ``_lock`` held: wait until a batch is due, events were lost, a reconcile is due or stop."""
        while True:
            now = time.monotonic()
            if self._stopped or self._lost_events is not None or now >= next_reconcile_s:
                return now
            deadline = next_reconcile_s
            if self._pending:
                due = min(self._last_event_s + self._debounce_s, self._first_event_s + self._max_delay_s)
                if now >= due:
                    if not self._git_rewriting(now):
                        return now
                    due = now + GIT_LOCK_POLL_S
                deadline = min(deadline, due)
            self._wakeup.wait(deadline - now)

    def _git_rewriting(self, now: float) -> bool:
        """With ``_lock`` held: whether git holds its index lock while events still arrive (the last
        less than ``git_quiet_s`` ago), for no longer than GIT_SETTLE_MAX_S since the first pending event."""
        return (
            self._git_index_lock is not None
            and now - self._last_event_s < self._git_quiet_s
            and now - self._first_event_s < GIT_SETTLE_MAX_S
            and self._git_index_lock.exists()
        )

    def _deliver(self, batch: dict[str, bool]) -> None:
        if any(path.rsplit("/", 1)[-1] in IGNORE_FILE_NAMES for path in batch):
            with self._lock:
                self._lost_events = self._lost_events or "an ignore file changed"
                self._wakeup.notify_all()
            return
        folders = [path for path, is_dir in batch.items() if is_dir]
        # Folders that left are unwatched before new ones are watched: a folder moved within the
        # workspace keeps its inotify watch, which must not be handed to its new path and then removed.
        gone = [path for path in folders if not self._is_real_dir(path)]
        for path in gone:
            self._unwatch_below(path)
        for path in folders:
            if path not in gone:
                self._watch_subtree(path)
        files = [
            path
            for path, is_dir in batch.items()
            if not is_dir and _supported(path) and not self._rules.is_ignored(path, is_dir=False)
        ]
        # A delivered folder is reconciled as a whole, so nothing below it needs delivering too.
        folder_set = set(folders)
        paths = sorted(path for path in {*folders, *files} if not _has_ancestor_in(path, folder_set))
        if paths:
            self._on_paths(paths)

    def _is_real_dir(self, rel: str) -> bool:
        full = self.root / rel
        return full.is_dir() and not full.is_symlink()

    def _place_watches(self) -> None:
        """Watch exactly the folders a scan enters now: add the missing watches, drop the stale ones."""
        self._rules = IgnoreRules.load(self.root, self._config)
        wanted = set(scan(self.root, self._config, _supported, self._rules).dirs)
        with self._lock:
            stale = [wd for path, wd in self._wd_by_dir.items() if path not in wanted]
        self._unwatch(stale)
        with self._lock:
            missing = sorted(wanted.difference(self._wd_by_dir))
        self._watch(missing)

    def _watch_subtree(self, rel: str) -> None:
        """Watch a folder that appeared and everything below it that the scan enters.

        Folders created inside it before their watch existed sent no event, so the subtree is scanned
        again until a scan finds no unwatched folder; the indexer's own scan of the subtree comes later.
        """
        while True:
            found = scan(self.root, self._config, _supported, self._rules, under=rel).dirs
            with self._lock:
                new = [path for path in found if path not in self._wd_by_dir]
            if not new or self._watch(new) == 0:
                return

    def _unwatch_below(self, rel: str) -> None:
        prefix = rel + "/"
        with self._lock:
            gone = [wd for path, wd in self._wd_by_dir.items() if path == rel or path.startswith(prefix)]
        self._unwatch(gone)

    def _watch(self, paths: Iterable[str]) -> int:
        """Add a watch per folder; returns how many were added."""
        inotify = self._inotify
        if inotify is None:
            return 0
        added = 0
        for path in paths:
            try:
                wd = inotify.add_callback(os.fsencode(self.root / path), WATCH_MASK, self, self._callback_id)
            except OSError as error:
                if error.errno in (errno.ENOSPC, errno.EMFILE):
                    self._report_watch_limit(error)
                    return added
                # The folder vanished or cannot be read; its own event (or the next reconcile) covers it.
                log.debug("not watching %s: %s", path, error)
                continue
            if wd < 0:
                # watchdog returns -1 instead of raising for a folder it may not read (EACCES).
                continue
            with self._lock:
                # inotify gives a folder moved while events were lost its old watch back: forget the old path.
                previous = self._dir_by_wd.get(wd)
                if previous is not None and self._wd_by_dir.get(previous) == wd:
                    del self._wd_by_dir[previous]
                self._dir_by_wd[wd] = path
                self._wd_by_dir[path] = wd
            added += 1
        return added

    def _unwatch(self, wds: list[int]) -> None:
        inotify = self._inotify
        if inotify is None or not wds:
            return
        with self._lock:
            for wd in wds:
                path = self._dir_by_wd.pop(wd, None)
                if path is not None:
                    self._wd_by_dir.pop(path, None)
        inotify.remove_callbacks([(WatchDescriptor(wd), self._callback_id) for wd in wds])

    def _report_watch_limit(self, error: OSError) -> None:
        if not self._watch_limit_reached:
            log.error(
                "cannot watch every folder of %s: %s; changes in unwatched folders are found by the "
                "reconcile every %.0f s (raise fs.inotify.max_user_watches to watch them all)",
                self.root,
                error,
                self._reconcile_interval_s,
            )
        self._watch_limit_reached = True
        with self._lock:
            self._lost_events = self._lost_events or "inotify watch limit reached"
            self._wakeup.notify_all()

    # watchdog's WatchCallback protocol, called on its reader thread: record and wake, nothing more.

    def on_event(self, event: InotifyEvent) -> None:
        name = os.fsdecode(event.name)
        with self._lock:
            folder = self._dir_by_wd.get(event.wd)
            if folder is None:
                return
            path = f"{folder}/{name}" if folder and name else folder or name
            if not path:
                return
            now = time.monotonic()
            if not self._pending:
                self._first_event_s = now
            self._last_event_s = now
            self._pending[path] = self._pending.get(path, False) or event.is_directory
            self._wakeup.notify_all()

    def on_watch_deleted(self, wd: WatchDescriptor) -> None:
        with self._lock:
            path = self._dir_by_wd.pop(wd, None)
            if path is not None and self._wd_by_dir.get(path) == wd:
                del self._wd_by_dir[path]

    def set_config(self, config: ScanConfig, reason: str) -> None:
        """Index under other scan rules: the watches are placed again and a full reconcile follows,
        on the watcher's thread, as after lost events."""
        with self._lock:
            self._config = config
            self._lost_events = self._lost_events or reason
            self._wakeup.notify_all()

    def on_queue_overflow(self) -> None:
        log.warning("inotify queue overflow: events were lost; a full reconcile of %s follows", self.root)
        with self._lock:
            self._lost_events = "inotify queue overflowed, events were lost"
            self._wakeup.notify_all()

    def on_events_lost(self) -> None:
        """Called by watchdog 7.1.1 and later once every callback has seen the overflow: the
        reconcile ``on_queue_overflow`` asked for covers the lost events, and an overflow drops no
        watch of this watcher's, so there is nothing more to do (a second reconcile would repeat
        the first)."""
