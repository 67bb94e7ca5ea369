"""The two roles a live index plays on a shared index folder: the writer's and a follower's.

The lock that decides the role and the files it is shared through are sharing.py's; this module is
what each role does with them. The writer publishes, for the processes following it, its status and
its memory of edits (:class:`Publisher`). A follower watches nothing itself: it looks at what the
writer commits and publishes every ``FOLLOW_POLL_S`` until the writer's lock is free, then the live
index takes over writing (:class:`Follower`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from smartctx.live.sharing import (
    EDITS_FILE_NAME,
    FOLLOW_POLL_S,
    WriterLock,
    publish_edits,
    publish_status,
    read_edits,
    read_status,
    this_process,
)
from smartctx.live.status import StatusCounts, WriterInfo
from smartctx.store.commits import CommitWatch
from smartctx.store.database import INDEX_FILE_NAME, IndexUnavailableError, check_index

# A follower that finds the index file unreadable reports it only once it has stayed so this long:
# a writer creating the file leaves it without tables for a moment.
UNREADABLE_GRACE_S = 1.0
# The writer publishes its memory of edits when a file joins it or becomes the newest edit, and
# otherwise (the same file edited again, as typing does) at most this often: an edit's weight halves
# in an hour (retrieval/focus.py), so a follower's times may lag by this much.
EDITS_PUBLISH_S = 10.0


def named(writer: WriterInfo | None) -> str:
    """The writer as a message names it."""
    return "another process" if writer is None else f"{writer.command} (pid {writer.pid})"


class Publisher:
    """What the process writing an index folder publishes for the processes following it."""

    def __init__(self, index_dir: Path) -> None:
        self._index_dir = index_dir
        self._me = this_process()
        # Writes the memory of edits off the caller's thread (its thread starts with the first
        # publication).
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smartctx-publish")
        # What was last published of the memory of edits, and when (monotonic).
        self._edit_order: list[str] = []
        self._edits_published_s = -EDITS_PUBLISH_S

    def status(self, counts: StatusCounts) -> None:
        """The writer's status, on the caller's thread."""
        publish_status(self._index_dir, counts, self._me)

    def edits(self, edited: Sequence[tuple[str, float]]) -> Future[None] | None:
        """Publish the memory of edits on the publish thread, unless only the times of the files
        edited last changed since the last publication, less than ``EDITS_PUBLISH_S`` ago; the
        publication under way, if any. The caller serialises calls, and makes none after
        :meth:`close`."""
        order = [path for path, _ in edited]
        now = time.monotonic()
        if order == self._edit_order and now - self._edits_published_s < EDITS_PUBLISH_S:
            return None
        self._edit_order, self._edits_published_s = order, now
        return self._thread.submit(publish_edits, self._index_dir, edited)

    def close(self) -> None:
        """Release the publish thread; a publication under way still ends."""
        self._thread.shutdown(wait=False, cancel_futures=False)


@dataclass(frozen=True)
class WriterLook:
    """One look, by a follower, at the index folder another process writes."""

    # The writer's status and the writer as it last published them; None if nothing readable was.
    published: tuple[StatusCounts, WriterInfo] | None
    # How many files the index holds, when the writer committed since the previous look.
    indexed_files: int | None
    # The index file, while it can be read.
    index_path: Path | None
    # Why the index cannot be read, once that has lasted ``UNREADABLE_GRACE_S``; None once it can.
    error: str | None


class Follower:
    """A process's view of the index folder that another process writes, while it follows it."""

    def __init__(self, root: Path, index_dir: Path) -> None:
        self._root = root
        self._index_dir = index_dir
        self._watch: CommitWatch | None = None
        self._unreadable_since: float | None = None
        self._writer: WriterInfo | None = None
        self._error: str | None = None
        # The writer's memory of edits as last read, and the file's mtime then.
        self._edits_lock = threading.Lock()
        self._edits: list[tuple[str, float]] = []
        self._edits_mtime_ns: int | None = None

    def follow(self, lock: WriterLock, stop: threading.Event, on_look: Callable[[WriterLook], None]) -> bool:
        """Look at the writer's commits and publications every ``FOLLOW_POLL_S``, handing each look
        to ``on_look``, until this process takes ``lock`` (True) or ``stop`` is set (False)."""
        try:
            while not lock.try_acquire():
                on_look(self._look())
                if stop.wait(FOLLOW_POLL_S):
                    return False
        finally:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
        return True

    def writer_edits(self) -> list[tuple[str, float]]:
        """The writer's memory of edits as last read: each file with the wall-clock time of its last
        edit."""
        with self._edits_lock:
            return self._edits

    def _look(self) -> WriterLook:
        published = read_status(self._index_dir)
        if published is not None:
            self._writer = published[1]
        self._read_edits()
        path = self._index_dir / INDEX_FILE_NAME
        indexed: int | None = None
        problem: str | None = None
        try:
            if self._watch is None and path.exists():
                problem = check_index(path, self._root)
                if problem is None:
                    self._watch = CommitWatch(path)
            if self._watch is not None and self._watch.changed():
                indexed = self._watch.file_count()
        except (OSError, IndexUnavailableError) as error:
            problem = str(error)
        if problem is not None and self._watch is not None:
            self._watch.close()
            self._watch = None
        now = time.monotonic()
        self._unreadable_since = None if problem is None else self._unreadable_since or now
        if problem is None:
            self._error = None
        elif self._unreadable_since is not None and now - self._unreadable_since >= UNREADABLE_GRACE_S:
            self._error = (
                f"cannot read the index of {self._root} that {named(self._writer)} writes: {problem}"
            )
        return WriterLook(published, indexed, path if self._watch is not None else None, self._error)

    def _read_edits(self) -> None:
        """The writer's memory of edits, read again when its file changed."""
        try:
            mtime_ns: int | None = (self._index_dir / EDITS_FILE_NAME).stat().st_mtime_ns
        except OSError:
            mtime_ns = None
        if mtime_ns == self._edits_mtime_ns:
            return
        edits = read_edits(self._index_dir) if mtime_ns is not None else []
        with self._edits_lock:
            self._edits, self._edits_mtime_ns = edits, mtime_ns
