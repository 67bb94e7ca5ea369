"""The only code that changes the index: one read-write connection and what it may do.

A batch of file changes is one transaction (batch.py). Name resolution (resolution_pass.py) and the
upkeep of scores, the lexical index and disk space (upkeep.py) are separate, idempotent steps whose
pending work is itself stored (``files.refs_pending``, ``dirty_names``, ``meta.scores_dirty``), so a
process killed at any instant leaves an index that the next run finishes into exactly what a fresh
full index would be. :class:`IndexWriter` is the one door to all of them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from smartctx.core.files import FileState
from smartctx.store import lexical, upkeep
from smartctx.store.batch import Batch
from smartctx.store.database import SEARCH_GENERATION_KEY
from smartctx.store.past_commits import PastCommit, write_window
from smartctx.store.resolution_pass import ResolutionPass, ResolutionReport


class IndexWriter:
    """Applies batches, resolves references and recomputes scores on one read-write connection."""

    def __init__(self, connection: sqlite3.Connection, index_path: Path) -> None:
        self._db = connection
        self._index_path = index_path

    def file_count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM files").fetchone()[0])

    def known_files(self) -> dict[str, FileState]:
        return {
            path: FileState(size, mtime_ns, content_hash)
            for path, size, mtime_ns, content_hash in self._db.execute(
                "SELECT path, size, mtime_ns, content_hash FROM files"
            )
        }

    def file_state(self, path: str) -> FileState | None:
        row = self._db.execute(
            "SELECT size, mtime_ns, content_hash FROM files WHERE path = ?", (path,)
        ).fetchone()
        return None if row is None else FileState(*row)

    def paths_under(self, folder: str) -> list[str]:
        """Indexed paths inside ``folder`` (for a folder that was deleted or became ignored)."""
        # A range on the path index instead of a scan of every row: the paths starting with "dir/" are
        # those from "dir/" up to, not including, "dir0" ("0" follows "/").
        base = folder.rstrip("/")
        return [
            path
            for (path,) in self._db.execute(
                "SELECT path FROM files WHERE path >= ? AND path < ? ORDER BY path", (base + "/", base + "0")
            )
        ]

    @contextmanager
    def batch(self) -> Iterator[Batch]:
        """One transaction: every change inside lands, or none does."""
        self._db.execute("BEGIN IMMEDIATE")
        batch = Batch(self._db)
        try:
            yield batch
            batch.finish()
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        if batch.lexical:
            self._update_lexical(batch.lexical)

    def search_generation(self) -> int:
        """How many batches have changed the search rows (the lexical index's commits)."""
        return int(self.meta(SEARCH_GENERATION_KEY) or 0)

    def _update_lexical(self, changes: lexical.LexicalChanges) -> None:
        """Bring the lexical index to the generation just committed: in place when it holds the one
        before and the change is worth applying in place, else built again from search_words."""
        generation = self.search_generation()
        index = lexical.open_or_create(self._index_path)
        state = index.state()
        if state.generation == generation - 1 and not state.needs_rebuild(changes):
            index.apply(changes, generation)
        else:
            self.rebuild_lexical()

    def rebuild_lexical(self) -> None:
        """Build the lexical index again from search_words, at the generation they are at."""
        upkeep.rebuild_lexical(self._db, self._index_path)

    def check_lexical(self) -> bool:
        """Build the lexical index again if it does not hold SQLite's generation (a process killed
        between the two commits, a missing or unreadable folder); whether it had to."""
        state = lexical.open_or_create(self._index_path).state()
        if state.generation == self.search_generation():
            return False
        self.rebuild_lexical()
        return True

    def scores_dirty(self) -> bool:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'scores_dirty'").fetchone()
        return row is not None and row[0] == "1"

    def resolve_pending(self) -> ResolutionReport:
        """Recompute the edges of every reference that is new or whose key's definitions changed."""
        return ResolutionPass(self._db).run()

    def recompute_scores(self) -> int:
        """PageRank and usage for every node, replacing the previous scores in one transaction."""
        return upkeep.recompute_scores(self._db)

    def compact_search(self) -> None:
        """Build the lexical index again if its statistics still count deleted rows."""
        upkeep.compact_search(self._db, self._index_path)

    def reclaim_space(self) -> bool:
        """Rewrite the file without its free pages if there are enough of them; whether it did."""
        return upkeep.reclaim_space(self._db)

    def truncate_log(self) -> bool:
        """Empty the write-ahead log into the index file unless a reader needs it; whether it did."""
        return upkeep.truncate_log(self._db, self._index_path)

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def replace_past_commits(self, stamp: str, commits: Sequence[PastCommit]) -> None:
        """Replace the window of past commits in one transaction, recording ``stamp``."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            write_window(self._db, stamp, commits)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def set_meta(self, values: Sequence[tuple[str, str]]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values)
