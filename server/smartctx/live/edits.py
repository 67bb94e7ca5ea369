"""What the server saw of the user's editing, so a request that says nothing about it still has it.

Each folder remembers the files edited lately: buffers the client changed (``didChange``) and saves
its watcher saw. A branch switch or a build is not editing: a watcher batch of more than
``MAX_SAVE_BATCH_FILES`` paths is left out. The memory is bounded and holds one entry per file,
with the time of its last edit.

:func:`with_editor_memory` adds it to a request's focus, together with the documents the client
has open when the request names no open files of its own.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import replace

from smartctx.core.context import MAX_FOCUS_FILES, Focus, RecentEdit

# Files remembered per folder; the oldest edit is forgotten first.
MAX_REMEMBERED_EDITS = 50
# Edits older than this are forgotten: after a day the graph knows more than this memory does.
EDIT_MEMORY_S = 24 * 3600.0
# A save touches one file, sometimes a few (an editor's "save all"); a checkout touches many.
MAX_SAVE_BATCH_FILES = 5


class EditMemory:
    """The files edited lately in one folder, newest first. Safe from any thread."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        # Path -> clock time of its last edit, oldest first.
        self._edited: OrderedDict[str, float] = OrderedDict()

    def record(self, paths: Iterable[str]) -> None:
        """``paths`` (workspace-relative) were edited now."""
        now = self._clock()
        with self._lock:
            for path in paths:
                self._edited.pop(path, None)
                self._edited[path] = now
            while len(self._edited) > MAX_REMEMBERED_EDITS:
                self._edited.popitem(last=False)

    def record_saves(self, paths: list[str]) -> None:
        """A watcher batch: saves when it is small enough to be the user's, else nothing."""
        if len(paths) <= MAX_SAVE_BATCH_FILES:
            self.record(paths)

    def recent(self) -> tuple[RecentEdit, ...]:
        """The remembered edits, newest first, each with its age."""
        now = self._clock()
        with self._lock:
            edits = [RecentEdit(path, max(0.0, now - at)) for path, at in reversed(self._edited.items())]
        return tuple(edit for edit in edits if edit.age_s <= EDIT_MEMORY_S)


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
