"""Writing a batch of file changes: one transaction, and only the difference from what is stored.

A file indexed again keeps the ids of its definitions that are still there, so edges from other
files into them stay valid; the names that appeared or disappeared become dirty (``dirty_names``),
and the references still to resolve are marked (``files.refs_pending``, ``REFS_RESOLVED_BELOW_KEY``)
in the same transaction, for the resolution pass (resolution_pass.py) to finish, however much later.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from smartctx.core.model import RefKind
from smartctx.store import lexical
from smartctx.store.database import SEARCH_GENERATION_KEY
from smartctx.store.rows import FileRows

CONTAINS_CONFIDENCE = 1.0
# search_words.node_ids holds int64s; paths per IN (…) list stay under SQLite's 999 parameters.
_NODE_ID_BYTES = 8
_PATHS_PER_QUERY = 500

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

    def finish(self) -> None:
        """Record what the batch left to do (dirty names, stale scores, a new lexical generation);
        the last step inside its transaction."""
        self._db.executemany(
            "INSERT OR IGNORE INTO dirty_names(name) VALUES (?)", [(name,) for name in sorted(self._dirty)]
        )
        if self._dirty or self._edges_dropped:
            self._db.execute("UPDATE meta SET value = '1' WHERE key = 'scores_dirty'")
        if self.lexical:
            self._db.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?", (SEARCH_GENERATION_KEY,)
            )
