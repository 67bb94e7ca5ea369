"""Two live indexes of one folder sharing one index folder, in one process: the OS lock is per open
file, so they contend exactly as two processes would. One writes, the other follows its commits,
and takes over writing when the first closes. (tests/e2e/test_processes.py does the same with real
processes and kill -9.)"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from index_dump import assert_same_index, dump, fresh_dump
from smartctx.live.live_index import IndexNotAvailableError, LiveIndex
from smartctx.live.status import StatusCounts
from smartctx.live.tasks import BackgroundTasks
from workspaces import write_tree

# Long enough for a loaded CI machine, short enough that a hang fails quickly.
WAIT_S = 30.0

TREE = {
    "shop/cart.py": "from shop.price import price_of\n\n\ndef cart_total(items):\n"
    "    return sum(price_of(item) for item in items)\n",
    "shop/price.py": "def price_of(item):\n    return item.unit_price * item.quantity\n",
}


class Watched:
    """A live index and every status it published, with a way to wait for one that holds."""

    def __init__(self, root: Path, index_dir: Path, tasks: BackgroundTasks) -> None:
        self._changed = threading.Condition()
        self.statuses: list[StatusCounts] = []
        self.index = LiveIndex(root, index_dir, self._record, tasks)

    def _record(self, counts: StatusCounts) -> None:
        with self._changed:
            self.statuses.append(counts)
            self._changed.notify_all()

    def until(self, holds: Callable[[StatusCounts], bool]) -> StatusCounts:
        """The current status once ``holds`` is true of it; waits on published statuses."""
        deadline = time.monotonic() + WAIT_S
        with self._changed:
            while not holds(status := self.index.status()):
                assert self._changed.wait(deadline - time.monotonic()), f"still {status}"
        return status

    def paths(self) -> list[str]:
        with self.index.snapshot() as snapshot:
            return snapshot.file_paths()


@pytest.fixture
def tasks() -> Iterator[BackgroundTasks]:
    yield BackgroundTasks()


def ready_writer(status: StatusCounts) -> bool:
    return status.role == "writer" and status.state == "ready"


def test_one_writes_the_other_follows_its_commits_and_takes_over_when_it_closes(
    tmp_path: Path, tasks: BackgroundTasks
) -> None:
    root = write_tree(tmp_path / "ws", TREE)
    index_dir = tmp_path / "index"
    first = Watched(root, index_dir, tasks)
    first.index.start()
    first.until(ready_writer)
    second = Watched(root, index_dir, tasks)
    second.index.start()
    try:
        following = second.until(lambda s: s.role == "follower" and s.indexed_files == 2)
        # The follower names its writer: this very process.
        assert following.writer is not None and following.writer.pid == os.getpid()
        assert first.index.status().writer is None
        assert second.paths() == ["shop/cart.py", "shop/price.py"]
        with pytest.raises(IndexNotAvailableError, match="writes the index"):
            second.index.reindex().result(WAIT_S)

        # A change on disk: the writer's watcher indexes it, the follower sees the commit.
        write_tree(root, {"shop/tax.py": "def tax_of(total):\n    return total * 0.2\n"})
        second.until(lambda s: s.indexed_files == 3)
        assert "shop/tax.py" in second.paths()

        first.index.close()
        second.until(ready_writer)
        # The new writer indexes changes made after the old one left.
        (root / "shop" / "price.py").unlink()
        second.until(lambda s: ready_writer(s) and s.indexed_files == 2)
        assert second.paths() == ["shop/cart.py", "shop/tax.py"]
        # Graph scores are recomputed once updates go quiet; then the index is what a fresh one is.
        deadline = time.monotonic() + WAIT_S
        while scores_dirty(second.index):
            assert time.monotonic() < deadline, "the scores were never recomputed"
            time.sleep(0.05)
        with second.index.snapshot() as snapshot:
            assert_same_index(dump(snapshot, with_search=True), fresh_dump(root, tmp_path / "fresh"))
    finally:
        second.index.close()


def scores_dirty(index: LiveIndex) -> bool:
    with index.snapshot() as snapshot:
        return snapshot.stats().scores_dirty


def names_in(index: LiveIndex, path: str) -> list[str]:
    with index.snapshot() as snapshot:
        return [node.name for node in snapshot.nodes_in_file(path)]


def test_a_followers_unsaved_buffer_stays_its_own_until_it_writes(
    tmp_path: Path, tasks: BackgroundTasks
) -> None:
    root = write_tree(tmp_path / "ws", TREE)
    index_dir = tmp_path / "index"
    writer = Watched(root, index_dir, tasks)
    writer.index.start()
    writer.until(ready_writer)
    follower = Watched(root, index_dir, tasks)
    follower.index.start()
    try:
        follower.until(lambda s: s.role == "follower" and s.indexed_files == 2)
        follower.index.update_buffer("shop/price.py", b"def unsaved_price(item):\n    return 0\n")
        # The writer commits something else; the follower's buffer is still not in the shared index.
        write_tree(root, {"shop/tax.py": "def tax_of(total):\n    return total * 0.2\n"})
        follower.until(lambda s: s.indexed_files == 3)
        assert "unsaved_price" not in names_in(writer.index, "shop/price.py")

        writer.index.close()
        follower.until(
            lambda s: ready_writer(s) and "unsaved_price" in names_in(follower.index, "shop/price.py")
        )
    finally:
        follower.index.close()
