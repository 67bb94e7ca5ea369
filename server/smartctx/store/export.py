"""One consistent read of a whole index, row by row, for copying it elsewhere (team/publish.py).

An :class:`IndexExport` reads inside one read transaction, like a snapshot, so every table it lists
shows the same state of the index however long the copy takes and whatever a writer commits
meanwhile. Rows are named tuples whose field names are the columns they are copied into; ids are
the index's own (stable within this one state, not across states). Nothing here holds source text:
a node's text is read from its file when packed (architecture.md, *The index*).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

from smartctx.store.database import SEARCH_WORDS_KEY, connect
from smartctx.store.lexical import stored_rows
from smartctx.store.rows import NodeWords, search_words_stamp


class FileRecord(NamedTuple):
    file_id: int
    path: str
    language: str
    size_bytes: int
    content_hash: str
    line_count: int
    has_errors: bool


class NodeRecord(NamedTuple):
    node_id: int
    file_id: int
    parent_id: int | None
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    signature: str
    doc: str
    content_hash: str


class ScoreRecord(NamedTuple):
    node_id: int
    pagerank: float
    usage: float


class EdgeRecord(NamedTuple):
    src_id: int
    dst_id: int
    kind: str
    confidence: float
    ref_id: int | None


class RefRecord(NamedTuple):
    ref_id: int
    file_id: int
    source_id: int
    kind: str
    name: str
    key: str
    line: int


class FoldedRecord(NamedTuple):
    file_id: int
    holder_id: int
    name: str
    line: int


class SearchWordsRecord(NamedTuple):
    """A file's search words: its path's, and each of its nodes' five columns (rows.py)."""

    file_id: int
    node_ids: tuple[int, ...]
    path_words: str
    nodes: tuple[NodeWords, ...]


class IndexNotSettledError(Exception):
    """The index still has references to resolve or scores to compute; the message says which."""


class IndexExport:
    """A read-only, consistent view of every row of the index at ``index_path``. Close it (or use
    ``with``)."""

    def __init__(self, index_path: Path) -> None:
        self._db = connect(index_path, read_only=True)
        try:
            self._db.execute("BEGIN")
            # The first read fixes the state every later read sees.
            self._db.execute("SELECT count(*) FROM meta").fetchone()
        except BaseException:
            self._db.close()
            raise

    def __enter__(self) -> IndexExport:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def check_settled(self) -> None:
        """Raise unless every reference is resolved and the scores are current: an index copied
        before then would lack edges and rank by stale scores."""
        # The references IndexSnapshot.stats counts as pending, in this export's own state.
        pending = self._count(
            "SELECT count(*) FROM files f JOIN refs r ON r.file_id = f.id WHERE f.refs_pending = 1"
            " OR r.id >= coalesce((SELECT CAST(value AS INTEGER) FROM meta"
            " WHERE key = 'refs_resolved_below'), r.id + 1)"
        )
        if pending:
            raise IndexNotSettledError(f"{pending:,} references are not resolved yet")
        if self._meta("scores_dirty") == "1":
            raise IndexNotSettledError("the graph scores are not computed yet")
        self.check_words()

    def check_words(self) -> None:
        """Raise unless this smartctx made the search words: since version 2 they hold no secrets
        (rows.py), and a file keeps the words it was indexed with until it changes, so an index of
        older words must never be copied out."""
        if self._meta(SEARCH_WORDS_KEY) != search_words_stamp():
            raise IndexNotSettledError("its search words were made by another smartctx version")

    def counts(self) -> dict[str, int]:
        """Rows per table, by table name."""
        tables = ("files", "nodes", "edges", "refs", "folded", "scores")
        return {table: self._count(f"SELECT count(*) FROM {table}") for table in tables}

    def files(self) -> Iterator[FileRecord]:
        for row in self._db.execute(
            "SELECT id, path, language, size, content_hash, line_count, has_errors FROM files ORDER BY id"
        ):
            file_id, path, language, size, content_hash, line_count, has_errors = row
            yield FileRecord(file_id, path, language, size, content_hash, line_count, bool(has_errors))

    def nodes(self) -> Iterator[NodeRecord]:
        for row in self._db.execute(
            "SELECT id, file_id, parent_id, kind, name, qualified_name, start_line, end_line, signature,"
            " doc, content_hash FROM nodes ORDER BY id"
        ):
            yield NodeRecord(*row)

    def scores(self) -> Iterator[ScoreRecord]:
        for row in self._db.execute("SELECT node_id, pagerank, usage FROM scores ORDER BY node_id"):
            yield ScoreRecord(*row)

    def edges(self) -> Iterator[EdgeRecord]:
        for row in self._db.execute(
            "SELECT src_id, dst_id, kind, confidence, ref_id FROM edges ORDER BY src_id, dst_id, kind, ref_id"
        ):
            yield EdgeRecord(*row)

    def refs(self) -> Iterator[RefRecord]:
        for row in self._db.execute(
            "SELECT id, file_id, source_id, kind, name, key, line FROM refs ORDER BY id"
        ):
            yield RefRecord(*row)

    def folded(self) -> Iterator[FoldedRecord]:
        for row in self._db.execute(
            "SELECT file_id, holder_id, name, line FROM folded ORDER BY file_id, line, name"
        ):
            yield FoldedRecord(*row)

    def search_words(self) -> Iterator[SearchWordsRecord]:
        for file_id, node_ids, path_words, nodes in stored_rows(self._db):
            yield SearchWordsRecord(file_id, tuple(node_ids), path_words, tuple(nodes))

    def _count(self, sql: str) -> int:
        return int(self._db.execute(sql).fetchone()[0])

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])
