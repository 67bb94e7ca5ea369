"""The watcher on a real folder with real inotify (watchdog): where it watches, what it delivers, when.

Each test waits for the watcher's callbacks with a bound, never for a fixed time; the bound only turns
a broken watcher into a failure instead of a hang.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gitrepos import Repo
from smartctx.indexing.scanner import ScanConfig
from smartctx.indexing.watcher import Watcher

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")

WAIT_S = 10.0


class Calls:
    """What the watcher handed over: batches of paths and reconcile reasons, in order."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.reconciles: list[str] = []
        self._changed = threading.Condition()

    def on_paths(self, paths: list[str]) -> None:
        with self._changed:
            self.batches.append(paths)
            self._changed.notify_all()

    def on_reconcile(self, reason: str) -> None:
        with self._changed:
            self.reconciles.append(reason)
            self._changed.notify_all()

    def wait(self, done: Callable[[], bool]) -> None:
        with self._changed:
            assert self._changed.wait_for(done, WAIT_S), f"gave up after {WAIT_S} s: {self.batches}"

    def delivered(self) -> set[str]:
        return {path for batch in self.batches for path in batch}


def make_tree(root: Path) -> None:
    files = {
        "src/pkg/a.py": "def a():\n    return 1\n",
        "docs/notes.txt": "notes\n",
        "node_modules/lib/index.js": "export const x = 1;\n",
        "node_modules/lib/deep/more.js": "export const y = 2;\n",
        ".git/objects/ab/cdef": "blob\n",
        "build/out.py": "generated = True\n",
        ".gitignore": "build/\n*.gen.py\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    make_tree(folder)
    return folder


@pytest.fixture
def calls() -> Calls:
    return Calls()


def start(root: Path, calls: Calls, **timing: float) -> Iterator[Watcher]:
    watcher = Watcher(root, ScanConfig(), calls.on_paths, calls.on_reconcile, **timing)
    watcher.start()
    thread = threading.Thread(target=watcher.run, name="test-watch")
    thread.start()
    try:
        yield watcher
    finally:
        watcher.stop()
        thread.join(WAIT_S)
        assert not thread.is_alive()


@pytest.fixture
def watcher(root: Path, calls: Calls) -> Iterator[Watcher]:
    yield from start(root, calls)


def test_watches_only_folders_the_scanner_enters(watcher: Watcher) -> None:
    assert watcher.watched_dirs() == {"", "src", "src/pkg", "docs"}


def test_new_folder_is_watched_and_delivered_and_its_removal_too(
    root: Path, watcher: Watcher, calls: Calls
) -> None:
    (root / "src/new/inner").mkdir(parents=True)
    (root / "src/new/inner/b.py").write_text("def b():\n    pass\n", encoding="utf-8")
    calls.wait(lambda: "src/new" in calls.delivered())
    assert {"src/new", "src/new/inner"} <= watcher.watched_dirs()

    # A file written in the new subfolder now arrives on its own.
    (root / "src/new/inner/c.py").write_text("def c():\n    pass\n", encoding="utf-8")
    calls.wait(lambda: "src/new/inner/c.py" in calls.delivered())

    shutil.rmtree(root / "src/new")
    calls.wait(lambda: calls.batches[-1] == ["src/new"] and "src/new" not in watcher.watched_dirs())
    assert not any(path.startswith("src/new") for path in watcher.watched_dirs())


def test_renamed_folder_is_delivered_under_both_names_and_watched_under_the_new_one(
    root: Path, watcher: Watcher, calls: Calls
) -> None:
    (root / "src/pkg").rename(root / "src/moved")
    calls.wait(lambda: {"src/pkg", "src/moved"} <= calls.delivered())
    assert "src/moved" in watcher.watched_dirs()
    assert "src/pkg" not in watcher.watched_dirs()

    (root / "src/moved/a.py").write_text("def a():\n    return 2\n", encoding="utf-8")
    calls.wait(lambda: "src/moved/a.py" in calls.delivered())


def test_excluded_and_unsupported_paths_are_filtered_and_one_path_is_merged(
    root: Path, watcher: Watcher, calls: Calls
) -> None:
    (root / "docs/more.txt").write_text("not code\n", encoding="utf-8")
    (root / "src/pkg/schema.gen.py").write_text("x = 1\n", encoding="utf-8")
    (root / "node_modules/lib/index.js").write_text("export const x = 2;\n", encoding="utf-8")
    (root / "build/out.py").write_text("generated = False\n", encoding="utf-8")
    for version in range(5):
        (root / "src/pkg/a.py").write_text(f"def a():\n    return {version}\n", encoding="utf-8")
    calls.wait(lambda: "src/pkg/a.py" in calls.delivered())

    assert calls.batches == [["src/pkg/a.py"]]


def test_a_burst_is_one_batch(root: Path, calls: Calls) -> None:
    burst = [f"src/pkg/m{index}.py" for index in range(20)]
    for _ in start(root, calls, debounce_s=0.3):
        for path in burst:
            (root / path).write_text("def f():\n    pass\n", encoding="utf-8")
        calls.wait(lambda: len(calls.batches) == 1)
        # A later write shows where the first batch ended without waiting for a quiet period to pass.
        (root / "src/pkg/after.py").write_text("def g():\n    pass\n", encoding="utf-8")
        calls.wait(lambda: len(calls.batches) == 2)

    assert calls.batches == [sorted(burst), ["src/pkg/after.py"]]


def test_a_stream_of_events_cannot_hold_a_batch_back(root: Path, calls: Calls) -> None:
    for _ in start(root, calls, debounce_s=0.2, max_delay_s=0.5):
        started = time.monotonic()
        writes = 0
        # A write every 50 ms never leaves the 200 ms of quiet the debounce waits for.
        while not calls.batches and time.monotonic() - started < WAIT_S:
            (root / f"src/pkg/s{writes % 3}.py").write_text(f"x = {writes}\n", encoding="utf-8")
            writes += 1
            time.sleep(0.05)

    assert calls.batches
    assert time.monotonic() - started < 2.0


def test_an_ignore_file_change_asks_for_a_reconcile_and_moves_the_watches(
    root: Path, watcher: Watcher, calls: Calls
) -> None:
    (root / ".gitignore").write_text("build/\ndocs/\n", encoding="utf-8")
    calls.wait(lambda: bool(calls.reconciles))

    assert calls.reconciles == ["an ignore file changed"]
    assert watcher.watched_dirs() == {"", "src", "src/pkg"}


def test_the_periodic_reconcile_runs(root: Path, calls: Calls) -> None:
    for _ in start(root, calls, reconcile_interval_s=0.2):
        calls.wait(lambda: len(calls.reconciles) >= 2)

    assert set(calls.reconciles) == {"periodic safety net"}


def test_a_kernel_queue_overflow_asks_for_a_reconcile(root: Path, watcher: Watcher, calls: Calls) -> None:
    # A real overflow through watchdog's real path: the reader thread is held at its lock (it takes it
    # around every read), so the kernel queue fills while files are renamed back and forth; once the
    # queue holds max_queued_events the kernel appends IN_Q_OVERFLOW, which watchdog's InotifyFD turns
    # into on_queue_overflow when the reader is let go.
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    first, second = root / "src/pkg/a.py", root / "src/pkg/b.py"
    inotify = watcher._inotify
    assert inotify is not None
    with inotify._lock:
        # A rename is two events (moved from, moved to); the reader may hold one buffer already.
        for _ in range(limit):
            first.rename(second)
            second.rename(first)
    calls.wait(lambda: bool(calls.reconciles))

    assert calls.reconciles == ["inotify queue overflowed, events were lost"]
    assert watcher.watched_dirs() == {"", "src", "src/pkg", "docs"}
    # The reader thread lives on: a file saved after the overflow still arrives.
    (root / "src/pkg/after.py").write_text("x = 1\n")
    calls.wait(lambda: "src/pkg/after.py" in calls.delivered())
    assert calls.reconciles == ["inotify queue overflowed, events were lost"]


def test_events_wait_while_git_rewrites_the_work_tree(tmp_path: Path, calls: Calls) -> None:
    """A checkout holds git's index lock while it writes: what changes meanwhile arrives as one batch
    once the lock is gone, not a batch per max_delay_s while git is still writing."""
    repo = Repo(tmp_path / "repo")
    repo.write("src/a.py", "def a():\n    return 1\n")
    repo.commit("first")
    lock = repo.root / ".git" / "index.lock"
    for _ in start(repo.root, calls, debounce_s=0.05, max_delay_s=0.2):
        lock.write_text("")
        (repo.root / "src/b.py").write_text("def b():\n    pass\n", encoding="utf-8")
        # Several max_delay_s pass with the lock held; then git finishes with one more write.
        time.sleep(1.0)
        (repo.root / "src/c.py").write_text("def c():\n    pass\n", encoding="utf-8")
        released = time.monotonic()
        lock.unlink()
        calls.wait(lambda: bool(calls.batches))
        delivered = time.monotonic()

    assert calls.batches == [["src/b.py", "src/c.py"]]
    assert delivered >= released


def test_a_lock_left_behind_by_git_holds_a_save_back_only_until_the_work_tree_is_quiet(
    tmp_path: Path, calls: Calls
) -> None:
    """A killed git leaves its index lock behind, and `git commit` holds it while its message is
    written: a save then still arrives after a short quiet period, not after GIT_SETTLE_MAX_S."""
    repo = Repo(tmp_path / "repo")
    repo.write("src/a.py", "def a():\n    return 1\n")
    repo.commit("first")
    (repo.root / ".git" / "index.lock").write_text("")
    for _ in start(repo.root, calls, debounce_s=0.05, max_delay_s=0.2, git_quiet_s=0.5):
        saved = time.monotonic()
        (repo.root / "src/b.py").write_text("def b():\n    pass\n", encoding="utf-8")
        calls.wait(lambda: bool(calls.batches))
        delivered = time.monotonic()

    assert calls.batches == [["src/b.py"]]
    assert (repo.root / ".git" / "index.lock").exists()
    assert delivered - saved >= 0.5
