"""The CLI beside another process that writes the folder's index: it reads, waits a bounded time
for a first index, and takes over when the writer goes away. The test process plays the writer by
holding the index folder's lock (and publishing a status, as a live index does)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cli import SAMPLE, many_files, run
from test_sharing import Watched

from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.live.sharing import WriterLock, publish_status, read_status
from smartctx.live.status import StatusCounts, WriterInfo
from smartctx.live.tasks import BackgroundTasks
from smartctx.store.index_store import IndexStore
from workspaces import write_tree

WAIT_S = 30.0
# What the test process says about itself as the writer.
PRETEND = WriterInfo(os.getpid(), "smartctx serve")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "ws", SAMPLE)


def indexed_by_this_process(root: Path, index_dir: Path) -> WriterLock:
    """A complete index of ``root`` and the lock held, as a language server that indexed it holds it."""
    lock = WriterLock(index_dir)
    assert lock.try_acquire()
    store = IndexStore(root, index_dir)
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        publish_status(index_dir, StatusCounts(False, 4, 4, 0, indexed_files=4), PRETEND)
    finally:
        store.close()
    return lock


def test_context_answers_from_the_writers_index_without_indexing(root: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    with indexed_by_this_process(root, index_dir):
        write_tree(root, {"app/refunds.py": "def refund_order():\n    return 2\n"})
        result = run("context", "refund the order", "--root", str(root), "--index-dir", str(index_dir))
        status = run("status", str(root), "--index-dir", str(index_dir))
        again = run("index", str(root), "--index-dir", str(index_dir))

    assert result.returncode == 0, result.stderr
    assert (
        f"smartctx serve (pid {os.getpid()}) keeps this index up to date; not indexing twice" in result.stderr
    )
    # The writer has not indexed the new file yet, and the CLI did not either: it read the index.
    assert "class Order" in result.stdout and "refund_order" not in result.stdout
    assert status.returncode == 0, status.stderr
    assert f"state    kept up to date by smartctx serve (pid {os.getpid()})" in status.stdout
    assert again.returncode == 0, again.stderr
    assert "indexed by smartctx serve" in again.stdout and "changes" not in again.stdout


def test_context_waits_for_a_first_index_and_takes_over_when_the_writer_exits(
    root: Path, tmp_path: Path
) -> None:
    index_dir = tmp_path / "idx"
    lock = WriterLock(index_dir)
    assert lock.try_acquire()
    publish_status(index_dir, StatusCounts(True, 0, 4, 4), PRETEND)
    command = ["context", "price of the order", "--root", str(root), "--index-dir", str(index_dir)]
    process = subprocess.Popen(
        [sys.executable, "-m", "smartctx", *command, "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        waiting = process.stderr.readline()
        assert (
            waiting == f"smartctx: waiting for smartctx serve (pid {os.getpid()}) to finish its first index\n"
        )
        lock.release()
        out, rest = process.communicate(timeout=WAIT_S)
    finally:
        process.kill()
    assert process.returncode == 0, rest
    assert "the process that was indexing has exited; indexing here" in rest
    assert "def price():" in out


def test_a_bounded_wait_then_an_answer_from_what_is_indexed_so_far(root: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    with WriterLock(index_dir) as lock:
        assert lock.try_acquire()
        publish_status(index_dir, StatusCounts(True, 0, 4, 4), PRETEND)
        nothing = run("context", "price", "--root", str(root), "--index-dir", str(index_dir), "--wait", "0.5")
        # The writer created the index and is part way: nothing is committed yet.
        IndexStore(root, index_dir).close()
        early = run("context", "price", "--root", str(root), "--index-dir", str(index_dir), "--wait", "0.5")

    assert nothing.returncode == 1
    assert "has not created the index yet; try again in a moment" in nothing.stderr
    assert early.returncode == 0, early.stderr
    assert "is still at its first index; using what it has indexed so far" in early.stderr


def test_a_server_follows_a_cli_index_run_then_takes_over_when_it_exits(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    many_files(root, 2500)
    index_dir = tmp_path / "idx"
    command = ["index", str(root), "--index-dir", str(index_dir), "--quiet", "--workers", "0"]
    process = subprocess.Popen(
        [sys.executable, "-m", "smartctx", *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    server = Watched(root, index_dir, BackgroundTasks())
    try:
        deadline = time.monotonic() + WAIT_S
        while (published := read_status(index_dir)) is None or published[1].pid != process.pid:
            assert time.monotonic() < deadline, "the CLI never published its status"
            time.sleep(0.01)
        server.index.start()
        following = server.until(lambda s: s.role == "follower" and s.files_total == 2500)
        assert following.writer == WriterInfo(process.pid, "smartctx index")
        assert following.indexing
        assert process.wait(timeout=WAIT_S * 4) == 0
        taken = server.until(lambda s: s.role == "writer" and s.state == "ready")
        assert taken.indexed_files == 2500
    finally:
        process.kill()
        server.index.close()
