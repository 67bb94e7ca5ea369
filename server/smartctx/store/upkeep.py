"""Upkeep of the index after its rows changed: graph scores, the lexical index, disk space.

Each step brings derived data or the file itself back in line with the rows, is idempotent, and
runs off the request path (the indexer calls them after a batch, the live index once updates go
quiet): graph scores recomputed whole (``meta.scores_dirty`` says when they are stale), the lexical
index built again from ``search_words`` when it drifted, free pages and the write-ahead log given
back to the disk.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from smartctx.store import lexical, scores
from smartctx.store.database import BUSY_TIMEOUT_MS, SEARCH_GENERATION_KEY

# SQLite keeps the pages of deleted rows as free pages inside the file; the file is rewritten
# without them once they are both this share of it and this many bytes, so a big deletion gives
# the disk back (a deleted 1 MB file of nested functions once left 1.88 GB behind) while ordinary
# churn, which reuses free pages, never pays for a rewrite.
VACUUM_MIN_FREE_FRACTION = 0.25
VACUUM_MIN_FREE_BYTES = 4 * 1024 * 1024
# A write-ahead log at least this large is emptied at the end of a reconcile: below it, a log that
# later one-file updates fill again anyway is not worth a checkpoint that waits for the disk.
LOG_TRUNCATE_MIN_BYTES = 256 * 1024
# Edges a scores recompute reads and adds to its graph at a time.
EDGES_PER_READ = 100_000


def recompute_scores(db: sqlite3.Connection) -> int:
    """PageRank and usage for every node, replacing the previous scores in one transaction."""
    node_ids = np.fromiter(
        (node_id for (node_id,) in db.execute("SELECT id FROM nodes ORDER BY id")), np.int64
    )
    graph = scores.ScoreGraph(len(node_ids))
    # Read a part at a time: every edge of the 104k-file monorepo as rows at once (4.9M) was the
    # peak of its cold index (2.5 GB). An edge's ends are placed by binary search among the
    # ascending node ids, as the finish places them (team/finish.py).
    edges = db.execute("SELECT src_id, dst_id, kind, confidence FROM edges")
    while rows := edges.fetchmany(EDGES_PER_READ):
        graph.add(
            np.searchsorted(node_ids, np.fromiter((row[0] for row in rows), np.int64, len(rows))),
            np.searchsorted(node_ids, np.fromiter((row[1] for row in rows), np.int64, len(rows))),
            [row[2] for row in rows],
            [row[3] for row in rows],
        )
    ranks, uses = graph.scores()
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("DELETE FROM scores")
        db.executemany(
            "INSERT INTO scores(node_id, pagerank, usage) VALUES (?, ?, ?)",
            zip(node_ids.tolist(), ranks.tolist(), uses.tolist(), strict=True),
        )
        db.execute("UPDATE meta SET value = '0' WHERE key = 'scores_dirty'")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return len(node_ids)


def rebuild_lexical(db: sqlite3.Connection, index_path: Path) -> None:
    """Build the lexical index again from search_words, at the generation they are at."""
    lexical.build(db, index_path, SEARCH_GENERATION_KEY)


def compact_search(db: sqlite3.Connection, index_path: Path) -> None:
    """Build the lexical index again if its statistics still count deleted rows, so that it
    answers exactly as a fresh index would (store/lexical.py)."""
    state = lexical.open_or_create(index_path).state()
    if state.deleted_rows or state.deleted_files:
        rebuild_lexical(db, index_path)


def reclaim_space(db: sqlite3.Connection) -> bool:
    """Rewrite the file without its free pages if they pass the thresholds; whether it did.

    VACUUM costs time in the size of what is kept, so callers run it off the request path; in
    WAL mode the file shrinks at the checkpoint that follows, which readers may postpone.
    """
    (page_size,) = db.execute("PRAGMA page_size").fetchone()
    (page_count,) = db.execute("PRAGMA page_count").fetchone()
    (free_pages,) = db.execute("PRAGMA freelist_count").fetchone()
    if free_pages * page_size < VACUUM_MIN_FREE_BYTES or free_pages < VACUUM_MIN_FREE_FRACTION * page_count:
        return False
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return True


def truncate_log(db: sqlite3.Connection, index_path: Path) -> bool:
    """Copy the write-ahead log into the index file and truncate it to nothing; whether it did.

    SQLite keeps a log it has checkpointed for reuse, up to ``WAL_SIZE_LIMIT_BYTES`` (4 MB, most
    of which a big batch fills): beside babel's 21 MB index that was 0.75x of its source on
    disk with nothing in it to read. A reader in the middle of a snapshot still needs the log;
    then this gives up at once (it runs on the index thread, which must not wait for queries)
    and the log is reused as before.
    """
    log = index_path.with_name(index_path.name + "-wal")
    try:
        if log.stat().st_size < LOG_TRUNCATE_MIN_BYTES:
            return False
    except FileNotFoundError:
        return False
    db.execute("PRAGMA busy_timeout=0")
    try:
        (busy, _, _) = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return int(busy) == 0
