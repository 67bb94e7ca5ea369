"""A folder only watched while a team's base answers for it (``baseIndexOnly``): the live workspace
when the search for the base is slow, finds none, or another process writes the folder's index.
The base here is a source whose search ends when the test says, to order the threads; the real one
(team/reading.py, PostgreSQL) is in test_base_first_index.py."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from smartctx.live import workspace as workspace_module
from smartctx.live.base import BaseCover
from smartctx.live.live_index import IndexNotAvailableError, LiveIndex
from smartctx.live.sharing import WriterLock
from smartctx.live.tasks import BackgroundTasks
from smartctx.live.workspace import Folder, Workspace
from smartctx.store.index_store import index_dir_in

WAIT_S = 60


class NoBaseYet:
    """A base source whose search for a folder's base ends, without one, once released."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def cover(self, root: Path) -> BaseCover | None:
        self.released.wait(WAIT_S)
        return None


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"waited {WAIT_S} s for {what}"
        time.sleep(0.05)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    for number in range(20):
        (folder / f"module_{number}.py").write_text(f"def function_{number}():\n    return {number}\n")
    return folder


@pytest.fixture
def source() -> Iterator[NoBaseYet]:
    base = NoBaseYet()
    yield base
    base.released.set()


def watched(workspace: Workspace, root: Path) -> Folder:
    folder = workspace.add(root.as_uri(), str(root), "repo")
    assert folder is not None
    workspace.start(folder)
    assert folder.index.watching_only
    return folder


def test_a_request_while_the_base_is_looked_for_says_so_without_waiting_on_an_index(
    tmp_path: Path, root: Path, source: NoBaseYet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace_module, "BASE_WAIT_S", 0.5)
    workspace = Workspace(
        tmp_path / "indexes", lambda uri, counts: None, BackgroundTasks(), base=source, base_only=True
    )
    try:
        folder = watched(workspace, root)
        status = workspace.status()
        started = time.monotonic()
        with pytest.raises(IndexNotAvailableError, match="base, which is being looked for"):
            workspace.symbol_at(folder, "module_1.py", 1, "function_1")
        # Not the 30 s an index that is never opened would take.
        assert time.monotonic() - started < 5

        assert status.state == "indexing" and status.base is None
        source.released.set()
        wait_for(lambda: not folder.index.watching_only, "the folder indexed whole without a base")
        wait_for(lambda: workspace.status().state == "ready", "the whole folder's index")
        hovered = workspace.symbol_at(folder, "module_1.py", 1, "function_1")
        assert hovered is not None and hovered.name == "function_1"
    finally:
        workspace.close()


def test_a_folder_first_watched_follows_the_process_that_writes_its_index(
    tmp_path: Path, root: Path, source: NoBaseYet
) -> None:
    # Another process writes this folder's index (a second lock file descriptor stands for it).
    other = WriterLock(index_dir_in(tmp_path / "indexes", root.resolve()))
    assert other.try_acquire()
    workspace = Workspace(
        tmp_path / "indexes", lambda uri, counts: None, BackgroundTasks(), base=source, base_only=True
    )
    try:
        folder = watched(workspace, root)
        # The watches are placed, and their loop holds the watch thread, when the search ends.
        time.sleep(0.5)
        source.released.set()
        wait_for(lambda: folder.index.status().role == "follower", "the folder to follow the writer")
        # The follower takes over once the writer exits, and indexes the folder.
        other.release()
        wait_for(
            lambda: folder.index.status().role == "writer" and folder.index.status().indexed_files == 20,
            "the takeover's index",
        )
    finally:
        workspace.close()
        other.release()


def test_a_live_index_started_twice_indexes_once(
    tmp_path: Path, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A failed base query and a search that found no base may both start a watched folder."""
    caplog.set_level(logging.INFO, logger="smartctx.live.live_index")
    index = LiveIndex(root, tmp_path / "index", lambda counts: None, BackgroundTasks())
    try:
        index.watch()
        index.start()
        index.start()
        wait_for(lambda: index.status().state == "ready" and index.status().indexed_files == 20, "the index")
        time.sleep(0.5)
    finally:
        index.close()

    opened = [record for record in caplog.records if "(on opening)" in record.getMessage()]
    assert len(opened) == 1, [record.getMessage() for record in opened]
