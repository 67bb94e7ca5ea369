"""Several processes on one index folder: one writes the index, the others follow it.

The language server, the MCP server and the CLI may run on the same folder at once. They share one
index folder, and an OS lock on a file in it decides who writes: the process holding
:class:`WriterLock` is the only one that opens the index read-write, runs the indexer and watches
the folder; every other process reads committed snapshots (SQLite's WAL mode lets readers see each
commit of another process) and tries the lock again every :data:`FOLLOW_POLL_S`, so it takes over
writing within that long after the writer exits, is killed or crashes.

The lock is ``flock(2)`` on a file that is never removed, called directly rather than through a
library. It is the whole of what is needed (one non-blocking attempt, released by the kernel when
the descriptor closes, so ``kill -9`` frees it at once), and its semantics are exactly those needed:
two open descriptors conflict even inside one process, which a library that makes a second lock in
the same process reentrant or an error would hide. Python opens the descriptor non-inheritable,
so no child process (a parser worker, git) keeps the lock alive after the writer dies. Windows has
no ``flock``; ``msvcrt.locking`` gives the same exclusive, released-at-exit lock there.

Who writes, and how far its work is, is published in a small JSON file next to the lock (replaced
atomically), for the followers' status and the CLI's wait for a first index. So is what the writer
remembers of the user's editing (live/edits.py: saves its watcher saw, buffers its editor changed),
which a follower, watching nothing itself, adds to its own for editor focus; whoever takes over
writing starts from it.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import Any

from smartctx.live.status import StatusCounts, WriterInfo
from smartctx.store.database import INDEX_FILE_NAME, check_index
from smartctx.store.snapshot import IndexSnapshot

LOCK_FILE_NAME = "writer.lock"
STATUS_FILE_NAME = "writer-status-v1.json"
EDITS_FILE_NAME = "writer-edits-v1.json"
# How often a follower looks for the writer's commits and tries to take over writing: the longest
# a folder goes without a writer after one dies, and the lag of a follower's status.
FOLLOW_POLL_S = 0.25
# The front-end commands a process may be running, named in the status of those that follow it.
_COMMANDS = ("serve", "mcp", "context", "index", "status")

log = logging.getLogger(__name__)


def this_process() -> WriterInfo:
    """This process as others see it when it writes: its pid and its smartctx command."""
    command = next((f"smartctx {arg}" for arg in sys.argv[1:2] if arg in _COMMANDS), "smartctx")
    return WriterInfo(os.getpid(), command)


class WriterLock:
    """The exclusive right to write one index folder, held until :meth:`release` or process exit."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if no other process (or descriptor) holds it; never waits.

        Raises OSError when the index folder cannot be created or the lock file opened.
        """
        if self._fd is not None:
            return True
        self.index_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.index_dir / LOCK_FILE_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        if not _lock(fd):
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        """Let another process write; closing the descriptor releases the lock."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()


if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def publish_status(index_dir: Path, counts: StatusCounts, writer: WriterInfo) -> None:
    """The writer's status for its followers, replaced atomically so a reader never sees half."""
    wire: dict[str, Any] = {
        "pid": writer.pid,
        "command": writer.command,
        "indexing": counts.indexing,
        "filesDone": counts.files_done,
        "filesTotal": counts.files_total,
        "pendingFiles": counts.pending_files,
        "indexedFiles": counts.indexed_files,
        "error": counts.error,
        "undecodableNames": list(counts.undecodable_names),
    }
    try:
        _replace_json(index_dir, STATUS_FILE_NAME, wire)
    except OSError as error:
        # Followers then show older progress; the index itself is unaffected.
        log.debug("could not publish the writer status in %s: %s", index_dir, error)


def _replace_json(index_dir: Path, name: str, wire: Any) -> None:
    """Write ``name`` in ``index_dir`` atomically, so a reader never sees half of it."""
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=index_dir, prefix=f".{name}-", delete=False
    ) as handle:
        json.dump(wire, handle)
    Path(handle.name).replace(index_dir / name)


def publish_edits(index_dir: Path, edits: Sequence[tuple[str, float]]) -> None:
    """The writer's memory of edits for its followers: each file with the wall-clock time (seconds
    since the epoch) of its last edit."""
    try:
        _replace_json(index_dir, EDITS_FILE_NAME, {"edits": [[path, at] for path, at in edits]})
    except OSError as error:
        # Followers then go on with the edits published before; the index is unaffected.
        log.debug("could not publish the writer's edits in %s: %s", index_dir, error)


def read_edits(index_dir: Path) -> list[tuple[str, float]]:
    """What the writer last published of its memory of edits (nothing when unreadable)."""
    try:
        wire = json.loads((index_dir / EDITS_FILE_NAME).read_text(encoding="utf-8"))
        return [(str(path), float(at)) for path, at in wire["edits"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def read_status(index_dir: Path) -> tuple[StatusCounts, WriterInfo] | None:
    """What the writer last published, or None if nothing readable was (a writer starting up)."""
    try:
        wire = json.loads((index_dir / STATUS_FILE_NAME).read_text(encoding="utf-8"))
        writer = WriterInfo(int(wire["pid"]), str(wire["command"]))
        counts = StatusCounts(
            indexing=bool(wire["indexing"]),
            files_done=int(wire["filesDone"]),
            files_total=int(wire["filesTotal"]),
            pending_files=int(wire["pendingFiles"]),
            error=str(wire["error"]) if wire["error"] else None,
            indexed_files=int(wire["indexedFiles"]),
            # A writer of an earlier version publishes no such list.
            undecodable_names=tuple(str(name) for name in wire.get("undecodableNames", [])),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return counts, writer


class Wait(Enum):
    """How :func:`wait_for_first_index` ended."""

    # The index holds a completed index; read it.
    READY = "ready"
    # The writer went away and this process now holds the lock: index it yourself.
    TOOK_OVER = "took over"
    # The writer is still at its first index; read what it has committed so far.
    TIMED_OUT = "timed out"


def wait_for_first_index(
    lock: WriterLock,
    workspace_root: Path,
    wait_s: float,
    on_progress: Callable[[StatusCounts, WriterInfo], None],
) -> Wait:
    """For a one-shot reader (the CLI) while another process writes: wait until that process has
    completed a first index of the folder, at most ``wait_s``; take the lock if it frees up."""
    deadline = time.monotonic() + wait_s
    path = lock.index_dir / INDEX_FILE_NAME
    while True:
        if lock.try_acquire():
            return Wait.TOOK_OVER
        if path.exists() and check_index(path, workspace_root) is None:
            with IndexSnapshot(path) as snapshot:
                if snapshot.meta("last_indexed"):
                    return Wait.READY
        published = read_status(lock.index_dir)
        if published is not None:
            on_progress(*published)
        if time.monotonic() >= deadline:
            return Wait.TIMED_OUT
        time.sleep(FOLLOW_POLL_S)
