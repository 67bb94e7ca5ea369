"""A repository as the benchmarks use it: opened and indexed before the first question, its commit
messages as tasks, and its index compared with a fresh one of the same files (what a branch switch
or a stream of edits must leave)."""

from __future__ import annotations

import math
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

from tests.index_dump import dump

from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.index_store import IndexStore

# A commit message shorter than this says too little to be a task.
MIN_COMMIT_TASK_CHARS = 40


def git(tree: Path, *args: str) -> str:
    """What ``git -C tree ARGS`` printed (CalledProcessError if it failed)."""
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True, text=True).stdout


def indexed_store(root: Path, index_dir: Path) -> IndexStore:
    """The index of ``root`` in ``index_dir`` brought up to date by one reconcile (built cold when the
    folder is empty), open for writing and snapshots; the caller closes it."""
    store = IndexStore(root, index_dir)
    Indexer(root, store, IndexConfig()).reconcile()
    return store


def copy_index(source: Path, index_dir: Path, root: Path) -> None:
    """Copy the index folder ``source`` to ``index_dir`` as the index of ``root`` (a copy of the tree
    it indexes): the copy's meta names ``root`` as its workspace, else the store takes it for another
    folder's index, moves it aside and indexes ``root`` cold (13 minutes on the monorepo)."""
    shutil.copytree(source, index_dir)
    with closing(sqlite3.connect(index_dir / INDEX_FILE_NAME)) as connection, connection:
        connection.execute("UPDATE meta SET value = ? WHERE key = 'workspace_root'", (str(root),))


def commit_message_tasks(tree: Path, before: str, count: int) -> list[str]:
    """Task texts from the commit messages that lead up to ``before`` in the git work tree ``tree``
    (merges, and messages too short to say what to do, left out): tasks for a repository that
    SWE-bench does not cover."""
    log = git(tree, "log", "--no-merges", "--format=%s%n%n%b%x00", "-n", str(count * 4), before)
    tasks = [text.strip() for text in log.split("\x00") if len(text.strip()) >= MIN_COMMIT_TASK_CHARS]
    return tasks[:count]


def files_table(index_path: Path) -> set[tuple[str, str]]:
    """Every indexed file's path and content hash, read from the committed index."""
    connection = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        return set(connection.execute("SELECT path, content_hash FROM files"))
    finally:
        connection.close()


def same_index(live_store: Path, fresh_store: Path, root: Path) -> bool:
    """Row for row: nodes, references, edges, and scores within rounding."""
    live_index = IndexStore(root, live_store)
    fresh_index = IndexStore(root, fresh_store)
    try:
        with live_index.snapshot() as snapshot:
            live = dump(snapshot)
        with fresh_index.snapshot() as snapshot:
            fresh = dump(snapshot)
    finally:
        live_index.close()
        fresh_index.close()
    if (live.nodes, live.refs, live.edges) != (fresh.nodes, fresh.refs, fresh.edges):
        return False
    return live.scores.keys() == fresh.scores.keys() and all(
        math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)
        for key, (rank, use) in live.scores.items()
        for a, b in zip((rank, use), fresh.scores[key], strict=True)
    )
