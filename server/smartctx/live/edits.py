"""What the server saw of the user's editing, so a request that says nothing about it still has it.

Each folder remembers the files edited lately: buffers the client changed (``didChange``) and saves
its watcher saw. A branch switch or a build is not editing: a watcher batch of more than
``MAX_SAVE_BATCH_FILES`` paths is left out. The memory is bounded and holds one entry per file,
with the time of its last edit, as wall-clock time: a process that follows another's index
(sharing.py) runs no watcher of its own and learns the writer's memory from a file the writer
publishes, so the times must mean the same in both processes.

:func:`with_editor_memory` adds it to a request's focus, together with the documents the client
has open when the request names no open files of its own.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from smartctx.core.context import MAX_FOCUS_FILES, Focus, RecentEdit

# Files remembered per folder; the oldest edit is forgotten first.
MAX_REMEMBERED_EDITS = 50
# Edits older than this are forgotten: after a day the graph knows more than this memory does.
EDIT_MEMORY_S = 24 * 3600.0
# A save touches one file, sometimes a few (an editor's "save all"); a checkout touches many.
MAX_SAVE_BATCH_FILES = 5


class EditMemory:
    """The files edited lately in one folder, newest first. Safe from any thread.

    ``on_change`` is called after each record, outside the memory's lock.
    """

    def __init__(
        self, clock: Callable[[], float] = time.time, on_change: Callable[[], None] | None = None
    ) -> None:
        self._clock = clock
        self._on_change = on_change
        self._lock = threading.Lock()
        # Path -> clock time of its last edit, oldest first.
        self._edited: OrderedDict[str, float] = OrderedDict()

    def record(self, paths: Iterable[str]) -> None:
        """``paths`` (workspace-relative) were edited now."""
        now = self._clock()
        self.adopt((path, now) for path in paths)

    def adopt(self, edits: Iterable[tuple[str, float]]) -> None:
        """Edits made at the given clock times (another process's memory, say): each file keeps its
        latest time."""
        with self._lock:
            for path, at in edits:
                if at >= self._edited.get(path, at):
                    self._edited.pop(path, None)
                    self._edited[path] = at
            # Oldest first by time; a stable sort keeps the order of record among equal times.
            self._edited = OrderedDict(sorted(self._edited.items(), key=lambda item: item[1]))
            while len(self._edited) > MAX_REMEMBERED_EDITS:
                self._edited.popitem(last=False)
        if self._on_change is not None:
            self._on_change()

    def record_saves(self, paths: list[str]) -> None:
        """A watcher batch: saves when it is small enough to be the user's, else nothing."""
        if len(paths) <= MAX_SAVE_BATCH_FILES:
            self.record(paths)

    def edited(self) -> list[tuple[str, float]]:
        """Each remembered file with the clock time of its last edit, oldest first."""
        with self._lock:
            return list(self._edited.items())

    def recent(self, *others: Sequence[tuple[str, float]]) -> tuple[RecentEdit, ...]:
        """The remembered edits, with ``others`` (files and their edit times, from another process)
        among them, newest first, each with its age; a file in several keeps its latest edit."""
        now = self._clock()
        with self._lock:
            latest = dict(self._edited)
        for other in others:
            for path, at in other:
                latest[path] = max(at, latest.get(path, at))
        # A clock set back since an edit makes it look new rather than not yet made.
        aged = [RecentEdit(path, max(0.0, now - at)) for path, at in latest.items()]
        aged.sort(key=lambda edit: (edit.age_s, edit.path))
        return tuple(edit for edit in aged if edit.age_s <= EDIT_MEMORY_S)[:MAX_REMEMBERED_EDITS]


def with_editor_memory(
    focus: Focus, remembered: Iterable[RecentEdit], open_documents: Iterable[str]
) -> Focus:
    """``focus`` with the server's own memory added: ``remembered`` edits join the request's (a file
    in both keeps its most recent time), and ``open_documents`` stand in for the open files when the
    request names none."""
    edits: dict[str, float] = {}
    for edit in (*focus.recent_edits, *remembered):
        edits[edit.path] = min(edit.age_s, edits.get(edit.path, edit.age_s))
    newest = sorted(edits.items(), key=lambda item: (item[1], item[0]))[:MAX_FOCUS_FILES]
    open_paths = focus.open_paths
    if not focus.visible_paths and not focus.open_paths:
        open_paths = tuple(sorted(open_documents))[:MAX_FOCUS_FILES]
    return replace(
        focus, open_paths=open_paths, recent_edits=tuple(RecentEdit(path, age) for path, age in newest)
    )
