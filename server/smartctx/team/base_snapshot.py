"""A published commit read as an index: the queries retrieval asks (store/reader.py), answered by
PostgreSQL.

Each query is the local snapshot's (store/snapshot.py) over the same rows, keyed by the commit, so a
pack built from a published commit is the pack a local index of that tree gives. A snapshot reads in
one read-only REPEATABLE READ transaction: a publisher that prunes this commit meanwhile changes
nothing it sees. A published commit never changes once complete, so what a snapshot learns about
the commit as a whole (its paths, its number of definitions) is kept in :class:`CommitFacts`, which
every snapshot of the commit can share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

import psycopg
from psycopg import IsolationLevel
from psycopg.rows import TupleRow

from smartctx.core.model import USE_EDGE_KINDS
from smartctx.store.past_commits import CommitPostings, PastCommitWindow
from smartctx.store.snapshot import (
    EdgeRow,
    IndexStats,
    Neighbour,
    NodeRow,
    SearchHit,
    Use,
    Uses,
    chosen_terms,
    common_cutoff_for,
    node_row,
    paths_by_file_name,
    paths_with_suffix,
)
from smartctx.team import lexical
from smartctx.team.base import PublishedCommit
from smartctx.team.lexical import ListCache, SearchedCommit, searched_commit

# A node's columns, its file as an id (CommitFacts names it) and its scores looked up one row at a
# time: a join would let the planner hash a whole commit's scores to read a few hundred of them.
_SCORE = (
    "coalesce((SELECT s.{0} FROM smartctx.scores s"
    " WHERE s.commit_id = n.commit_id AND s.node_id = n.node_id), 0)"
)
_NODE_COLUMNS = (
    "n.node_id, n.file_id, n.kind, n.name, n.qualified_name, n.start_line, n.end_line, n.signature, n.doc,"
    f" n.content_hash, n.parent_id, {_SCORE.format('pagerank')}, {_SCORE.format('usage')}"
)


@dataclass(frozen=True)
class Hidden:
    """The base's edges an overlay (overlay.py) hides, by the rule that chose them rather than by
    id (a branch that changes ``query.py`` resolves 23k of django's references again, and a list
    that long sent with every query cost tens of milliseconds each): edges out of a definition of
    a shadowed file, and the edges of every reference the overlay resolved again, which are those
    whose key it affected and the non-import references of files whose imports it redirected.
    (An edge into a shadowed definition is one of those: a reference's target bears its key.)

    The same edges by id, for a query that filters what it read rather than asking PostgreSQL to:
    the definitions of the shadowed files (sources of hidden edges) and the references resolved
    again. Checked in SQL, two lookups by primary key per edge read took 47 ms of a django pack's
    76 ms of SQL in the edges around its candidates alone (bench/latency/overlay_perf.py)."""

    files: list[int]
    names: list[str]
    redirected: list[int]
    nodes: frozenset[int]
    refs: frozenset[int]

    def hides(self, src_id: int, ref_id: int | None) -> bool:
        """Whether the edge out of ``src_id``, resolved from ``ref_id`` (None for containment), is hidden."""
        return src_id in self.nodes or (ref_id is not None and ref_id in self.refs)


@dataclass(frozen=True)
class CommitFiles:
    """A published commit's files: path and language by id, id by path, and the paths in order."""

    by_id: dict[int, tuple[str, str]]
    ids: dict[str, int]
    paths: list[str]


class CommitFacts:
    """What one published commit holds as a whole, read once: it never changes."""

    def __init__(self) -> None:
        self.files: CommitFiles | None = None
        self.paths_by_name: dict[str, list[str]] | None = None
        self.rows: int | None = None
        self.searched: SearchedCommit | None = None
        self.lists = ListCache()


@dataclass(frozen=True)
class Counts:
    """Rows of a part of an index, as :class:`~smartctx.store.snapshot.IndexStats` counts them."""

    edges: int = 0
    references: int = 0
    unresolved_references: int = 0
    files_by_language: dict[str, int] = field(default_factory=dict)
    files_with_errors: int = 0
    folded_definitions: int = 0


class BaseSnapshot:
    """Read-only queries over one published commit. Close it (or use ``with``); it ends its
    transaction, and the connection stays the caller's."""

    def __init__(
        self,
        connection: psycopg.Connection[TupleRow],
        commit: PublishedCommit,
        facts: CommitFacts | None = None,
        hidden: Hidden | None = None,
        past_commits: PastCommitWindow | None = None,
    ) -> None:
        """``facts`` are the commit's, shared with its other snapshots; a new set when not given.
        With ``hidden``, no query of edges, references or uses reads the edges it hides.
        ``past_commits`` is the window of the work tree's own history (the base publishes none)."""
        self._db = connection
        self._past_commits = past_commits or PastCommitWindow([])
        self._hidden = hidden
        if hidden is not None:
            # A prepared statement's generic plan takes an array parameter as unknown and tests it
            # element by element on every row; planned with the values, PostgreSQL hashes it.
            connection.prepare_threshold = None
        self._commit = commit
        self._id = commit.commit_id
        self._facts = facts if facts is not None else CommitFacts()
        self._queries: dict[tuple[tuple[str, float], ...], dict[str, float]] = {}
        self._counts: dict[tuple[str, int], int] = {}
        connection.autocommit = False
        connection.isolation_level = IsolationLevel.REPEATABLE_READ
        connection.read_only = True

    def __enter__(self) -> BaseSnapshot:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if not self._db.closed:
            self._db.rollback()

    def _rows_of(self, query: str, *parameters: Any) -> list[tuple[Any, ...]]:
        return self._db.execute(query, (self._id, *parameters)).fetchall()

    def _files(self) -> CommitFiles:
        if self._facts.files is None:
            rows = self._rows_of(
                "SELECT file_id, path, language FROM smartctx.files WHERE commit_id = %s"
                ' ORDER BY path COLLATE "C"'
            )
            self._facts.files = CommitFiles(
                {int(file_id): (str(path), str(language)) for file_id, path, language in rows},
                {str(path): int(file_id) for file_id, path, _ in rows},
                [str(path) for _, path, _ in rows],
            )
        return self._facts.files

    def _file_ids(self, paths: Iterable[str]) -> list[int]:
        ids = self._files().ids
        return sorted({ids[path] for path in paths if path in ids})

    def _node(self, row: tuple[Any, ...]) -> NodeRow:
        """A row of ``_NODE_COLUMNS`` as a NodeRow, its file named."""
        path, language = self._files().by_id[int(row[1])]
        return node_row((row[0], path, language, *row[2:]))

    def _nodes_where(self, condition: str, *parameters: Any, order: str = "n.node_id") -> list[NodeRow]:
        return [
            self._node(row)
            for row in self._rows_of(
                f"SELECT {_NODE_COLUMNS} FROM smartctx.nodes n WHERE n.commit_id = %s AND {condition}"
                f" ORDER BY {order}",
                *parameters,
            )
        ]

    def meta(self, key: str) -> str | None:
        """The local index's meta values a pack reports: the commit as the git head, and when the
        commit was published as the last update."""
        if key == "git_head":
            return self._commit.sha
        if key == "last_indexed":
            return self._commit.completed_at.isoformat(timespec="seconds")
        return None

    def stats(self) -> IndexStats:
        def count(query: str) -> int:
            return int(self._rows_of(query)[0][0])

        return IndexStats(
            files=self.stats_files(),
            nodes=count("SELECT count(*) FROM smartctx.nodes WHERE commit_id = %s"),
            edges=count("SELECT count(*) FROM smartctx.edges WHERE commit_id = %s"),
            references=count("SELECT count(*) FROM smartctx.refs WHERE commit_id = %s"),
            unresolved_references=count(
                "SELECT count(*) FROM smartctx.refs r WHERE r.commit_id = %s AND NOT EXISTS"
                " (SELECT 1 FROM smartctx.edges e WHERE e.commit_id = r.commit_id AND e.ref_id = r.ref_id)"
            ),
            files_by_language={
                str(language): int(number)
                for language, number in self._rows_of(
                    "SELECT language, count(*) FROM smartctx.files WHERE commit_id = %s"
                    " GROUP BY language ORDER BY language"
                )
            },
            files_with_errors=count(
                "SELECT count(*) FROM smartctx.files WHERE commit_id = %s AND has_errors"
            ),
            # A commit is published only once every reference is resolved and its scores computed.
            pending_references=0,
            scores_dirty=False,
            folded_definitions=count("SELECT count(*) FROM smartctx.folded WHERE commit_id = %s"),
        )

    def hidden_counts(
        self, file_ids: Sequence[int], node_ids: Sequence[int], replaced_refs: Iterable[int]
    ) -> Counts:
        """What these files and definitions and those references (an overlay's shadowed files and
        their definitions, and the references it resolved again) count in :meth:`stats`. Read
        when statistics are asked, not as the overlay is laid: on the monorepo these counts took
        1.3 s of the 3.5 an overlay took to read."""
        files, nodes, refs = list(file_ids), list(node_ids), sorted(replaced_refs)

        def count(query: str, *parameters: Any) -> int:
            return int(self._rows_of(query, *parameters)[0][0])

        return Counts(
            edges=count(
                "SELECT count(*) FROM smartctx.edges WHERE commit_id = %s"
                " AND (ref_id = ANY(%s) OR src_id = ANY(%s) OR dst_id = ANY(%s))",
                refs,
                nodes,
                nodes,
            ),
            references=count(
                "SELECT count(*) FROM smartctx.refs WHERE commit_id = %s AND file_id = ANY(%s)", files
            ),
            unresolved_references=count(
                "SELECT count(*) FROM smartctx.refs r WHERE r.commit_id = %s"
                " AND (r.file_id = ANY(%s) OR r.ref_id = ANY(%s)) AND NOT EXISTS"
                " (SELECT 1 FROM smartctx.edges e WHERE e.commit_id = r.commit_id AND e.ref_id = r.ref_id)",
                files,
                refs,
            ),
            files_by_language={
                str(language): int(number)
                for language, number in self._rows_of(
                    "SELECT language, count(*) FROM smartctx.files WHERE commit_id = %s AND file_id = ANY(%s)"
                    " GROUP BY language",
                    files,
                )
            },
            files_with_errors=count(
                "SELECT count(*) FROM smartctx.files"
                " WHERE commit_id = %s AND file_id = ANY(%s) AND has_errors",
                files,
            ),
            folded_definitions=count(
                "SELECT count(*) FROM smartctx.folded WHERE commit_id = %s AND file_id = ANY(%s)", files
            ),
        )

    def stats_files(self) -> int:
        return len(self.file_paths())

    def file_paths(self) -> list[str]:
        return self._files().paths

    def nodes(self, node_ids: Iterable[int]) -> list[NodeRow]:
        return self._nodes_where("n.node_id = ANY(%s)", sorted(set(node_ids)))

    def nodes_with_names(self, names: Iterable[str]) -> dict[str, list[NodeRow]]:
        found: dict[str, list[NodeRow]] = {}
        wanted = sorted(set(names))
        if wanted:
            for node in self._nodes_where("n.name = ANY(%s)", wanted):
                found.setdefault(node.name, []).append(node)
        return found

    def definition_counts(self, names: Iterable[str]) -> dict[str, int]:
        return {
            str(name): int(number)
            for name, number in self._rows_of(
                "SELECT name, count(*) FROM smartctx.nodes WHERE commit_id = %s AND name = ANY(%s)"
                " AND kind != 'module' GROUP BY name",
                sorted(set(names)),
            )
        }

    def nodes_named_within(self, name: str, qualified_suffix: str) -> list[NodeRow]:
        return self._nodes_where(
            "n.name = %s AND right(n.qualified_name, length(%s)) = %s",
            name,
            qualified_suffix,
            qualified_suffix,
        )

    def module_ids(self, paths: Iterable[str]) -> dict[str, int]:
        by_id = self._files().by_id
        return {
            by_id[int(file_id)][0]: int(node_id)
            for file_id, node_id in self._rows_of(
                "SELECT file_id, node_id FROM smartctx.nodes WHERE commit_id = %s AND kind = 'module'"
                " AND file_id = ANY(%s)",
                self._file_ids(paths),
            )
        }

    def paths_of(self, node_ids: Iterable[int]) -> dict[int, str]:
        by_id = self._files().by_id
        return {
            int(node_id): by_id[int(file_id)][0]
            for node_id, file_id in self._rows_of(
                "SELECT node_id, file_id FROM smartctx.nodes WHERE commit_id = %s AND node_id = ANY(%s)",
                sorted(set(node_ids)),
            )
        }

    def _visible(self, edge: str = "edges") -> tuple[str, tuple[Any, ...]]:
        """A condition on the edge ``edge`` (a table name or alias) that leaves out what
        :class:`Hidden` hides, with its parameters: two lookups by primary key per edge read."""
        if self._hidden is None:
            return "", ()
        return (
            " AND NOT EXISTS (SELECT 1 FROM smartctx.nodes hidden_node"
            f" WHERE hidden_node.commit_id = {edge}.commit_id AND hidden_node.node_id = {edge}.src_id"
            " AND hidden_node.file_id = ANY(%s))"
            " AND NOT EXISTS (SELECT 1 FROM smartctx.refs hidden_ref"
            f" WHERE hidden_ref.commit_id = {edge}.commit_id AND hidden_ref.ref_id = {edge}.ref_id"
            " AND (hidden_ref.key = ANY(%s)"
            " OR (hidden_ref.file_id = ANY(%s) AND hidden_ref.kind <> 'imports')))",
            (self._hidden.files, self._hidden.names, self._hidden.redirected),
        )

    def _edges(self, query: str, *parameters: Any) -> list[EdgeRow]:
        return [
            EdgeRow(int(src), int(dst), str(kind), float(confidence))
            for src, dst, kind, confidence in self._rows_of(query, *parameters)
        ]

    def edges_touching(self, node_ids: Sequence[int]) -> list[EdgeRow]:
        ids = sorted(set(node_ids))
        hidden = self._hidden
        found = {
            EdgeRow(int(src), int(dst), str(kind), float(confidence))
            for src, dst, kind, confidence, ref_id in self._rows_of(
                "SELECT src_id, dst_id, kind, confidence, ref_id FROM smartctx.edges WHERE commit_id = %s"
                " AND src_id = ANY(%s) UNION SELECT src_id, dst_id, kind, confidence, ref_id"
                " FROM smartctx.edges WHERE commit_id = %s AND dst_id = ANY(%s)",
                ids,
                self._id,
                ids,
            )
            if hidden is None or not hidden.hides(int(src), None if ref_id is None else int(ref_id))
        }
        return sorted(found, key=lambda edge: (edge.src_id, edge.dst_id, edge.kind))

    def neighbours(self, node_id: int, limit: int) -> list[Neighbour]:
        outgoing, incoming = self.neighbour_halves(node_id, limit)
        return outgoing + incoming

    def neighbour_halves(self, node_id: int, limit: int) -> tuple[list[Neighbour], list[Neighbour]]:
        """:meth:`neighbours` as its two halves: the ends of the edges out of the node (but
        containment), then the ends of those into it."""
        # The local query's order within each half is SQLite's index order (by rowid of the edge):
        # here by the edge's other end, the same set whenever the node has fewer than ``limit``.
        visible, hidden = self._visible()
        outgoing = self._rows_of(
            "SELECT e.dst_id, e.kind, e.confidence, n.file_id, n.kind = 'module' FROM"
            " (SELECT dst_id, kind, confidence FROM smartctx.edges WHERE commit_id = %s AND src_id = %s"
            f" AND kind != 'contains'{visible} ORDER BY dst_id, kind LIMIT %s) e"
            " LEFT JOIN smartctx.nodes n ON n.commit_id = %s AND n.node_id = e.dst_id",
            node_id,
            *hidden,
            limit,
            self._id,
        )
        incoming = self._rows_of(
            "SELECT e.src_id, e.kind, e.confidence, n.file_id, n.kind = 'module' FROM"
            " (SELECT src_id, kind, confidence FROM smartctx.edges WHERE commit_id = %s AND dst_id = %s"
            f"{visible} ORDER BY src_id, kind LIMIT %s) e"
            " LEFT JOIN smartctx.nodes n ON n.commit_id = %s AND n.node_id = e.src_id",
            node_id,
            *hidden,
            limit,
            self._id,
        )
        by_id = self._files().by_id
        halves = tuple(
            [
                Neighbour(
                    int(other),
                    str(kind),
                    float(confidence),
                    None if file_id is None else by_id[int(file_id)][0],
                    int(bool(is_module)),
                )
                for other, kind, confidence, file_id, is_module in rows
            ]
            for rows in (outgoing, incoming)
        )
        return halves[0], halves[1]

    def incoming_edges(self, node_ids: Sequence[int], limit: int) -> tuple[list[EdgeRow], bool]:
        visible, hidden = self._visible()
        found = self._edges(
            "SELECT src_id, dst_id, kind, max(confidence) FROM smartctx.edges WHERE commit_id = %s"
            f" AND dst_id = ANY(%s) AND kind != 'contains'{visible} GROUP BY dst_id, src_id, kind"
            " ORDER BY dst_id, src_id, kind LIMIT %s",
            sorted(set(node_ids)),
            *hidden,
            limit + 1,
        )
        return (found[:limit], False) if len(found) > limit else (found, True)

    def children(self, node_ids: Sequence[int]) -> list[int]:
        visible, hidden = self._visible()
        return [
            int(node_id)
            for (node_id,) in self._rows_of(
                "SELECT dst_id FROM smartctx.edges WHERE commit_id = %s AND src_id = ANY(%s)"
                f" AND kind = 'contains'{visible} ORDER BY dst_id",
                sorted(set(node_ids)),
                *hidden,
            )
        ]

    def search(self, weighted_terms: Mapping[str, float], limit: int) -> list[SearchHit]:
        terms = self._query_terms(weighted_terms, keep_common=False)
        if not terms or limit <= 0:
            return []
        return [
            SearchHit(node_id, score)
            for node_id, score in lexical.search_symbols(
                self._db, self._searched(), terms, limit, self._facts.lists
            )
        ]

    def search_files(self, weighted_terms: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
        terms = self._query_terms(weighted_terms, keep_common=True)
        if not terms or limit <= 0:
            return []
        hits = lexical.search_files(self._db, self._searched(), terms, limit, self._facts.lists)
        paths = dict(
            self._rows_of(
                "SELECT file_id, path FROM smartctx.files WHERE commit_id = %s AND file_id = ANY(%s)",
                [file_id for file_id, _ in hits],
            )
        )
        return sorted(
            ((str(paths[file_id]), score) for file_id, score in hits), key=lambda hit: (-hit[1], hit[0])
        )

    def corpora(self) -> tuple[lexical.Corpus, lexical.Corpus]:
        """The commit's definitions and files as BM25 counts them."""
        searched = self._searched()
        return searched.symbols, searched.files

    def term_frequencies(
        self, lists: lexical.ListsTable, terms: Iterable[str], hidden: lexical.IntArray
    ) -> dict[str, tuple[int, int]]:
        """How many documents hold each term, and how many of those are ``hidden`` (ids, sorted)."""
        return lexical.term_frequencies(self._db, lists, self._id, terms, hidden, self._facts.lists)

    def top_weighted(
        self,
        lists: lexical.ListsTable,
        weights: Mapping[str, float],
        average: float,
        hidden: lexical.IntArray,
        limit: int,
    ) -> list[tuple[int, float]]:
        """The best documents for terms of given BM25 weights, but ``hidden`` (team/lexical.py)."""
        return lexical.top_weighted(
            self._db, lists, self._id, weights, average, hidden, limit, self._facts.lists
        )

    def paths_by_file_id(self, file_ids: Iterable[int]) -> dict[int, str]:
        by_id = self._files().by_id
        return {file_id: by_id[file_id][0] for file_id in file_ids}

    def _searched(self) -> SearchedCommit:
        if self._facts.searched is None:
            self._facts.searched = searched_commit(self._db, self._id)
        return self._facts.searched

    def _query_terms(self, weighted_terms: Mapping[str, float], keep_common: bool) -> dict[str, float]:
        key = (*sorted(weighted_terms.items()), ("", int(keep_common)))
        if key not in self._queries:
            self._queries[key] = chosen_terms(
                weighted_terms, keep_common, self.common_cutoff(), self.document_counts
            )
        return self._queries[key]

    def document_counts(self, terms: Iterable[str], at_most: int) -> dict[str, int]:
        wanted = sorted({term for term in terms if (term, at_most) not in self._counts})
        if wanted:
            counted = lexical.document_counts(self._db, self._searched(), wanted, at_most)
            for term in wanted:
                self._counts[(term, at_most)] = counted.get(term, 0)
        return {
            term: self._counts[(term, at_most)]
            for term in sorted(set(terms))
            if self._counts[(term, at_most)]
        }

    def common_cutoff(self) -> int:
        return common_cutoff_for(self.row_count())

    def row_count(self) -> int:
        if self._facts.rows is None:
            self._facts.rows = int(
                self._rows_of("SELECT count(*) FROM smartctx.nodes WHERE commit_id = %s")[0][0]
            )
        return self._facts.rows

    def innermost_node_at(self, path: str, line: int) -> NodeRow | None:
        found = self._nodes_where(
            "n.file_id = ANY(%s) AND n.start_line <= %s AND n.end_line >= %s",
            self._file_ids([path]),
            line,
            line,
            order="(n.end_line - n.start_line), n.kind = 'module', n.node_id LIMIT 1",
        )
        return found[0] if found else None

    def definitions_named(self, path: str, name: str) -> list[NodeRow]:
        return self._in_file(path, "name", name)

    def nodes_at(self, path: str, qualified_name: str) -> list[NodeRow]:
        return self._in_file(path, "qualified_name", qualified_name)

    def _in_file(self, path: str, column: Literal["name", "qualified_name"], value: str) -> list[NodeRow]:
        return self._nodes_where(
            f"n.file_id = ANY(%s) AND n.{column} = %s",
            self._file_ids([path]),
            value,
            order="n.start_line, n.node_id",
        )

    def reference_targets(self, path: str, line: int, key: str) -> list[NodeRow]:
        return [node for _, node in self.reference_answers(path, line, key)]

    def reference_answers(self, path: str, line: int, key: str) -> list[tuple[float, NodeRow]]:
        """:meth:`reference_targets` with each target's confidence."""
        visible, hidden = self._visible("e")
        return [
            (float(row[-1]), self._node(row[:-1]))
            for row in self._rows_of(
                f"SELECT {_NODE_COLUMNS}, t.confidence FROM (SELECT e.dst_id, max(e.confidence) AS confidence"
                " FROM smartctx.refs r JOIN smartctx.edges e"
                " ON e.commit_id = r.commit_id AND e.ref_id = r.ref_id"
                f" WHERE r.commit_id = %s AND r.key = %s AND r.line = %s AND r.file_id = ANY(%s){visible}"
                " GROUP BY e.dst_id) t JOIN smartctx.nodes n ON n.commit_id = %s AND n.node_id = t.dst_id"
                " ORDER BY t.confidence DESC, n.node_id",
                key,
                line,
                self._file_ids([path]),
                *hidden,
                self._id,
            )
        ]

    def uses_of(self, node_id: int, top: int) -> Uses:
        count, paths, ranked = self.ranked_uses(node_id, top)
        return Uses(count, len(paths), tuple(use for _, use in ranked))

    def ranked_uses(self, node_id: int, top: int) -> tuple[int, set[str], list[tuple[float, Use]]]:
        """The uses :meth:`uses_of` counts: how many, in which files, and the ``top`` of them with
        the PageRank of the definition each sits in."""
        visible, hidden = self._visible("e")
        uses = (
            "FROM smartctx.edges e JOIN smartctx.refs r ON r.commit_id = e.commit_id AND r.ref_id = e.ref_id"
            " JOIN smartctx.nodes n ON n.commit_id = e.commit_id AND n.node_id = e.src_id"
            " JOIN smartctx.files f ON f.commit_id = n.commit_id AND f.file_id = n.file_id"
            " LEFT JOIN smartctx.scores s ON s.commit_id = n.commit_id AND s.node_id = n.node_id"
            f" WHERE e.commit_id = %s AND e.dst_id = %s AND e.kind = ANY(%s){visible}"
        )
        counted = self._rows_of(
            f"SELECT f.path, count(*) {uses} GROUP BY f.path", node_id, list(USE_EDGE_KINDS), *hidden
        )
        rows = self._rows_of(
            f"SELECT coalesce(s.pagerank, 0), f.path, r.line, n.qualified_name {uses}"
            ' ORDER BY coalesce(s.pagerank, 0) DESC, f.path COLLATE "C", r.line LIMIT %s',
            node_id,
            list(USE_EDGE_KINDS),
            *hidden,
            top,
        )
        return (
            sum(int(number) for _, number in counted),
            {str(path) for path, _ in counted},
            [
                (float(rank), Use(str(path), int(line), str(qualified)))
                for rank, path, line, qualified in rows
            ],
        )

    def paths_ending_with(self, suffix: str) -> list[str]:
        if self._facts.paths_by_name is None:
            self._facts.paths_by_name = paths_by_file_name(self.file_paths())
        return paths_with_suffix(self._facts.paths_by_name, suffix)

    def top_definitions(self, paths: Iterable[str], per_file: int) -> dict[str, list[NodeRow]]:
        """The ``per_file`` most central definitions of each file, as the local snapshot ranks them
        (PageRank, then position, then id)."""
        by_id = self._files().by_id
        ranked: dict[str, list[tuple[float, int, int]]] = {}
        for node_id, file_id, pagerank, start_line in self._rows_of(
            f"SELECT n.node_id, n.file_id, {_SCORE.format('pagerank')}, n.start_line FROM smartctx.nodes n"
            " WHERE n.commit_id = %s AND n.file_id = ANY(%s) AND n.kind != 'module'",
            self._file_ids(paths),
        ):
            ranked.setdefault(by_id[int(file_id)][0], []).append(
                (-float(pagerank), int(start_line), int(node_id))
            )
        chosen = {
            path: [node_id for _, _, node_id in sorted(entries)[: max(0, per_file)]]
            for path, entries in sorted(ranked.items())
        }
        loaded = {node.id: node for node in self.nodes(node_id for ids in chosen.values() for node_id in ids)}
        return {path: [loaded[node_id] for node_id in ids] for path, ids in chosen.items() if ids}

    def past_commit_postings(self, words: Iterable[str]) -> CommitPostings:
        return self._past_commits.postings(words)

    def past_commit_paths(self, commit_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
        return self._past_commits.paths(commit_ids)

    def folded_named(self, names: Iterable[str]) -> list[tuple[str, int, NodeRow]]:
        wanted = sorted(set(names))
        if not wanted:
            return []
        found = [
            (str(row[-2]), int(row[-1]), self._node(row[:-2]))
            for row in self._rows_of(
                f"SELECT {_NODE_COLUMNS}, d.name, d.line FROM smartctx.folded d"
                " JOIN smartctx.nodes n ON n.commit_id = d.commit_id AND n.node_id = d.holder_id"
                " WHERE d.commit_id = %s AND d.name = ANY(%s)",
                wanted,
            )
        ]
        return sorted(found, key=lambda folded: (folded[2].path, folded[1], folded[0]))
