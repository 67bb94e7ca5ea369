"""The only code that changes the index.

A batch of file changes is one transaction. Name resolution and graph scores are separate,
idempotent steps whose pending work is itself stored (``files.refs_pending``, ``dirty_names``,
``meta.scores_dirty``), so a process killed at any instant leaves an index that the next run finishes
into exactly what a fresh full index would be.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path

import numpy as np

from smartctx.core.files import FileState
from smartctx.core.model import RefKind, SymbolKind
from smartctx.store import lexical, scores
from smartctx.store.database import BUSY_TIMEOUT_MS, SEARCH_GENERATION_KEY
from smartctx.store.resolution import (
    Candidate,
    CandidatePool,
    NameUse,
    Target,
    import_matches,
    import_scope,
    resolve_name,
    targets_outside,
)
from smartctx.store.rows import FileRows

CONTAINS_CONFIDENCE = 1.0
# SQLite keeps the pages of deleted rows as free pages inside the file; the file is rewritten
# without them once they are both this share of it and this many bytes, so a big deletion gives
# the disk back (a deleted 1 MB file of nested functions once left 1.88 GB behind) while ordinary
# churn, which reuses free pages, never pays for a rewrite.
VACUUM_MIN_FREE_FRACTION = 0.25
VACUUM_MIN_FREE_BYTES = 4 * 1024 * 1024
# A write-ahead log at least this large is emptied at the end of a reconcile: below it, a log that
# later one-file updates fill again anyway is not worth a checkpoint that waits for the disk.
LOG_TRUNCATE_MIN_BYTES = 256 * 1024
# A resolution reads the paths of up to this many files one by one, and of more all at once: a save
# needs one or two of babel's 12,474 paths, whose whole table took a quarter of its resolution.
PATHS_READ_ONE_BY_ONE = 200

# Enum lookups by value through a dict: calling the Enum class costs several times more, and
# resolution converts every pending reference.
_REF_KINDS = {kind.value: kind for kind in RefKind}
# search_words.node_ids holds int64s; paths per IN (…) list stay under SQLite's 999 parameters.
_NODE_ID_BYTES = 8
_PATHS_PER_QUERY = 500
_SYMBOL_KINDS = {kind.value: kind for kind in SymbolKind}


@dataclass(frozen=True)
class ResolutionReport:
    references: int
    edges: int


# A node row as stored: (id, file id, parent id, kind, name, qualified name, start line, end line,
# signature, doc, content hash).
StoredNode = tuple[int, int, int | None, str, str, str, int, int, str, str, str]
# A reference row as stored: (id, source id, kind, name, key, line); and one to store, without its id.
StoredRef = tuple[int, int, str, str, str, int]
NewRef = tuple[int, str, str, str, int]

# References with ids from this meta value on were added to files kept as a difference since the
# last resolution, and are resolved by the next one with the references of files marked
# ``refs_pending`` and those of dirty names. It is set by the first such reference and removed by
# the resolution, so a first index (every file pending) never reads it; while it is set, new
# references get ids from it on (never an id freed below it), so none is missed.
REFS_RESOLVED_BELOW_KEY = "refs_resolved_below"


def _imports(refs: Iterable[StoredRef | NewRef]) -> Counter[tuple[int, str, str]]:
    """A file's imports as (source id, name, key), counted."""
    kind = RefKind.IMPORT.value
    return Counter((ref[-5], ref[-3], ref[-2]) for ref in refs if ref[-4] == kind)


def _refs_difference(
    old: list[StoredRef], new: list[NewRef]
) -> tuple[list[tuple[int, int]], list[int], list[NewRef]]:
    """Old and new references of one file matched by (source, kind, name, key), in line order:
    the (new line, id) of those kept whose line moved, the ids of those gone, and those added."""
    by_use: dict[tuple[int, str, str, str], list[StoredRef]] = defaultdict(list)
    for stored in sorted(old, key=itemgetter(5, 0)):
        by_use[stored[1:5]].append(stored)
    moved: list[tuple[int, int]] = []
    added: list[NewRef] = []
    for ref in sorted(new, key=itemgetter(4)):
        matches = by_use.get(ref[:4])
        if matches:
            kept = matches.pop(0)
            if kept[5] != ref[4]:
                moved.append((ref[4], kept[0]))
        else:
            added.append(ref)
    removed = [stored[0] for matches in by_use.values() for stored in matches]
    return moved, removed, added


@dataclass
class _Previous:
    """What the index holds for a file about to be indexed again, to write only the difference.

    ``search_words`` is its stored row of that table (node ids, packed words), None when it already
    left (a batch whose parsers run in worker processes drops it up front).
    """

    # By identity: (kind, qualified name, occurrence).
    nodes: dict[tuple[str, str, int], StoredNode]
    search_words: tuple[bytes, bytes] | None
    # (parent id, child id) of the file's containment edges.
    contains: set[tuple[int, int]]
    refs: list[StoredRef]

    @staticmethod
    def empty() -> _Previous:
        return _Previous({}, None, set(), [])


def _uses(
    rows: list[tuple[int, str, str, str, int, int]],
    paths: dict[int, str],
    candidates: dict[str, list[Candidate]],
) -> list[tuple[NameUse, list[tuple[int, int]]]]:
    """Reference rows (file, kind, name, key, id, source), sorted by their first three, as distinct
    name uses with their (reference, source) pairs. A reference whose key no definition carries
    cannot resolve: it is not even looked at."""
    return [
        (NameUse(file_id, paths[file_id], _REF_KINDS[kind], name, key), [(row[4], row[5]) for row in group])
        for (file_id, kind, name, key), group in groupby(rows, key=itemgetter(0, 1, 2, 3))
        if key in candidates
    ]


class Batch:
    """File changes inside one open transaction; see :meth:`IndexWriter.batch`.

    Re-indexing a file keeps the ids of the definitions that are still there (same kind and
    qualified name), so edges from other files into them stay valid and only names that appeared or
    disappeared become dirty. A save that adds one function then re-resolves that file's own
    references and the few references elsewhere that carry the new name, not every use of ``get``.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        # What the lexical index is to receive once this batch has committed.
        self.lexical = lexical.LexicalChanges()
        self._dirty: set[str] = set()
        # Set when a re-indexed file had resolved outgoing edges: they are gone until its references
        # resolve again, and if it now has none, nothing else would mark the scores stale.
        self._edges_dropped = False

    def put_files(self, files: Sequence[FileRows]) -> None:
        """Insert or replace everything the index holds for these files.

        Ids are assigned here rather than by SQLite so that every table is filled with one
        ``executemany``; this connection is the only writer and holds the write lock, so no other
        insert can take an id in between.

        A file already in the index is rewritten as a difference: a definition kept (same identity)
        whose row is unchanged is not written and its containment edge stays, so a save that adds
        one function to a 2,700-line file writes that function's rows, not 1,800, and the commit
        writes that many fewer pages. Its references are a difference too while its imports stay as
        they were (every other reference resolves through them): the ones kept keep their edges, and
        only those added are resolved (``REFS_RESOLVED_BELOW_KEY``). The lexical index removes
        documents by file (store/lexical.py), so a file whose search words changed at all gets all
        its documents again; one whose words and definition ids are unchanged keeps them.
        """
        db = self._db
        next_file_id = self._next_id("files")
        next_node_id = self._next_id("nodes")
        mark = self._meta_int(REFS_RESOLVED_BELOW_KEY)
        next_ref_id = self._next_id("refs") if mark is None else max(self._next_id("refs"), mark)
        file_rows: list[tuple[object, ...]] = []
        node_rows: list[tuple[object, ...]] = []
        node_updates: list[tuple[object, ...]] = []
        gone_ids: list[tuple[int]] = []
        edge_rows: list[tuple[int, int, str, float, None]] = []
        stale_contains: list[tuple[int, int]] = []
        search_words_rows: list[tuple[int, bytes, bytes]] = []
        ref_rows: list[tuple[object, ...]] = []
        ref_lines: list[tuple[int, int]] = []
        refs_gone: list[tuple[int]] = []
        folded_rows: list[tuple[int, int, str, int]] = []
        folded_gone: list[tuple[int]] = []
        contains = RefKind.CONTAINS.value
        for rows in files:
            entry = rows.entry
            existing = db.execute(
                "SELECT id, refs_pending FROM files WHERE path = ?", (entry.path,)
            ).fetchone()
            previous = _Previous.empty()
            if existing is None:
                file_id = next_file_id
                next_file_id += 1
            else:
                file_id = existing[0]
                previous = self._previous_state(file_id)
            ids_by_name: dict[str, int] = {}
            node_ids = array("q")
            seen: Counter[tuple[str, str]] = Counter()
            module_id = 0
            for kind, name, qualified, start, end, signature, doc, digest, parent, *_ in rows.nodes:
                identity = (kind, qualified, seen[(kind, qualified)])
                seen[(kind, qualified)] += 1
                kept = previous.nodes.pop(identity, None)
                if kept is None:
                    node_id = next_node_id
                    next_node_id += 1
                    self._dirty.add(name)
                else:
                    node_id = kept[0]
                parent_id: int | None = None
                if module_id == 0:
                    module_id = node_id
                else:
                    parent_id = ids_by_name.get(parent, module_id) if parent else module_id
                    ids_by_name.setdefault(qualified, node_id)
                    if (parent_id, node_id) in previous.contains:
                        previous.contains.discard((parent_id, node_id))
                    else:
                        edge_rows.append((parent_id, node_id, contains, CONTAINS_CONFIDENCE, None))
                row = (node_id, file_id, parent_id, kind, name, qualified, start, end, signature, doc, digest)
                if kept is None:
                    node_rows.append(row)
                else:
                    if kept[2] != parent_id:
                        self._dirty.add(name)
                    if kept != row:
                        node_updates.append((*row[1:], node_id))
                node_ids.append(node_id)
            gone = list(previous.nodes.values())
            self._forget_nodes([(row[0], row[2], row[4]) for row in gone])
            gone_ids.extend((row[0],) for row in gone)
            stale_contains.extend(previous.contains)
            search_words = (node_ids.tobytes(), rows.packed_words)
            if search_words != previous.search_words:
                self._replace_lexical(file_id, previous.search_words, node_ids, rows)
                search_words_rows.append((file_id, *search_words))
            refs = [
                (ids_by_name.get(source, module_id) if source else module_id, kind, name, key, line)
                for source, kind, name, key, line in rows.refs
            ]
            if existing is not None:
                folded_gone.append((file_id,))
            folded_rows.extend(
                (file_id, ids_by_name.get(holder, module_id) if holder else module_id, name, line)
                for name, line, holder in rows.folded
            )
            # A file whose references were still to resolve (an interrupted batch) resolves them all.
            if existing is not None and not existing[1] and _imports(previous.refs) == _imports(refs):
                kept_lines, removed, refs = _refs_difference(previous.refs, refs)
                ref_lines.extend(kept_lines)
                refs_gone.extend((ref_id,) for ref_id in removed)
                refs_pending = 0
                if refs and mark is None:
                    mark = next_ref_id
                    db.execute(
                        "INSERT INTO meta(key, value) VALUES (?, ?)", (REFS_RESOLVED_BELOW_KEY, str(mark))
                    )
            else:
                if existing is not None:
                    self._clear_references(file_id)
                refs_pending = 1
            file_rows.append(
                (
                    file_id,
                    entry.path,
                    entry.language,
                    entry.size,
                    entry.mtime_ns,
                    entry.content_hash,
                    entry.line_count,
                    int(entry.has_errors),
                    refs_pending,
                )
            )
            for ref in refs:
                ref_rows.append((next_ref_id, file_id, *ref))
                next_ref_id += 1
        db.executemany("DELETE FROM edges WHERE src_id = ? AND dst_id = ? AND ref_id IS NULL", stale_contains)
        dropped = db.executemany("DELETE FROM edges WHERE ref_id = ?", refs_gone)
        self._edges_dropped = self._edges_dropped or dropped.rowcount > 0
        db.executemany("DELETE FROM refs WHERE id = ?", refs_gone)
        db.executemany("UPDATE refs SET line = ? WHERE id = ?", ref_lines)
        db.executemany("DELETE FROM nodes WHERE id = ?", gone_ids)
        db.executemany(
            "INSERT OR REPLACE INTO files(id, path, language, size, mtime_ns, content_hash, line_count,"
            " has_errors, refs_pending) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            file_rows,
        )
        db.executemany(
            "INSERT INTO nodes(id, file_id, parent_id, kind, name, qualified_name, start_line, end_line,"
            " signature, doc, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            node_rows,
        )
        db.executemany(
            "UPDATE nodes SET file_id = ?, parent_id = ?, kind = ?, name = ?, qualified_name = ?,"
            " start_line = ?, end_line = ?, signature = ?, doc = ?, content_hash = ? WHERE id = ?",
            node_updates,
        )
        db.executemany(
            "INSERT INTO edges(src_id, dst_id, kind, confidence, ref_id) VALUES (?, ?, ?, ?, ?)", edge_rows
        )
        db.executemany(
            "INSERT OR REPLACE INTO search_words(file_id, node_ids, words) VALUES (?, ?, ?)",
            search_words_rows,
        )
        db.executemany(
            "INSERT INTO refs(id, file_id, source_id, kind, name, key, line) VALUES (?, ?, ?, ?, ?, ?, ?)",
            ref_rows,
        )
        db.executemany("DELETE FROM folded WHERE file_id = ?", folded_gone)
        db.executemany("INSERT INTO folded(file_id, holder_id, name, line) VALUES (?, ?, ?, ?)", folded_rows)

    def _previous_state(self, file_id: int) -> _Previous:
        db = self._db
        nodes: dict[tuple[str, str, int], StoredNode] = {}
        seen: Counter[tuple[str, str]] = Counter()
        for row in db.execute(
            "SELECT id, file_id, parent_id, kind, name, qualified_name, start_line, end_line, signature,"
            " doc, content_hash FROM nodes WHERE file_id = ? ORDER BY id",
            (file_id,),
        ):
            nodes[(row[3], row[5], seen[(row[3], row[5])])] = row
            seen[(row[3], row[5])] += 1
        contains: set[tuple[int, int]] = set(
            db.execute(
                "SELECT e.src_id, e.dst_id FROM nodes n CROSS JOIN edges e ON e.src_id = n.id"
                " WHERE n.file_id = ? AND e.ref_id IS NULL",
                (file_id,),
            )
        )
        search_words: tuple[bytes, bytes] | None = db.execute(
            "SELECT node_ids, words FROM search_words WHERE file_id = ?", (file_id,)
        ).fetchone()
        refs: list[StoredRef] = db.execute(
            "SELECT id, source_id, kind, name, key, line FROM refs WHERE file_id = ?", (file_id,)
        ).fetchall()
        return _Previous(nodes, search_words, contains, refs)

    def _replace_lexical(
        self, file_id: int, stored: tuple[bytes, bytes] | None, node_ids: array[int], rows: FileRows
    ) -> None:
        """Queue a file's lexical documents, in place of those it has (``stored`` is its
        search_words row). Tantivy deletes by file only (the ``file`` term), so every definition of
        the file is added again, not only those whose words changed."""
        if stored is not None:
            self.lexical.removed_files.add(file_id)
            self.lexical.removed_rows += len(stored[0]) // _NODE_ID_BYTES
        self.lexical.symbols.extend(
            (node_id, file_id, lexical.symbol_text(node[9:], rows.path_words))
            for node_id, node in zip(node_ids, rows.nodes, strict=True)
        )
        self.lexical.files.append(
            (file_id, lexical.file_text([node[9:14] for node in rows.nodes], rows.path_words))
        )

    def _clear_references(self, file_id: int) -> None:
        """Remove a file's references and the edges resolved from them; they are written again and
        resolve again with the file (``refs_pending``)."""
        db = self._db
        dropped = db.execute(
            "DELETE FROM edges WHERE ref_id IS NOT NULL"
            " AND src_id IN (SELECT id FROM nodes WHERE file_id = ?)",
            (file_id,),
        )
        self._edges_dropped = self._edges_dropped or dropped.rowcount > 0
        db.execute("DELETE FROM refs WHERE file_id = ?", (file_id,))

    def delete_file(self, path: str) -> None:
        """Remove a file and everything derived from it; names it defined become dirty."""
        row = self._db.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        if row is not None:
            self._forget_nodes(self._previous_nodes(row[0]).values())
            self._clear_file(row[0])

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Record new stat data for a file whose content is unchanged."""
        self._db.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def _previous_nodes(self, file_id: int) -> dict[tuple[str, str, int], tuple[int, int | None, str]]:
        """A file's nodes by identity (kind, qualified name, occurrence) -> (id, parent id, name)."""
        found: dict[tuple[str, str, int], tuple[int, int | None, str]] = {}
        seen: Counter[tuple[str, str]] = Counter()
        for node_id, kind, qualified, parent_id, name in self._db.execute(
            "SELECT id, kind, qualified_name, parent_id, name FROM nodes WHERE file_id = ? ORDER BY id",
            (file_id,),
        ):
            found[(kind, qualified, seen[(kind, qualified)])] = (node_id, parent_id, name)
            seen[(kind, qualified)] += 1
        return found

    def _clear_file(self, file_id: int) -> None:
        """Remove a file's rows and its outgoing edges; incoming edges stay with the ids kept."""
        db = self._db
        self._delete_search_rows((file_id,))
        dropped = db.execute(
            "DELETE FROM edges WHERE ref_id IS NOT NULL"
            " AND src_id IN (SELECT id FROM nodes WHERE file_id = ?)",
            (file_id,),
        )
        self._edges_dropped = self._edges_dropped or dropped.rowcount > 0
        db.execute("DELETE FROM edges WHERE src_id IN (SELECT id FROM nodes WHERE file_id = ?)", (file_id,))
        db.execute("DELETE FROM refs WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM folded WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM nodes WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def drop_search_rows(self, paths: Iterable[str]) -> None:
        """Take these files' rows out of the lexical index now, ahead of re-indexing or deleting them
        (paths not in the index are passed over)."""
        wanted = sorted(set(paths))
        for start in range(0, len(wanted), _PATHS_PER_QUERY):
            chunk = wanted[start : start + _PATHS_PER_QUERY]
            self._delete_search_rows(
                file_id
                for (file_id,) in self._db.execute(
                    f"SELECT id FROM files WHERE path IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
            )

    def _delete_search_rows(self, file_ids: Iterable[int]) -> None:
        """Take files' rows out of search_words, and out of the lexical index once this batch commits."""
        db = self._db
        for file_id in file_ids:
            row = db.execute(
                "SELECT length(node_ids) FROM search_words WHERE file_id = ?", (file_id,)
            ).fetchone()
            if row is None:
                continue
            self.lexical.removed_files.add(file_id)
            self.lexical.removed_rows += row[0] // _NODE_ID_BYTES
            db.execute("DELETE FROM search_words WHERE file_id = ?", (file_id,))

    def _forget_nodes(self, gone: Iterable[tuple[int, int | None, str]]) -> None:
        """Drop what points at definitions that no longer exist; their names become dirty."""
        gone_ids = [(node_id,) for node_id, _, _ in gone]
        self._dirty.update(name for _, _, name in gone)
        self._db.executemany("DELETE FROM edges WHERE dst_id = ?", gone_ids)
        self._db.executemany("DELETE FROM scores WHERE node_id = ?", gone_ids)

    def _next_id(self, table: str) -> int:
        return int(self._db.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}").fetchone()[0])

    def _meta_int(self, key: str) -> int | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    def _finish(self) -> None:
        self._db.executemany(
            "INSERT OR IGNORE INTO dirty_names(name) VALUES (?)", [(name,) for name in sorted(self._dirty)]
        )
        if self._dirty or self._edges_dropped:
            self._db.execute("UPDATE meta SET value = '1' WHERE key = 'scores_dirty'")
        if self.lexical:
            self._db.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?", (SEARCH_GENERATION_KEY,)
            )


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
            batch._finish()
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        if batch.lexical:
            self._update_lexical(batch.lexical)

    def _search_generation(self) -> int:
        return int(self.meta(SEARCH_GENERATION_KEY) or 0)

    def _update_lexical(self, changes: lexical.LexicalChanges) -> None:
        """Bring the lexical index to the generation just committed: in place when it holds the one
        before and the change is worth applying in place, else built again from search_words."""
        generation = self._search_generation()
        index = lexical.open_or_create(self._index_path)
        state = index.state()
        if state.generation == generation - 1 and not state.needs_rebuild(changes):
            index.apply(changes, generation)
        else:
            self.rebuild_lexical()

    def rebuild_lexical(self) -> None:
        """Build the lexical index again from search_words, at the generation they are at."""
        lexical.build(self._db, self._index_path, SEARCH_GENERATION_KEY)

    def check_lexical(self) -> bool:
        """Build the lexical index again if it does not hold SQLite's generation (a process killed
        between the two commits, a missing or unreadable folder); whether it had to."""
        state = lexical.open_or_create(self._index_path).state()
        if state.generation == self._search_generation():
            return False
        self.rebuild_lexical()
        return True

    def scores_dirty(self) -> bool:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'scores_dirty'").fetchone()
        return row is not None and row[0] == "1"

    def resolve_pending(self) -> ResolutionReport:
        """Recompute the edges of every reference that is new or whose key's definitions changed."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            report = self._resolve_pending()
            self._db.execute("DELETE FROM dirty_names")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return report

    def _resolve_pending(self) -> ResolutionReport:
        # The temporary tables are small and the index tables large; CROSS JOIN makes SQLite loop
        # over the small side first, which its planner does not know to do without statistics.
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS todo(ref_id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM todo")
        db.execute(
            "INSERT INTO todo SELECT r.id FROM files f CROSS JOIN refs r ON r.file_id = f.id"
            " WHERE f.refs_pending = 1"
            " UNION SELECT id FROM refs WHERE key IN (SELECT name FROM dirty_names)"
        )
        mark = db.execute("SELECT value FROM meta WHERE key = ?", (REFS_RESOLVED_BELOW_KEY,)).fetchone()
        if mark is not None:
            db.execute("INSERT OR IGNORE INTO todo SELECT id FROM refs WHERE id >= ?", (int(mark[0]),))
        # One row per reference, grouped so that each distinct name use in a file is resolved once.
        pending = db.execute(
            "SELECT r.file_id, r.kind, r.name, r.key, r.id, r.source_id FROM todo t"
            " CROSS JOIN refs r ON r.id = t.ref_id"
        ).fetchall()
        imports_before = self._import_edges_to_redo()
        db.execute("DELETE FROM edges WHERE ref_id IN (SELECT ref_id FROM todo)")
        paths = self._paths_of({row[0] for row in pending})
        candidates = self._candidates({row[3] for row in pending})
        import_kind = RefKind.IMPORT.value
        edges = self._resolve_imports([row for row in pending if row[1] == import_kind], paths, candidates)
        db.executemany(
            "INSERT INTO edges(src_id, dst_id, kind, confidence, ref_id) VALUES (?, ?, ?, ?, ?)", edges
        )
        resolved = len(edges)
        # The other references of a file resolve through what its imports point at, so a file whose
        # imports now point elsewhere has them all resolved again, although neither they nor their
        # names changed.
        imports_after: dict[int, set[tuple[int, int]]] = defaultdict(set)
        files_of_refs = {row[4]: row[0] for row in pending if row[1] == import_kind}
        for _, dst_id, _, _, ref_id in edges:
            imports_after[files_of_refs[ref_id]].add((ref_id, dst_id))
        redirected = {
            file_id
            for file_id in imports_before.keys() | imports_after.keys()
            if imports_before.get(file_id, set()) != imports_after.get(file_id, set())
        }
        added = self._add_references_of(redirected, candidates)
        paths.update(self._paths_of({row[0] for row in added} - paths.keys()))
        names = [row for row in pending if row[1] != import_kind] + added
        names.sort(key=itemgetter(0, 1, 2, 4))
        edges = self._resolve_names(names, paths, candidates)
        db.executemany(
            "INSERT INTO edges(src_id, dst_id, kind, confidence, ref_id) VALUES (?, ?, ?, ?, ?)", edges
        )
        db.execute("UPDATE files SET refs_pending = 0 WHERE refs_pending = 1")
        db.execute("DELETE FROM meta WHERE key = ?", (REFS_RESOLVED_BELOW_KEY,))
        if pending:
            db.execute("UPDATE meta SET value = '1' WHERE key = 'scores_dirty'")
        return ResolutionReport(references=len(pending) + len(added), edges=resolved + len(edges))

    def _paths_of(self, file_ids: set[int]) -> dict[int, str]:
        """These files' paths by id; the whole table's when they are many (a first index)."""
        if len(file_ids) > PATHS_READ_ONE_BY_ONE:
            return dict(self._db.execute("SELECT id, path FROM files"))
        return {
            file_id: path
            for file_id in file_ids
            for (path,) in self._db.execute("SELECT path FROM files WHERE id = ?", (file_id,))
        }

    def _import_edges_to_redo(self) -> dict[int, set[tuple[int, int]]]:
        """Per file, the (reference, target) pairs of its imports that are about to be resolved again."""
        found: dict[int, set[tuple[int, int]]] = defaultdict(set)
        for file_id, ref_id, dst_id in self._db.execute(
            "SELECT r.file_id, r.id, e.dst_id FROM todo t CROSS JOIN refs r ON r.id = t.ref_id"
            " CROSS JOIN edges e ON e.ref_id = r.id WHERE r.kind = 'imports'"
        ):
            found[file_id].add((ref_id, dst_id))
        return found

    def _add_references_of(
        self, file_ids: set[int], candidates: dict[str, list[Candidate]]
    ) -> list[tuple[int, str, str, str, int, int]]:
        """Put the references of these files (other than imports) that are not yet to be resolved
        into ``todo``, drop their edges, and load their definitions into ``candidates``."""
        if not file_ids:
            return []
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS redirected(file_id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM redirected")
        db.executemany("INSERT INTO redirected(file_id) VALUES (?)", [(file_id,) for file_id in file_ids])
        added: list[tuple[int, str, str, str, int, int]] = db.execute(
            "SELECT r.file_id, r.kind, r.name, r.key, r.id, r.source_id FROM redirected d"
            " CROSS JOIN refs r ON r.file_id = d.file_id"
            " WHERE r.kind != 'imports' AND r.id NOT IN (SELECT ref_id FROM todo)"
        ).fetchall()
        db.executemany("INSERT INTO todo(ref_id) VALUES (?)", [(row[4],) for row in added])
        db.executemany("DELETE FROM edges WHERE ref_id = ?", [(row[4],) for row in added])
        candidates.update(self._candidates({row[3] for row in added} - candidates.keys()))
        return added

    def _resolve_imports(
        self,
        rows: list[tuple[int, str, str, str, int, int]],
        paths: dict[int, str],
        candidates: dict[str, list[Candidate]],
    ) -> list[tuple[int, int, str, float, int]]:
        """Edges for import references (file, kind, name, key, id, source rows)."""
        edges: list[tuple[int, int, str, float, int]] = []
        # An absolute import means the same in every file; resolve each one once.
        import_answers: dict[tuple[str, str], tuple[list[Candidate], float]] = {}
        for use, refs in _uses(sorted(rows, key=itemgetter(0, 1, 2, 4)), paths, candidates):
            question = (use.name, import_scope(use))
            matched = import_answers.get(question)
            if matched is None:
                matched = import_matches(*question, candidates.get(use.key, ()))
                import_answers[question] = matched
            targets = targets_outside(*matched, use.file_id)
            edges.extend(
                (source_id, t.node_id, use.kind.value, t.confidence, ref_id)
                for ref_id, source_id in refs
                for t in targets
            )
        return edges

    def _resolve_names(
        self,
        rows: list[tuple[int, str, str, str, int, int]],
        paths: dict[int, str],
        candidates: dict[str, list[Candidate]],
    ) -> list[tuple[int, int, str, float, int]]:
        """Edges for calls, references and base classes, once their files' import edges are in."""
        uses = _uses(rows, paths, candidates)
        imported_targets, imported_files = self._imports_of({use.file_id for use, _ in uses})
        pools = {key: CandidatePool(found) for key, found in candidates.items()}
        empty = CandidatePool(())
        source_names = self._source_names()
        edges: list[tuple[int, int, str, float, int]] = []
        for use, refs in uses:
            resolution = resolve_name(
                use,
                pools.get(use.key, empty),
                imported_targets.get(use.file_id, {}),
                imported_files.get(use.file_id, ()),
            )
            by_source: dict[int, list[Target]] = {}
            for ref_id, source_id in refs:
                answer = by_source.get(source_id)
                if answer is None:
                    answer = resolution.for_source(source_names[source_id])
                    by_source[source_id] = answer
                edges.extend(
                    (source_id, t.node_id, use.kind.value, t.confidence, ref_id)
                    for t in answer
                    if t.node_id != source_id
                )
        return edges

    def _source_names(self) -> dict[int, str]:
        """Qualified names of the definitions that the references to resolve sit in."""
        return dict(
            self._db.execute(
                "SELECT DISTINCT n.id, n.qualified_name FROM todo t CROSS JOIN refs r ON r.id = t.ref_id"
                " CROSS JOIN nodes n ON n.id = r.source_id"
            )
        )

    def _candidates(self, keys: set[str]) -> dict[str, list[Candidate]]:
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted(name TEXT PRIMARY KEY)")
        db.execute("DELETE FROM wanted")
        db.executemany("INSERT INTO wanted(name) VALUES (?)", [(key,) for key in keys])
        by_key: dict[str, list[Candidate]] = defaultdict(list)
        for node_id, file_id, kind, name, qualified_name, parent_id, path in db.execute(
            "SELECT n.id, n.file_id, n.kind, n.name, n.qualified_name, n.parent_id, f.path"
            " FROM wanted w CROSS JOIN nodes n ON n.name = w.name CROSS JOIN files f ON f.id = n.file_id"
        ):
            by_key[name].append(
                Candidate(node_id, file_id, SymbolKind(kind), qualified_name, parent_id, path)
            )
        return by_key

    def _imports_of(self, file_ids: set[int]) -> tuple[dict[int, dict[str, list[int]]], dict[int, set[int]]]:
        """Per file: what each import key resolved to, and the files those imports point into."""
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS importers(file_id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM importers")
        db.executemany("INSERT INTO importers(file_id) VALUES (?)", [(file_id,) for file_id in file_ids])
        targets: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        files: dict[int, set[int]] = defaultdict(set)
        for file_id, key, dst_id, dst_file in db.execute(
            "SELECT r.file_id, r.key, e.dst_id, n.file_id FROM importers i"
            " CROSS JOIN refs r ON r.file_id = i.file_id AND r.kind = 'imports'"
            " CROSS JOIN edges e ON e.ref_id = r.id CROSS JOIN nodes n ON n.id = e.dst_id"
        ):
            targets[file_id][key].append(dst_id)
            files[file_id].add(dst_file)
        return targets, files

    def recompute_scores(self) -> int:
        """PageRank and usage for every node, replacing the previous scores in one transaction."""
        db = self._db
        node_ids = np.fromiter(
            (node_id for (node_id,) in db.execute("SELECT id FROM nodes ORDER BY id")), np.int64
        )
        position = {int(node_id): index for index, node_id in enumerate(node_ids)}
        rows = db.execute("SELECT src_id, dst_id, kind, confidence FROM edges").fetchall()
        sources = np.fromiter((position[row[0]] for row in rows), np.int64, len(rows))
        targets = np.fromiter((position[row[1]] for row in rows), np.int64, len(rows))
        rank_weights = np.fromiter(
            (scores.PAGERANK_EDGE_WEIGHTS[row[2]] * row[3] for row in rows), np.float64, len(rows)
        )
        use_weights = np.fromiter(
            (scores.USAGE_EDGE_WEIGHTS.get(row[2], 0.0) * row[3] for row in rows), np.float64, len(rows)
        )
        contains = np.fromiter((row[2] == RefKind.CONTAINS.value for row in rows), bool, len(rows))
        # Containment also passes rank upwards, so a module is as important as what it holds.
        ranks = scores.pagerank(
            len(node_ids),
            np.concatenate([sources, targets[contains]]),
            np.concatenate([targets, sources[contains]]),
            np.concatenate([rank_weights, rank_weights[contains]]),
        )
        uses = scores.usage(len(node_ids), targets, use_weights)
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

    def compact_search(self) -> None:
        """Build the lexical index again if its statistics still count deleted rows, so that it
        answers exactly as a fresh index would (store/lexical.py)."""
        state = lexical.open_or_create(self._index_path).state()
        if state.deleted_rows or state.deleted_files:
            self.rebuild_lexical()

    def reclaim_space(self) -> bool:
        """Rewrite the file without its free pages if they pass the thresholds; whether it did.

        VACUUM costs time in the size of what is kept, so callers run it off the request path; in
        WAL mode the file shrinks at the checkpoint that follows, which readers may postpone.
        """
        db = self._db
        (page_size,) = db.execute("PRAGMA page_size").fetchone()
        (page_count,) = db.execute("PRAGMA page_count").fetchone()
        (free_pages,) = db.execute("PRAGMA freelist_count").fetchone()
        if (
            free_pages * page_size < VACUUM_MIN_FREE_BYTES
            or free_pages < VACUUM_MIN_FREE_FRACTION * page_count
        ):
            return False
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True

    def truncate_log(self) -> bool:
        """Copy the write-ahead log into the index file and truncate it to nothing; whether it did.

        SQLite keeps a log it has checkpointed for reuse, up to ``WAL_SIZE_LIMIT_BYTES`` (4 MB, most
        of which a big batch fills): beside babel's 21 MB index that was 0.75x of its source on
        disk with nothing in it to read. A reader in the middle of a snapshot still needs the log;
        then this gives up at once (it runs on the index thread, which must not wait for queries)
        and the log is reused as before.
        """
        log = self._index_path.with_name(self._index_path.name + "-wal")
        try:
            if log.stat().st_size < LOG_TRUNCATE_MIN_BYTES:
                return False
        except FileNotFoundError:
            return False
        db = self._db
        db.execute("PRAGMA busy_timeout=0")
        try:
            (busy, _, _) = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return int(busy) == 0

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, values: Sequence[tuple[str, str]]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values)
