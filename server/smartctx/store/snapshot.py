"""A read-only, consistent view of the index for queries.

Each snapshot is a read-only connection inside one read transaction: SQLite's WAL mode lets it see
the index exactly as it was when the snapshot began while a writer carries on (architecture.md,
*The index*). The connection is the snapshot's own, or one a :class:`SnapshotPool` lends it for its lifetime.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NamedTuple, cast

from smartctx.core.model import USE_EDGE_KINDS, SymbolKind
from smartctx.store import past_commits
from smartctx.store.database import SEARCH_GENERATION_KEY, connect
from smartctx.store.lexical import LexicalIndex, LexicalReader
from smartctx.store.past_commits import CommitPostings

_SEARCH_TERM = re.compile(r"[a-z0-9]+")
# A term in more than this share of rows is too common to rank with (0.5 to 2 % measured:
# architecture.md, *Measured on these machines*),
# unless it is in no more than MIN_COMMON_DOCUMENTS rows. The cut-off is for query time on large
# indexes; in a workspace of a few thousand definitions 2 % is a few dozen rows, and a word in 60 of
# 2,000 ("less" in bat's ``LessOpen``) still says which code is meant.
MAX_TERM_DOCUMENT_SHARE = 0.02
MIN_COMMON_DOCUMENTS = 200


class NodeRow(NamedTuple):
    """One definition with its file and scores. A tuple, not a dataclass: a request reads about a
    thousand, and a frozen dataclass's constructor costs several times a tuple's."""

    id: int
    path: str
    language: str
    kind: SymbolKind
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    signature: str
    doc: str
    content_hash: str
    parent_id: int | None
    pagerank: float
    usage: float


class EdgeRow(NamedTuple):
    """One edge of the graph; a tuple for the same reason as :class:`NodeRow`."""

    src_id: int
    dst_id: int
    kind: str
    confidence: float


class Neighbour(NamedTuple):
    """The node at the other end of an edge, with the edge's kind and confidence, and where the node
    is: its file's path (None when the node is gone) and whether it is the file's module node
    (SQLite's 0 or 1). A tuple: the focus walk reads hundreds per request."""

    node_id: int
    kind: str
    confidence: float
    path: str | None
    is_module: int


@dataclass(frozen=True, slots=True)
class Use:
    """One resolved call or reference to a definition: where it is, and the definition it sits in."""

    path: str
    line: int
    source_qualified_name: str


@dataclass(frozen=True, slots=True)
class Uses:
    """How a definition is used: every resolved call or reference, and the most important few."""

    count: int
    files: int
    top: tuple[Use, ...]


# An edge from its row by tuple.__new__ itself: a NamedTuple's ``_make`` is a Python function, one
# call per row of the thousand a request reads.
_new_edge = cast(Callable[[Iterable[Any]], EdgeRow], partial(tuple.__new__, EdgeRow))
# The order edges are listed in: by their ends, then kind (an edge's confidence is no part of it).
_EDGE_ORDER = itemgetter(0, 1, 2)


class SearchHit(NamedTuple):
    """A definition the lexical index matched; a tuple, as a request reads hundreds."""

    node_id: int
    bm25: float


@dataclass(frozen=True, slots=True)
class IndexStats:
    files: int
    nodes: int
    edges: int
    references: int
    unresolved_references: int
    files_by_language: dict[str, int]
    files_with_errors: int
    pending_references: int
    scores_dirty: bool
    # Definitions folded into an ancestor, nested too deep (or named too long) to be nodes.
    folded_definitions: int = 0


_NODE_COLUMNS = (
    "n.id, f.path, f.language, n.kind, n.name, n.qualified_name, n.start_line, n.end_line, n.signature,"
    " n.doc, n.content_hash, n.parent_id, coalesce(s.pagerank, 0), coalesce(s.usage, 0)"
)
_NODE_FROM = "nodes n JOIN files f ON f.id = n.file_id LEFT JOIN scores s ON s.node_id = n.id"


_SYMBOL_KINDS = {kind.value: kind for kind in SymbolKind}
# Ids per IN (…) list: SQLite allows 999 parameters per statement; fewer where a query names them twice.
_IDS_PER_QUERY = 500
_IDS_PER_DOUBLE_QUERY = 400


def _id_chunks(node_ids: Iterable[int], size: int = _IDS_PER_QUERY) -> Iterator[tuple[list[int], str]]:
    """The distinct ids in ascending order, ``size`` at a time, each with its ``?,?,…`` placeholders."""
    ids = sorted(set(node_ids))
    for start in range(0, len(ids), size):
        chunk = ids[start : start + size]
        yield chunk, ",".join("?" * len(chunk))


_NodeTuple = tuple[int, str, str, str, str, str, int, int, str, str, str, int | None, float, float]


def node_row(row: Any) -> NodeRow:
    """A row of ``_NODE_COLUMNS`` (or a store's columns of the same types, in the same order) as a
    NodeRow."""
    values: _NodeTuple = row
    node_id, path, language, kind, name, qualified, start, end, signature, doc, digest, parent, rank, use = (
        values
    )
    return NodeRow(
        node_id,
        path,
        language,
        _SYMBOL_KINDS[kind],
        name,
        qualified,
        start,
        end,
        signature,
        doc,
        digest,
        parent,
        rank,
        use,
    )


# Idle read connections a pool keeps for later snapshots: one for each query thread
# (live/workspace.py) and spares; a snapshot that finds none idle opens one.
KEPT_READ_CONNECTIONS = 4


@dataclass(frozen=True, slots=True)
class _FileIdentity:
    """Which file a path named when a connection was opened: an index moved aside and created again
    (database.py) is another file at the same path, whose generations start again at 0."""

    path: Path
    device: int
    inode: int


def _identity(index_path: Path) -> _FileIdentity | None:
    try:
        stat = index_path.stat()
    except OSError:
        return None
    return _FileIdentity(index_path, stat.st_dev, stat.st_ino)


class _GenerationValues:
    """Values every snapshot at one search generation shares, filled by the first that needs them.

    A batch that adds or removes a file or a definition changes search rows, and every such batch
    counts one more generation (batch.py, ``SEARCH_GENERATION_KEY``); so the set of indexed paths,
    the number of definitions and the file of each are the same in every snapshot at one
    generation. Nothing that can change without the generation (a definition's lines, scores,
    edges) belongs here.
    """

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.rows: int | None = None
        self.paths_by_name: dict[str, list[str]] | None = None
        self.paths_by_node: dict[int, str] = {}


@dataclass(frozen=True, slots=True)
class _Lease:
    connection: sqlite3.Connection
    file: _FileIdentity | None


class SnapshotPool:
    """Snapshots of one index file that reuse read-only connections, for a process that answers
    many queries; close it with the index.

    A snapshot still begins its own read transaction, so it sees the newest committed state and keeps
    seeing it while writers carry on. What a reused connection keeps from one transaction to the
    next is what it would otherwise build again per request: SQLite's page cache (checked against
    the write-ahead log at each transaction's start), its prepared statements, and the values of
    the latest search generation (:class:`_GenerationValues`). A connection serves one snapshot at a
    time, so snapshots may run on any threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._file: _FileIdentity | None = None
        self._values: _GenerationValues | None = None
        self._closed = False

    def snapshot(self, index_path: Path) -> IndexSnapshot:
        return IndexSnapshot(index_path, self)

    def lease(self, index_path: Path) -> _Lease:
        """An idle connection to the file at ``index_path`` now, or a new one. Connections to a file
        the path no longer names are closed, never reused."""
        file = _identity(index_path)
        with self._lock:
            stale: list[sqlite3.Connection] = []
            if file is None or file != self._file:
                stale, self._idle = self._idle, []
                self._file, self._values = file, None
            connection = self._idle.pop() if self._idle else None
        for old in stale:
            old.close()
        return _Lease(connection or connect(index_path, read_only=True), file)

    def give_back(self, lease: _Lease) -> None:
        """End the lease's read transaction and keep its connection for a later snapshot."""
        connection = lease.connection
        try:
            connection.rollback()
        except sqlite3.Error:
            connection.close()
            return
        with self._lock:
            keep = not self._closed and lease.file == self._file and len(self._idle) < KEPT_READ_CONNECTIONS
            if keep:
                self._idle.append(connection)
        if not keep:
            connection.close()

    def values_at(self, lease: _Lease, generation: int) -> _GenerationValues:
        """The shared values of ``generation`` for a snapshot of the lease's file; an older
        generation's snapshot (one that began before a batch) gets values of its own."""
        with self._lock:
            if lease.file is None or lease.file != self._file:
                return _GenerationValues(generation)
            if self._values is None or self._values.generation < generation:
                self._values = _GenerationValues(generation)
            if self._values.generation == generation:
                return self._values
        return _GenerationValues(generation)

    def close(self) -> None:
        """Close the idle connections; those lent out close when their snapshots do."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def chosen_terms(
    weighted_terms: Mapping[str, float],
    keep_common: bool,
    common_above: int,
    document_counts: Callable[[Iterable[str], int], dict[str, int]],
) -> dict[str, float]:
    """The plain lowercase words of ``weighted_terms`` to query with, each with its greatest weight:
    those some row holds, less those in more than ``common_above`` rows unless ``keep_common`` (or
    unless nothing else is left). Every store chooses its terms by this one rule, so that the same
    task searches for the same words in each."""
    weights: dict[str, float] = {}
    for word, weight in weighted_terms.items():
        for term in _SEARCH_TERM.findall(word.lower()):
            weights[term] = max(weights.get(term, 0), weight)
    counts = document_counts(weights, common_above + 1)
    present = {term: weight for term, weight in weights.items() if counts.get(term)}
    common = {term for term in present if counts[term] > common_above}
    chosen = {term: weight for term, weight in present.items() if keep_common or term not in common}
    return chosen or present


def paths_by_file_name(paths: Iterable[str]) -> dict[str, list[str]]:
    """The paths by their last part, for :func:`paths_with_suffix`."""
    found: dict[str, list[str]] = {}
    for path in paths:
        found.setdefault(path.rpartition("/")[2], []).append(path)
    return found


def paths_with_suffix(paths_by_name: Mapping[str, list[str]], suffix: str) -> list[str]:
    """The paths equal to ``suffix`` or ending with ``/suffix``, in the order they were listed."""
    tail = "/" + suffix
    return [
        path
        for path in paths_by_name.get(suffix.rpartition("/")[2], [])
        if path == suffix or path.endswith(tail)
    ]


def common_cutoff_for(row_count: int) -> int:
    """A term in more rows than this, of an index of ``row_count`` rows, is too common to search for."""
    return max(MIN_COMMON_DOCUMENTS, int(MAX_TERM_DOCUMENT_SHARE * row_count))


class IndexSnapshot:
    """Read-only queries over one consistent state of the index. Close it (or use ``with``).

    With a ``pool``, the snapshot reads on a connection the pool lends it until it closes.
    """

    def __init__(self, index_path: Path, pool: SnapshotPool | None = None) -> None:
        self._index_path = index_path
        self._pool = pool
        self._lease = pool.lease(index_path) if pool is not None else None
        self._db = self._lease.connection if self._lease is not None else connect(index_path, read_only=True)
        self._queries: dict[tuple[tuple[str, float], ...], dict[str, float]] = {}
        self._counts: dict[tuple[str, int], int] = {}
        self._lexical: LexicalReader | None = None
        try:
            self._db.execute("BEGIN")
            # The first read fixes the snapshot; later writes by the indexer stay invisible to it.
            self._generation = int(self.meta(SEARCH_GENERATION_KEY) or 0)
        except BaseException:
            self.close()
            raise
        self._values = (
            pool.values_at(self._lease, self._generation)
            if pool is not None and self._lease is not None
            else _GenerationValues(self._generation)
        )

    def _lexical_reader(self) -> LexicalReader:
        """The lexical index at this snapshot's generation (store/lexical.py), opened on first use."""
        if self._lexical is None:
            self._lexical = LexicalIndex.for_index(self._index_path).reader(self._generation)
        return self._lexical

    def __enter__(self) -> IndexSnapshot:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection, or give it back to the pool (once, however often this is called)."""
        lease, self._lease = self._lease, None
        if self._pool is None:
            self._db.close()
        elif lease is not None:
            self._pool.give_back(lease)

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def past_commit_postings(self, words: Iterable[str]) -> CommitPostings:
        return past_commits.read_postings(self._db, words)

    def past_commit_paths(self, commit_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
        return past_commits.read_paths(self._db, commit_ids)

    def stats(self) -> IndexStats:
        db = self._db

        def count(sql: str) -> int:
            return int(db.execute(sql).fetchone()[0])

        return IndexStats(
            files=count("SELECT count(*) FROM files"),
            nodes=count("SELECT count(*) FROM nodes"),
            edges=count("SELECT count(*) FROM edges"),
            references=count("SELECT count(*) FROM refs"),
            unresolved_references=count(
                "SELECT count(*) FROM refs r WHERE NOT EXISTS (SELECT 1 FROM edges e WHERE e.ref_id = r.id)"
            ),
            files_by_language=dict(
                db.execute(
                    "SELECT language, count(*) FROM files GROUP BY language ORDER BY language"
                ).fetchall()
            ),
            files_with_errors=count("SELECT count(*) FROM files WHERE has_errors = 1"),
            # References of files marked pending, and those added since the last resolution
            # (batch.REFS_RESOLVED_BELOW_KEY).
            pending_references=count(
                "SELECT count(*) FROM files f JOIN refs r ON r.file_id = f.id WHERE f.refs_pending = 1"
                " OR r.id >= coalesce((SELECT CAST(value AS INTEGER) FROM meta"
                " WHERE key = 'refs_resolved_below'), r.id + 1)"
            ),
            scores_dirty=self.meta("scores_dirty") == "1",
            folded_definitions=count("SELECT count(*) FROM folded"),
        )

    def stats_files(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM files").fetchone()[0])

    def file_paths(self) -> list[str]:
        return [path for (path,) in self._db.execute("SELECT path FROM files ORDER BY path")]

    def nodes(self, node_ids: Iterable[int]) -> list[NodeRow]:
        rows: list[NodeRow] = []
        for chunk, marks in _id_chunks(node_ids):
            rows.extend(
                node_row(row)
                for row in self._db.execute(
                    f"SELECT {_NODE_COLUMNS} FROM {_NODE_FROM} WHERE n.id IN ({marks})", chunk
                )
            )
        return sorted(rows, key=lambda node: node.id)

    def nodes_in_file(self, path: str) -> list[NodeRow]:
        return [
            node_row(row)
            for row in self._db.execute(
                f"SELECT {_NODE_COLUMNS} FROM {_NODE_FROM} WHERE f.path = ? ORDER BY n.start_line, n.id",
                (path,),
            )
        ]

    def nodes_named(self, name: str) -> list[NodeRow]:
        return self.nodes_with_names([name]).get(name, [])

    def nodes_with_names(self, names: Iterable[str]) -> dict[str, list[NodeRow]]:
        """Definitions by exact name, for many names in one query."""
        wanted = sorted(set(names))
        found: dict[str, list[NodeRow]] = {}
        if not wanted:
            return found
        marks = ",".join("?" * len(wanted))
        for row in self._db.execute(
            f"SELECT {_NODE_COLUMNS} FROM {_NODE_FROM} WHERE n.name IN ({marks}) ORDER BY n.id", wanted
        ):
            node = node_row(row)
            found.setdefault(node.name, []).append(node)
        return found

    def definition_counts(self, names: Iterable[str]) -> dict[str, int]:
        """How many definitions other than module nodes bear each name (names with none left out):
        a name's rows are worth loading only when there are few (``get`` has hundreds)."""
        wanted = sorted(set(names))
        counts: dict[str, int] = {}
        for start in range(0, len(wanted), _IDS_PER_QUERY):
            chunk = wanted[start : start + _IDS_PER_QUERY]
            counts.update(
                self._db.execute(
                    f"SELECT name, count(*) FROM nodes WHERE name IN ({','.join('?' * len(chunk))})"
                    " AND kind != 'module' GROUP BY name",
                    chunk,
                )
            )
        return counts

    def nodes_named_within(self, name: str, qualified_suffix: str) -> list[NodeRow]:
        """Definitions named ``name`` whose qualified name ends with ``qualified_suffix`` (a dotted
        mention such as ``QuerySet.bulk_create``), by id."""
        return [
            node_row(row)
            for row in self._db.execute(
                f"SELECT {_NODE_COLUMNS} FROM {_NODE_FROM} WHERE n.name = ?"
                " AND substr(n.qualified_name, -length(?2)) = ?2 ORDER BY n.id",
                (name, qualified_suffix),
            )
        ]

    def module_ids(self, paths: Iterable[str]) -> dict[str, int]:
        """The module node of each indexed file among ``paths``."""
        found: dict[str, int] = {}
        wanted = sorted(set(paths))
        for start in range(0, len(wanted), _IDS_PER_QUERY):
            chunk = wanted[start : start + _IDS_PER_QUERY]
            found.update(
                self._db.execute(
                    "SELECT f.path, n.id FROM nodes n JOIN files f ON f.id = n.file_id"
                    f" WHERE n.kind = 'module' AND f.path IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return found

    def paths_of(self, node_ids: Iterable[int]) -> dict[int, str]:
        """The file path of each node, without loading the rest of the row. A node never changes
        file (a definition moved to another file is a new one), so the paths read are kept for
        the generation: most of a request's hits were some earlier request's."""
        known = self._values.paths_by_node
        paths: dict[int, str] = {}
        missing: list[int] = []
        for node_id in node_ids:
            path = known.get(node_id)
            if path is None:
                missing.append(node_id)
            else:
                paths[node_id] = path
        for chunk, marks in _id_chunks(missing):
            found = dict(
                self._db.execute(
                    "SELECT n.id, f.path FROM nodes n JOIN files f ON f.id = n.file_id"
                    f" WHERE n.id IN ({marks})",
                    chunk,
                )
            )
            paths.update(found)
            known.update(found)
        return paths

    def edges_touching(self, node_ids: Sequence[int]) -> list[EdgeRow]:
        """Edges into or out of any of ``node_ids``."""
        found: set[EdgeRow] = set()
        for chunk, marks in _id_chunks(node_ids, _IDS_PER_DOUBLE_QUERY):
            found.update(
                map(
                    _new_edge,
                    self._db.execute(
                        f"SELECT src_id, dst_id, kind, confidence FROM edges"
                        f" WHERE src_id IN ({marks}) UNION SELECT src_id, dst_id, kind, confidence FROM edges"
                        f" WHERE dst_id IN ({marks})",
                        chunk + chunk,
                    ),
                )
            )
        return sorted(found, key=_EDGE_ORDER)

    def neighbours(self, node_id: int, limit: int) -> list[Neighbour]:
        """The nodes at the other end of at most ``limit`` edges out of ``node_id`` (first) and
        ``limit`` into it, in index order (a hub's ten thousand callers are never all read), each
        with its place. Containment is followed up only, from a definition to what holds it: down,
        from a file, it would list every definition in it. The editor focus walk reads this for
        every node it pushes; with the places in the same query it needs no other."""
        return list(
            map(
                Neighbour._make,
                self._db.execute(
                    "SELECT e.dst_id, e.kind, e.confidence, f.path, n.kind = 'module' FROM"
                    " (SELECT dst_id, kind, confidence FROM edges WHERE src_id = ? AND kind != 'contains'"
                    " LIMIT ?) e LEFT JOIN nodes n ON n.id = e.dst_id LEFT JOIN files f ON f.id = n.file_id"
                    " UNION ALL SELECT e.src_id, e.kind, e.confidence, f.path, n.kind = 'module' FROM"
                    " (SELECT src_id, kind, confidence FROM edges WHERE dst_id = ? LIMIT ?) e"
                    " LEFT JOIN nodes n ON n.id = e.src_id LEFT JOIN files f ON f.id = n.file_id",
                    (node_id, limit, node_id, limit),
                ),
            )
        )

    def incoming_edges(self, node_ids: Sequence[int], limit: int) -> tuple[list[EdgeRow], bool]:
        """Edges other than containment into ``node_ids``, ordered by (target, source, kind), at
        most ``limit`` of them; the flag says whether that was all there are."""
        found: list[EdgeRow] = []
        for chunk, marks in _id_chunks(node_ids):
            found.extend(
                map(
                    _new_edge,
                    self._db.execute(
                        "SELECT src_id, dst_id, kind, max(confidence) FROM edges"
                        f" WHERE dst_id IN ({marks}) AND kind != 'contains'"
                        " GROUP BY dst_id, src_id, kind ORDER BY dst_id, src_id, kind LIMIT ?",
                        [*chunk, limit - len(found) + 1],
                    ),
                )
            )
            if len(found) > limit:
                return found[:limit], False
        return found, True

    def children(self, node_ids: Sequence[int]) -> list[int]:
        """The definitions directly contained in ``node_ids`` (a class's methods, a file's top level)."""
        found: list[int] = []
        for chunk, marks in _id_chunks(node_ids):
            found.extend(
                node_id
                for (node_id,) in self._db.execute(
                    f"SELECT dst_id FROM edges WHERE src_id IN ({marks}) AND kind = 'contains'"
                    " ORDER BY dst_id",
                    chunk,
                )
            )
        return found

    def search(self, weighted_terms: Mapping[str, float], limit: int) -> list[SearchHit]:
        """Nodes matching any term by BM25, best first (ties by id); a term's weight multiplies its
        part of the score.

        Terms are reduced to plain lowercase words here. Terms found in more than
        ``MAX_TERM_DOCUMENT_SHARE`` of rows are dropped (unless nothing else is left): they rank
        nothing and cost most of the query time (architecture.md, *Measured on these machines*).
        """
        terms = self._query_terms(weighted_terms)
        if not terms or limit <= 0:
            return []
        return [
            SearchHit(hit.row_id, hit.score) for hit in self._lexical_reader().search_symbols(terms, limit)
        ]

    def _query_terms(
        self, weighted_terms: Mapping[str, float], keep_common: bool = False
    ) -> dict[str, float]:
        """The plain words to query with and their weights; empty if no term is in the index.
        Memoised per snapshot, since a request searches symbols and files alike. ``keep_common``
        keeps the terms too common for the symbol index (see :meth:`search_files`)."""
        key = (*sorted(weighted_terms.items()), ("", int(keep_common)))
        if key not in self._queries:
            self._queries[key] = chosen_terms(
                weighted_terms, keep_common, self.common_cutoff(), self.document_counts
            )
        return self._queries[key]

    def search_files(self, weighted_terms: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
        """Files by BM25 over their whole text (best first, ties by path). Terms too common for
        :meth:`search` are kept if given: the caller decides when they are affordable (far fewer
        files than definitions), and a commit message of everyday words ("merge if statements with
        the same return value") has nothing else to go on."""
        terms = self._query_terms(weighted_terms, keep_common=True)
        if not terms or limit <= 0:
            return []
        hits = self._lexical_reader().search_files(terms, limit)
        paths: dict[int, str] = {}
        for chunk, marks in _id_chunks(hit.row_id for hit in hits):
            paths.update(self._db.execute(f"SELECT id, path FROM files WHERE id IN ({marks})", chunk))
        # A file the lexical index holds but this snapshot does not (a writer between its commits)
        # is passed over.
        return sorted(
            ((paths[hit.row_id], hit.score) for hit in hits if hit.row_id in paths),
            key=lambda found: (-found[1], found[0]),
        )

    def document_counts(self, terms: Iterable[str], at_most: int) -> dict[str, int]:
        """How many rows hold each term (plain lowercase words), up to ``at_most``: enough to tell
        rare from common terms. The lexical index keeps each term's count, so any term costs the
        same."""
        counts: dict[str, int] = {}
        for term in sorted(set(terms)):
            # Memoised per snapshot: a request counts its terms to weigh them, then to query.
            key = (term, at_most)
            if key not in self._counts:
                self._counts[key] = min(at_most, self._lexical_reader().document_count(term))
            if self._counts[key]:
                counts[term] = self._counts[key]
        return counts

    def common_cutoff(self) -> int:
        """A term in more rows than this is too common to search for."""
        return common_cutoff_for(self.row_count())

    def row_count(self) -> int:
        values = self._values
        if values.rows is None:
            values.rows = int(self._db.execute("SELECT count(*) FROM nodes").fetchone()[0])
        return values.rows

    def innermost_node_at(self, path: str, line: int) -> NodeRow | None:
        """The smallest definition whose span holds ``line`` (the module node if none does).

        A definition that spans its whole file ties with the module node: the definition wins.
        """
        row = self._db.execute(
            f"SELECT {_NODE_COLUMNS} FROM {_NODE_FROM}"
            " WHERE f.path = ? AND n.start_line <= ? AND n.end_line >= ?"
            " ORDER BY (n.end_line - n.start_line), n.kind = 'module', n.id LIMIT 1",
            (path, line, line),
        ).fetchone()
        return None if row is None else node_row(row)

    def definitions_named(self, path: str, name: str) -> list[NodeRow]:
        """The definitions in ``path`` called ``name`` in any scope, first in the file first."""
        return self._in_file(path, "name", name)

    def nodes_at(self, path: str, qualified_name: str) -> list[NodeRow]:
        """The definitions in ``path`` with this qualified name, first in the file first."""
        return self._in_file(path, "qualified_name", qualified_name)

    def _in_file(self, path: str, column: Literal["name", "qualified_name"], value: str) -> list[NodeRow]:
        return [
            node_row(row)
            for row in self._db.execute(
                f"SELECT {_NODE_COLUMNS} FROM {_NODE_FROM} WHERE f.path = ? AND n.{column} = ?"
                " ORDER BY n.start_line, n.id",
                (path, value),
            )
        ]

    def reference_targets(self, path: str, line: int, key: str) -> list[NodeRow]:
        """What the references named ``key`` on ``line`` of ``path`` resolved to, most confident first."""
        return [
            node_row(row)
            for row in self._db.execute(
                f"SELECT {_NODE_COLUMNS} FROM refs r JOIN files rf ON rf.id = r.file_id"
                " JOIN edges e ON e.ref_id = r.id"
                " JOIN nodes n ON n.id = e.dst_id JOIN files f ON f.id = n.file_id"
                " LEFT JOIN scores s ON s.node_id = n.id"
                " WHERE r.key = ? AND r.line = ? AND rf.path = ?"
                " GROUP BY n.id ORDER BY max(e.confidence) DESC, n.id",
                (key, line, path),
            )
        ]

    def uses_of(self, node_id: int, top: int) -> Uses:
        """Resolved calls and references to a node; the ``top`` ones from the highest-ranked callers."""
        uses = (
            "FROM edges e JOIN refs r ON r.id = e.ref_id JOIN nodes n ON n.id = e.src_id"
            " JOIN files f ON f.id = n.file_id LEFT JOIN scores s ON s.node_id = n.id"
            f" WHERE e.dst_id = ? AND e.kind IN ({','.join('?' * len(USE_EDGE_KINDS))})"
        )
        arguments = (node_id, *USE_EDGE_KINDS)
        count, files = self._db.execute(
            f"SELECT count(*), count(DISTINCT f.path) {uses}", arguments
        ).fetchone()
        rows = self._db.execute(
            f"SELECT f.path, r.line, n.qualified_name {uses}"
            " ORDER BY coalesce(s.pagerank, 0) DESC, f.path, r.line LIMIT ?",
            (*arguments, top),
        )
        return Uses(
            int(count), int(files), tuple(Use(path, line, qualified) for path, line, qualified in rows)
        )

    def paths_ending_with(self, suffix: str) -> list[str]:
        """Indexed paths equal to ``suffix`` or ending with ``/suffix`` (a path named in a task)."""
        if self._values.paths_by_name is None:
            self._values.paths_by_name = paths_by_file_name(self.file_paths())
        return paths_with_suffix(self._values.paths_by_name, suffix)

    def top_definitions(self, paths: Iterable[str], per_file: int) -> dict[str, list[NodeRow]]:
        """The ``per_file`` most central definitions (by PageRank, then position) of each file.

        Every definition of the files is ranked from its id, place and score alone, and only the
        few chosen are loaded whole: ranking whole rows in SQL cost twice as much.
        """
        wanted = sorted(set(paths))
        ranked: dict[str, list[tuple[float, int, int]]] = {}
        for start in range(0, len(wanted), _IDS_PER_QUERY):
            chunk = wanted[start : start + _IDS_PER_QUERY]
            for node_id, path, pagerank, start_line in self._db.execute(
                f"SELECT n.id, f.path, coalesce(s.pagerank, 0), n.start_line FROM {_NODE_FROM}"
                f" WHERE f.path IN ({','.join('?' * len(chunk))}) AND n.kind != 'module'",
                chunk,
            ):
                ranked.setdefault(path, []).append((-pagerank, start_line, node_id))
        chosen = {
            path: [node_id for _, _, node_id in sorted(entries)[: max(0, per_file)]]
            for path, entries in sorted(ranked.items())
        }
        loaded = {node.id: node for node in self.nodes(node_id for ids in chosen.values() for node_id in ids)}
        return {path: [loaded[node_id] for node_id in ids] for path, ids in chosen.items() if ids}

    def all_edges(self) -> list[tuple[str, str, str, str, str, float]]:
        """Every edge by the stable names of its ends: (src path, src qualified name, dst path,
        dst qualified name, kind, confidence). Used to compare two indexes of the same tree."""
        return [
            (sp, sq, dp, dq, kind, round(conf, 9))
            for sp, sq, dp, dq, kind, conf in self._db.execute(
                "SELECT sf.path, s.qualified_name || '@' || s.start_line, df.path,"
                " d.qualified_name || '@' || d.start_line, e.kind, e.confidence FROM edges e"
                " JOIN nodes s ON s.id = e.src_id JOIN files sf ON sf.id = s.file_id"
                " JOIN nodes d ON d.id = e.dst_id JOIN files df ON df.id = d.file_id"
                " ORDER BY 1, 2, 3, 4, 5, 6"
            )
        ]

    def folded_named(self, names: Iterable[str]) -> list[tuple[str, int, NodeRow]]:
        """Definitions folded into an ancestor that bear one of ``names``: (name, line, the node
        whose text holds it), by path and line."""
        wanted = sorted(set(names))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        return [
            (str(row[-2]), int(row[-1]), node_row(row[:-2]))
            for row in self._db.execute(
                f"SELECT {_NODE_COLUMNS}, d.name, d.line FROM folded d JOIN nodes n ON n.id = d.holder_id"
                " JOIN files f ON f.id = n.file_id LEFT JOIN scores s ON s.node_id = n.id"
                f" WHERE d.name IN ({marks}) ORDER BY f.path, d.line, d.name",
                wanted,
            )
        ]

    def all_folded(self) -> list[tuple[str, str, int, str]]:
        """Every folded definition as (path, name, line, holder's qualified name@line), in order."""
        return [
            (path, name, int(line), holder)
            for path, name, line, holder in self._db.execute(
                "SELECT f.path, d.name, d.line, n.qualified_name || '@' || n.start_line FROM folded d"
                " JOIN files f ON f.id = d.file_id JOIN nodes n ON n.id = d.holder_id ORDER BY 1, 3, 2, 4"
            )
        ]

    def all_refs(self) -> list[tuple[str, str, str, str, int, int]]:
        """Every reference as (path, source, kind, name, line, pending), in a stable order."""
        return [
            (path, source, kind, name, int(line), int(pending))
            for path, source, kind, name, line, pending in self._db.execute(
                "SELECT f.path, n.qualified_name || '@' || n.start_line, r.kind, r.name, r.line,"
                " f.refs_pending"
                " FROM refs r JOIN files f ON f.id = r.file_id JOIN nodes n ON n.id = r.source_id"
                " ORDER BY 1, 2, 3, 4, 5"
            )
        ]
