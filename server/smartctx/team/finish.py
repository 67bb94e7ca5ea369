"""The finish step of a commit published in shards: every reference resolved, the graph scored.

Each shard's job parsed its own files and wrote their rows (publish.py), unresolved: a reference
may mean a definition of any shard. This step does what the local index of a one-process publish
did in its resolution pass and its score upkeep, with the same pure rules (store/resolution.py,
store/scores.py), over the rows of every shard in the database: the import references first, then
every other reference through what its file's imports point at, then PageRank and usage over every
edge. So the edges and scores are the ones a one-process publish of the commit writes; only the ids
differ.

Memory is what limits a one-process index of a large repository, so this step holds no parse
tree, no source text and never every reference at once: the definitions (as resolution candidates,
those of names with many of them also indexed by scope), the files' paths, the imports answered so
far and the graph's edges as arrays. The references are read ordered by file, from one
server-side cursor, and resolved ``REFERENCE_FILES_PER_STEP`` files at a time, each step's imports
first: a reference's answer depends on its own file's imports and on the definitions alone.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import groupby, islice
from operator import itemgetter
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import TupleRow

from smartctx.core.model import RefKind, SymbolKind
from smartctx.store.export import EdgeRecord, ScoreRecord
from smartctx.store.resolution import (
    Candidate,
    CandidatePools,
    EdgeValues,
    ImportAnswers,
    ReferenceRow,
    import_edges,
    name_edges,
    name_uses,
)
from smartctx.store.scores import FloatArray, IntArray, ScoreGraph

# Files whose references are resolved in one step: enough that a step's queries are few, few enough
# that a step's references are a small part of memory.
REFERENCE_FILES_PER_STEP = 2_000
# The definitions of a key with at least this many are indexed once for every step; a smaller key's
# are indexed again in each step that uses it (cheap, and most of the keys).
POOLS_KEPT_FROM = 64
# Rows a server-side cursor brings per round trip.
ROWS_PER_FETCH = 20_000

# Writes rows into a table of the commit: (table, columns, rows) -> how many.
Copy = Callable[[str, Sequence[str], Iterable[Sequence[object]]], int]

_REFERENCE_COLUMNS = "file_id, kind, name, key, ref_id, source_id"
_IMPORTS = RefKind.IMPORT.value


def resolve_and_score(connection: psycopg.Connection[TupleRow], commit_id: int, copy: Copy) -> None:
    """Write the edges of every reference of ``commit_id`` and every definition's scores, through
    ``copy``, inside the caller's transaction."""
    paths: dict[int, str] = {
        int(file_id): str(path)
        for file_id, path in connection.execute(
            "SELECT file_id, path FROM smartctx.files WHERE commit_id = %s", (commit_id,)
        ).fetchall()
    }
    candidates: dict[str, list[Candidate]] = defaultdict(list)
    node_ids: list[int] = []
    node_files: list[int] = []
    for node_id, file_id, kind, name, qualified_name, parent_id in _streamed(
        connection,
        "SELECT node_id, file_id, kind, name, qualified_name, parent_id FROM smartctx.nodes"
        " WHERE commit_id = %s ORDER BY node_id",
        commit_id,
    ):
        candidates[name].append(
            Candidate(node_id, file_id, SymbolKind(kind), qualified_name, parent_id, paths[file_id])
        )
        node_ids.append(node_id)
        node_files.append(file_id)
    graph = _Graph(np.array(node_ids, np.int64), np.array(node_files, np.int64))
    del node_ids, node_files
    # The steps allocate millions of short-lived rows, each set of which would start a collection of
    # the oldest generation, walking every definition held here again (on the 104k-file monorepo a
    # fifth of the finish's time). Their rows form no reference cycles, so their memory goes back as
    # each step ends; anything else is collected once the steps are done.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _resolve(connection, commit_id, copy, paths, candidates, graph)
    finally:
        if collecting:
            gc.enable()
    ranks, uses_of = graph.scores()
    copy(
        "scores",
        ScoreRecord._fields,
        zip(graph.node_ids.tolist(), ranks.tolist(), uses_of.tolist(), strict=True),
    )


def _resolve(
    connection: psycopg.Connection[TupleRow],
    commit_id: int,
    copy: Copy,
    paths: Mapping[int, str],
    candidates: Mapping[str, Sequence[Candidate]],
    graph: _Graph,
) -> None:
    """Add the commit's containment edges to ``graph``, then resolve its references and write their
    edges, adding them too."""
    containment = _streamed(
        connection,
        "SELECT src_id, dst_id, kind, confidence FROM smartctx.edges WHERE commit_id = %s",
        commit_id,
    )
    while edges := list(islice(containment, ROWS_PER_FETCH)):
        graph.add(edges)
    # A file's references resolve through its own imports alone, so files are resolved a step at a
    # time, each step its imports first.
    references = _streamed(
        connection,
        f"SELECT {_REFERENCE_COLUMNS} FROM smartctx.refs WHERE commit_id = %s ORDER BY file_id",
        commit_id,
    )
    pools = CandidatePools(candidates)
    import_answers: ImportAnswers = {}
    for rows in _by_files(references, REFERENCE_FILES_PER_STEP):
        imports = [row for row in rows if row[1] == _IMPORTS]
        found = import_edges(imports, paths, candidates, import_answers)
        copy("edges", EdgeRecord._fields, found)
        graph.add(found)
        imported_targets, imported_files = _imported(imports, found, graph)
        names = [row for row in rows if row[1] != _IMPORTS]
        names.sort(key=itemgetter(0, 1, 2, 4))
        uses = name_uses(names, paths, candidates)
        source_names: dict[int, str] = dict(
            connection.execute(
                "SELECT node_id, qualified_name FROM smartctx.nodes WHERE commit_id = %s"
                " AND file_id = ANY(%s)",
                (commit_id, sorted({row[0] for row in rows})),
            ).fetchall()
        )
        found = name_edges(uses, pools, imported_targets, imported_files, source_names)
        copy("edges", EdgeRecord._fields, found)
        graph.add(found)
        pools.keep_largest(POOLS_KEPT_FROM)


def _imported(
    imports: Sequence[ReferenceRow], found: Sequence[EdgeValues], graph: _Graph
) -> tuple[dict[int, dict[str, list[int]]], dict[int, set[int]]]:
    """What each file's imports point at, as the local pass reads it back from its edges: per file,
    the targets of each import key, one per edge, and the files they lie in."""
    targets: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    files: dict[int, set[int]] = defaultdict(set)
    places = {ref_id: (file_id, key) for file_id, _, _, key, ref_id, _ in imports}
    for (_, dst_id, _, _, ref_id), dst_file in zip(
        found, graph.files_of([edge[1] for edge in found]), strict=True
    ):
        file_id, key = places[ref_id]
        targets[file_id][key].append(dst_id)
        files[file_id].add(dst_file)
    return targets, files


class _Graph:
    """The commit's definitions by id, and the edges among them as PageRank takes them."""

    def __init__(self, node_ids: IntArray, node_files: IntArray) -> None:
        # Ascending, as the query orders them: a definition's place is found by binary search.
        self.node_ids = node_ids
        self._node_files = node_files
        self._scores = ScoreGraph(len(node_ids))

    def add(self, edges: Sequence[Sequence[Any]]) -> None:
        """Edges as (source id, target id, kind, confidence, …) rows."""
        self._scores.add(
            self._places([edge[0] for edge in edges]),
            self._places([edge[1] for edge in edges]),
            [edge[2] for edge in edges],
            [edge[3] for edge in edges],
        )

    def files_of(self, node_ids: Sequence[int]) -> list[int]:
        files: list[int] = self._node_files[self._places(node_ids)].tolist()
        return files

    def scores(self) -> tuple[FloatArray, FloatArray]:
        return self._scores.scores()

    def _places(self, node_ids: Sequence[int]) -> IntArray:
        places: IntArray = np.searchsorted(self.node_ids, np.array(node_ids, np.int64))
        return places


def _streamed(connection: psycopg.Connection[TupleRow], query: str, *parameters: object) -> Iterator[Any]:
    """The rows of ``query``, a few thousand at a time, from a server-side cursor (inside the
    caller's transaction)."""
    with connection.cursor(name="smartctx_finish") as cursor:
        cursor.itersize = ROWS_PER_FETCH
        cursor.execute(query.encode(), parameters)
        yield from cursor


def _by_files(rows: Iterator[ReferenceRow], files_per_step: int) -> Iterator[list[ReferenceRow]]:
    """Rows ordered by their first field (a file id), in lists of whole files, ``files_per_step``
    files to a list."""
    step: list[ReferenceRow] = []
    files = 0
    for _, group in groupby(rows, key=itemgetter(0)):
        step.extend(group)
        files += 1
        if files == files_per_step:
            yield step
            step, files = [], 0
    if step:
        yield step
