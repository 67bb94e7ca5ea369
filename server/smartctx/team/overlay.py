"""The files a work tree changed since its base, indexed locally and laid over the base.

An editor whose tree is a published commit's but for a few files indexes only those files, in a
local index of their own, and reads it through :class:`Overlay`: its rows in their own id space
(negative ids, so they never meet a base id), and what they change in the base. The base's rows of
a changed or deleted file are *shadowed* (merged.py leaves them out), and every reference whose
answer the change can move is resolved again with the local index's own pure rules
(store/resolution.py) against the base and the overlay together: each reference of an overlay file,
each base reference whose key names a definition of a shadowed or an overlay file, and every
reference of a base file whose imports now point elsewhere. That is what a local index of the whole
tree resolves differently, so the edges are the ones it holds.

What the overlay cannot have exactly is PageRank, which depends on the whole graph: a base
definition keeps the base's value, and the overlay's definitions get theirs from PageRank's own
iteration run over them alone, every base definition's rank held at the base's value
(:func:`_estimated_ranks`): a definition renamed on a branch is as central as its callers make it,
not the least of all. Usage is exact: the base's value less the uses the change removed, plus those
it added.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import TupleRow

from smartctx.core.model import RefKind, SymbolKind
from smartctx.store.export import IndexExport
from smartctx.store.resolution import (
    Candidate,
    CandidatePools,
    EdgeValues,
    ReferenceRow,
    import_edges,
    name_edges,
    name_uses,
)
from smartctx.store.scores import (
    PAGERANK_DAMPING,
    PAGERANK_EDGE_WEIGHTS,
    PAGERANK_MAX_ITERATIONS,
    PAGERANK_TOLERANCE,
    USAGE_EDGE_WEIGHTS,
)
from smartctx.store.snapshot import EdgeRow, NodeRow, node_row
from smartctx.team.base_snapshot import Counts, Hidden
from smartctx.team.postings import Document, file_document, symbol_documents

_IMPORTS = RefKind.IMPORT.value
_CONTAINS = RefKind.CONTAINS.value


# Where the overlay's ids start: below every base id (which are positive), and in the local index's
# own order, so that ties broken by id fall as they would locally.
OVERLAY_IDS_FROM = -(2**62)


def overlay_id(local_id: int) -> int:
    """A row of the overlay's local index in the merged id space."""
    return OVERLAY_IDS_FROM + local_id


@dataclass(frozen=True, slots=True)
class NewEdge:
    """An edge the overlay adds: its ends, and the reference it was resolved from (None for
    containment), a base reference's own id or an overlay reference's (negative) one."""

    edge: EdgeRow
    ref_id: int | None


@dataclass(frozen=True, slots=True)
class Place:
    """Where a reference the overlay resolved sits, and what it is looked up by."""

    path: str
    line: int
    key: str


@dataclass
class Overlay:
    """The overlay's rows and what they shadow and replace in one published commit."""

    # Base files the overlay replaces or deletes, by path and by the base's id.
    shadowed_paths: frozenset[str]
    shadowed_file_ids: tuple[int, ...]
    # Their definitions, by the base's id, with their names; and how many of each name are not
    # module nodes (what definition_counts counts).
    shadowed_nodes: dict[int, str]
    shadowed_definitions: Counter[str]
    # Base references in unshadowed files resolved again: their base edges no longer hold. They are
    # those whose key is one of ``affected_names`` and the non-import references of
    # ``redirected_files``, base files whose imports now point elsewhere.
    replaced_refs: tuple[int, ...]
    affected_names: tuple[str, ...]
    redirected_files: tuple[int, ...]
    # The overlay's files: path -> language.
    files: dict[str, str]
    nodes: dict[int, NodeRow]
    # Every edge the overlay adds, and where each reference it resolved sits.
    edges: list[NewEdge]
    places: dict[int, Place]
    # Base definitions whose usage the change moved, with the amount.
    usage_change: dict[int, float]
    # Lexical search: the overlay's documents, and the shadowed base documents' counts.
    symbol_documents: dict[int, Document]
    file_documents: dict[str, Document]
    shadowed_symbol_words: int = 0
    shadowed_file_words: int = 0
    # Definitions folded into a holder: (name, line, holder id).
    folded: list[tuple[str, int, int]] = field(default_factory=list)
    # What the overlay's own rows count towards the index's statistics (what the base's rows it
    # hides count is read when statistics are asked: base_snapshot.py's hidden_counts).
    counts: Counts = field(default_factory=Counts)

    def hides(self) -> Hidden:
        """The base's edges this overlay hides (base_snapshot.py)."""
        return Hidden(
            list(self.shadowed_file_ids),
            list(self.affected_names),
            list(self.redirected_files),
            frozenset(self.shadowed_nodes),
            frozenset(self.replaced_refs),
        )


def read_overlay(
    connection: psycopg.Connection[TupleRow],
    commit_id: int,
    index_path: Path,
    shadowed_paths: Iterable[str],
) -> Overlay:
    """The overlay kept in the local index at ``index_path`` (of the changed files only, settled),
    over the published commit ``commit_id``, whose ``shadowed_paths`` it replaces or deletes."""
    with IndexExport(index_path) as export:
        export.check_settled()
        files = list(export.files())
        records = list(export.nodes())
        edges = list(export.edges())
        refs = list(export.refs())
        folded = list(export.folded())
        words = list(export.search_words())
    # One transaction that sees the commit's rows as one state, and writes nothing whatever the role.
    with connection.transaction():
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        base = _BaseRows(connection, commit_id)
        # A file the overlay holds is never also the base's.
        shadowed = frozenset(shadowed_paths) | {record.path for record in files}
        shadowed_file_ids = base.file_ids(shadowed)
        shadowed_rows = base.nodes_of_files(shadowed_file_ids)
        shadowed_nodes = {node_id: name for node_id, name, _ in shadowed_rows}
        path_of = {record.file_id: record.path for record in files}
        language_of = {record.file_id: record.language for record in files}
        nodes = {
            overlay_id(r.node_id): node_row(
                (
                    overlay_id(r.node_id),
                    path_of[r.file_id],
                    language_of[r.file_id],
                    r.kind,
                    r.name,
                    r.qualified_name,
                    r.start_line,
                    r.end_line,
                    r.signature,
                    r.doc,
                    r.content_hash,
                    None if r.parent_id is None else overlay_id(r.parent_id),
                    0.0,
                    0.0,
                )
            )
            for r in records
        }
        overlay_refs: list[ReferenceRow] = [
            (overlay_id(r.file_id), r.kind, r.name, r.key, overlay_id(r.ref_id), overlay_id(r.source_id))
            for r in refs
        ]
        resolved = _Resolution(base, shadowed_file_ids, nodes, {overlay_id(f.file_id): f.path for f in files})
        affected = {*shadowed_nodes.values(), *(node.name for node in nodes.values())}
        new_edges, replaced_refs, base_places, redirected = resolved.run(overlay_refs, affected)
        answered = {added.ref_id for added in new_edges}
        containment = [
            NewEdge(EdgeRow(overlay_id(e.src_id), overlay_id(e.dst_id), e.kind, e.confidence), None)
            for e in edges
            if e.kind == _CONTAINS
        ]
        places = {overlay_id(r.ref_id): Place(path_of[r.file_id], r.line, r.key) for r in refs} | base_places
        usage_change = base.removed_usage(replaced_refs, tuple(shadowed_nodes))
        for added in new_edges:
            weight = USAGE_EDGE_WEIGHTS.get(added.edge.kind, 0.0) * added.edge.confidence
            if weight:
                usage_change[added.edge.dst_id] = usage_change.get(added.edge.dst_id, 0.0) + weight
        node_count = base.node_count() - len(shadowed_nodes) + len(nodes)
        ranks = _estimated_ranks(
            base, [*containment, *new_edges], frozenset(nodes), node_count, shadowed_nodes, replaced_refs
        )
        for node_id, node in nodes.items():
            nodes[node_id] = node._replace(pagerank=ranks[node_id], usage=usage_change.pop(node_id, 0.0))
        symbol_docs: dict[int, Document] = {}
        file_docs: dict[str, Document] = {}
        for record in words:
            symbol_docs.update((overlay_id(node_id), doc) for node_id, doc in symbol_documents(record))
            file_docs[path_of[record.file_id]] = file_document(record)
        symbol_words, file_words = base.words_of(tuple(shadowed_nodes), shadowed_file_ids)
        return Overlay(
            shadowed_paths=frozenset(path for path in shadowed if path in base.paths()),
            shadowed_file_ids=shadowed_file_ids,
            shadowed_nodes=shadowed_nodes,
            shadowed_definitions=Counter(name for _, name, is_module in shadowed_rows if not is_module),
            replaced_refs=tuple(sorted(replaced_refs)),
            affected_names=tuple(sorted(affected)),
            redirected_files=tuple(redirected),
            files={record.path: record.language for record in files},
            nodes=nodes,
            edges=sorted(
                [*containment, *new_edges],
                key=lambda added: (added.edge.src_id, added.edge.dst_id, added.edge.kind),
            ),
            places=places,
            usage_change=usage_change,
            symbol_documents=symbol_docs,
            file_documents=file_docs,
            shadowed_symbol_words=symbol_words,
            shadowed_file_words=file_words,
            folded=[(f.name, f.line, overlay_id(f.holder_id)) for f in folded],
            counts=Counts(
                edges=len(containment) + len(new_edges),
                references=len(refs),
                # Of the references resolved here, those without an edge; the base's own count covers
                # the rest (resolved again or not, a base reference stays one).
                unresolved_references=len({row[4] for row in overlay_refs} - answered)
                + len(replaced_refs - answered),
                files_by_language=dict(Counter(record.language for record in files)),
                files_with_errors=sum(record.has_errors for record in files),
                folded_definitions=len(folded),
            ),
        )


class _BaseRows:
    """The queries of the published commit an overlay is built with."""

    def __init__(self, connection: psycopg.Connection[TupleRow], commit_id: int) -> None:
        self._db = connection
        self._id = commit_id
        self._paths: dict[str, int] | None = None

    def _rows(self, query: str, *parameters: Any) -> list[tuple[Any, ...]]:
        return self._db.execute(query, (self._id, *parameters)).fetchall()

    def paths(self) -> dict[str, int]:
        if self._paths is None:
            self._paths = {
                str(path): int(file_id)
                for file_id, path in self._rows(
                    "SELECT file_id, path FROM smartctx.files WHERE commit_id = %s"
                )
            }
        return self._paths

    def path_names(self, file_ids: Iterable[int]) -> dict[int, str]:
        wanted = set(file_ids)
        return {file_id: path for path, file_id in self.paths().items() if file_id in wanted}

    def file_ids(self, paths: Iterable[str]) -> tuple[int, ...]:
        known = self.paths()
        return tuple(sorted(known[path] for path in set(paths) if path in known))

    def node_count(self) -> int:
        return int(self._rows("SELECT count(*) FROM smartctx.nodes WHERE commit_id = %s")[0][0])

    def nodes_of_files(self, file_ids: Sequence[int]) -> list[tuple[int, str, bool]]:
        """The definitions of these files: id, name and whether it is a module node."""
        return [
            (int(node_id), str(name), bool(is_module))
            for node_id, name, is_module in self._rows(
                "SELECT node_id, name, kind = 'module' FROM smartctx.nodes"
                " WHERE commit_id = %s AND file_id = ANY(%s)",
                list(file_ids),
            )
        ]

    def ranks(self, node_ids: Iterable[int]) -> dict[int, float]:
        """The PageRank of these base definitions."""
        return {
            int(node_id): float(rank)
            for node_id, rank in self._rows(
                "SELECT node_id, pagerank FROM smartctx.scores WHERE commit_id = %s AND node_id = ANY(%s)",
                sorted(set(node_ids)),
            )
        }

    def passed_on(
        self, node_ids: Iterable[int], hidden_nodes: Sequence[int], replaced_refs: Iterable[int]
    ) -> dict[int, float]:
        """How much rank each of these base definitions passes on along the base's edges that the
        overlay leaves in place (store/upkeep.py's weights; containment passes rank both ways)."""
        passed: dict[int, float] = defaultdict(float)
        for node_id, kind, confidence in self._rows(
            "SELECT src_id, kind, sum(confidence) FROM smartctx.edges"
            " WHERE commit_id = %s AND src_id = ANY(%s)"
            " AND dst_id <> ALL(%s) AND (ref_id IS NULL OR ref_id <> ALL(%s)) GROUP BY src_id, kind"
            " UNION ALL SELECT dst_id, 'contains', sum(confidence) FROM smartctx.edges WHERE commit_id = %s"
            " AND dst_id = ANY(%s) AND kind = 'contains' AND src_id <> ALL(%s) GROUP BY dst_id",
            sorted(set(node_ids)),
            list(hidden_nodes),
            sorted(replaced_refs),
            self._id,
            sorted(set(node_ids)),
            list(hidden_nodes),
        ):
            passed[int(node_id)] += PAGERANK_EDGE_WEIGHTS[str(kind)] * float(confidence)
        return passed

    def references(self, condition: str, *parameters: Any) -> list[tuple[ReferenceRow, int]]:
        """References as resolver rows, each with its line."""
        return [
            ((int(file_id), str(kind), str(name), str(key), int(ref_id), int(source_id)), int(line))
            for file_id, kind, name, key, ref_id, source_id, line in self._rows(
                "SELECT file_id, kind, name, key, ref_id, source_id, line FROM smartctx.refs"
                f" WHERE commit_id = %s AND {condition}",
                *parameters,
            )
        ]

    def candidates(self, keys: Iterable[str], hidden_files: Sequence[int]) -> dict[str, list[Candidate]]:
        by_id = {file_id: path for path, file_id in self.paths().items()}
        found: dict[str, list[Candidate]] = defaultdict(list)
        for node_id, file_id, kind, name, qualified, parent_id in self._rows(
            "SELECT node_id, file_id, kind, name, qualified_name, parent_id FROM smartctx.nodes"
            " WHERE commit_id = %s AND name = ANY(%s) AND file_id <> ALL(%s)",
            sorted(set(keys)),
            list(hidden_files),
        ):
            found[str(name)].append(
                Candidate(
                    int(node_id),
                    int(file_id),
                    SymbolKind(kind),
                    str(qualified),
                    parent_id,
                    by_id[int(file_id)],
                )
            )
        return found

    def import_targets(self, ref_ids: Sequence[int]) -> dict[int, set[int]]:
        """What each of these import references points at in the base."""
        found: dict[int, set[int]] = defaultdict(set)
        for ref_id, dst_id in self._rows(
            "SELECT ref_id, dst_id FROM smartctx.edges WHERE commit_id = %s AND ref_id = ANY(%s)",
            list(ref_ids),
        ):
            found[int(ref_id)].add(int(dst_id))
        return found

    def imports_of(
        self, file_ids: Sequence[int], leaving_out: Sequence[int]
    ) -> list[tuple[int, str, int, int]]:
        """The import edges of these files, as (file, key, target, target's file), but for the
        references ``leaving_out``."""
        return [
            (int(file_id), str(key), int(dst_id), int(dst_file))
            for file_id, key, dst_id, dst_file in self._rows(
                "SELECT r.file_id, r.key, e.dst_id, n.file_id FROM smartctx.refs r"
                " JOIN smartctx.edges e ON e.commit_id = r.commit_id AND e.ref_id = r.ref_id"
                " JOIN smartctx.nodes n ON n.commit_id = e.commit_id AND n.node_id = e.dst_id"
                " WHERE r.commit_id = %s AND r.file_id = ANY(%s) AND r.kind = 'imports'"
                " AND r.ref_id <> ALL(%s)",
                list(file_ids),
                list(leaving_out),
            )
        ]

    def qualified_names(self, node_ids: Iterable[int]) -> dict[int, str]:
        return {
            int(node_id): str(qualified)
            for node_id, qualified in self._rows(
                "SELECT node_id, qualified_name FROM smartctx.nodes"
                " WHERE commit_id = %s AND node_id = ANY(%s)",
                sorted(set(node_ids)),
            )
        }

    def removed_usage(self, replaced_refs: Iterable[int], shadowed_nodes: Sequence[int]) -> dict[int, float]:
        """What the base edges the overlay hides counted towards each definition's usage, negated."""
        change: dict[int, float] = defaultdict(float)
        for dst_id, kind, confidence in self._rows(
            "SELECT dst_id, kind, confidence FROM smartctx.edges WHERE commit_id = %s"
            " AND (ref_id = ANY(%s) OR src_id = ANY(%s)) AND kind = ANY(%s)",
            sorted(replaced_refs),
            list(shadowed_nodes),
            sorted(USAGE_EDGE_WEIGHTS),
        ):
            change[int(dst_id)] -= USAGE_EDGE_WEIGHTS[str(kind)] * float(confidence)
        return dict(change)

    def words_of(self, node_ids: Sequence[int], file_ids: Sequence[int]) -> tuple[int, int]:
        """The words of these definitions' documents and of these files' documents."""
        ((symbol_words,),) = self._rows(
            "SELECT coalesce(sum(length), 0) FROM smartctx.symbol_lengths"
            " WHERE commit_id = %s AND node_id = ANY(%s)",
            list(node_ids),
        )
        ((file_words,),) = self._rows(
            "SELECT coalesce(sum(length), 0) FROM smartctx.file_lengths"
            " WHERE commit_id = %s AND file_id = ANY(%s)",
            list(file_ids),
        )
        return int(symbol_words), int(file_words)


class _Resolution:
    """The local index's resolution pass (store/resolution_pass.py) over base and overlay together,
    for the references the overlay can change."""

    def __init__(
        self,
        base: _BaseRows,
        hidden_files: Sequence[int],
        overlay_nodes: dict[int, NodeRow],
        overlay_paths: dict[int, str],
    ) -> None:
        self._base = base
        self._hidden = hidden_files
        self._overlay_nodes = overlay_nodes
        self._paths: dict[int, str] = dict(overlay_paths)
        self._overlay_file_of_path = {path: file_id for file_id, path in overlay_paths.items()}
        # Definitions by the key they answer, for the keys looked up that some definition carries
        # (as the local pass loads them: a key with none is not even looked at).
        self._candidates: dict[str, list[Candidate]] = {}
        self._looked_up: set[str] = set()
        self._node_files: dict[int, int] = {}

    def _load_candidates(self, keys: Iterable[str]) -> None:
        wanted = set(keys) - self._looked_up
        if not wanted:
            return
        self._looked_up |= wanted
        found = self._base.candidates(wanted, self._hidden)
        for node in self._overlay_nodes.values():
            if node.name in wanted:
                found[node.name].append(
                    Candidate(
                        node.id,
                        self._overlay_file_of_path[node.path],
                        node.kind,
                        node.qualified_name,
                        node.parent_id,
                        node.path,
                    )
                )
        for key, candidates in found.items():
            self._candidates[key] = sorted(candidates, key=lambda candidate: candidate.node_id)
            self._node_files.update((c.node_id, c.file_id) for c in candidates)

    def run(
        self, overlay_refs: list[ReferenceRow], affected: set[str]
    ) -> tuple[list[NewEdge], set[int], dict[int, Place], list[int]]:
        """The overlay's edges, the base references they replace, where those sit, and the base
        files whose imports now point elsewhere."""
        base_refs = self._base.references(
            "key = ANY(%s) AND file_id <> ALL(%s)", sorted(affected), list(self._hidden)
        )
        lines = {row[4]: line for row, line in base_refs}
        pending = [*overlay_refs, *(row for row, _ in base_refs)]
        self._paths.update(self._base.path_names({row[0] for row, _ in base_refs}))
        self._load_candidates(row[3] for row in pending)
        imports = [row for row in pending if row[1] == _IMPORTS]
        import_answers = import_edges(imports, self._paths, self._candidates)
        # A base file whose imports now point elsewhere has all its references resolved again, as
        # the local pass does.
        base_imports = [row for row in imports if row[4] > 0]
        before = self._base.import_targets([row[4] for row in base_imports])
        after: dict[int, set[int]] = defaultdict(set)
        for _, dst, _, _, ref_id in import_answers:
            after[ref_id].add(dst)
        redirected = sorted(
            {row[0] for row in base_imports if before.get(row[4], set()) != after.get(row[4], set())}
        )
        pending_ids = {row[4] for row in pending}
        added = [
            (row, line)
            for row, line in self._base.references("file_id = ANY(%s) AND kind <> 'imports'", redirected)
            if row[4] not in pending_ids
        ]
        lines.update((row[4], line) for row, line in added)
        self._load_candidates(row[3] for row, _ in added)
        names = sorted(
            [*(row for row in pending if row[1] != _IMPORTS), *(row for row, _ in added)],
            key=itemgetter(0, 1, 2, 4),
        )
        uses = name_uses(names, self._paths, self._candidates)
        targets, files = self._imports_of({use.file_id for use, _ in uses}, import_answers, imports)
        sources = {row[5] for row in names}
        source_names = {node_id: node.qualified_name for node_id, node in self._overlay_nodes.items()}
        source_names |= self._base.qualified_names(source for source in sources if source > 0)
        answers: list[EdgeValues] = [
            *import_answers,
            *name_edges(uses, CandidatePools(self._candidates), targets, files, source_names),
        ]
        replaced = {row[4] for row in pending if row[4] > 0} | {row[4] for row, _ in added}
        places = {
            row[4]: Place(self._paths[row[0]], lines[row[4]], row[3])
            for row in [*(row for row, _ in base_refs), *(row for row, _ in added)]
        }
        return (
            [
                NewEdge(EdgeRow(src, dst, kind, confidence), ref_id)
                for src, dst, kind, confidence, ref_id in answers
            ],
            replaced,
            places,
            redirected,
        )

    def _imports_of(
        self, file_ids: set[int], answers: list[EdgeValues], imports: list[ReferenceRow]
    ) -> tuple[dict[int, dict[str, list[int]]], dict[int, set[int]]]:
        """Per file: what each import key points at and the files it points into, the imports
        resolved again counting as they are now."""
        targets: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        files: dict[int, set[int]] = defaultdict(set)
        resolved_again = [row[4] for row in imports if row[4] > 0]
        for file_id, key, dst_id, dst_file in self._base.imports_of(
            sorted(file_id for file_id in file_ids if file_id > 0), resolved_again
        ):
            targets[file_id][key].append(dst_id)
            files[file_id].add(dst_file)
        by_ref = {row[4]: row for row in imports}
        for _, dst_id, _, _, ref_id in answers:
            file_id, _, _, key, _, _ = by_ref[ref_id]
            if file_id in file_ids:
                targets[file_id][key].append(dst_id)
                files[file_id].add(self._node_files[dst_id])
        return targets, files


def _estimated_ranks(
    base: _BaseRows,
    edges: Sequence[NewEdge],
    overlay_nodes: frozenset[int],
    node_count: int,
    shadowed_nodes: Mapping[int, str],
    replaced_refs: set[int],
) -> dict[int, float]:
    """PageRank for the overlay's definitions: store/scores.py's iteration over them alone, with
    every base definition's rank held at the base's value. What a base definition passes on is its
    rank shared over its edges' weights: the base's edges the overlay keeps, and the overlay's."""
    passing: list[tuple[int, int, float]] = []
    for added in edges:
        edge = added.edge
        weight = PAGERANK_EDGE_WEIGHTS[edge.kind] * edge.confidence
        passing.append((edge.src_id, edge.dst_id, weight))
        if edge.kind == _CONTAINS:
            passing.append((edge.dst_id, edge.src_id, weight))
    out_weight: dict[int, float] = defaultdict(float)
    for src, _, weight in passing:
        out_weight[src] += weight
    into = [(src, dst, weight) for src, dst, weight in passing if dst in overlay_nodes]
    base_sources = {src for src, _, _ in into if src not in overlay_nodes}
    for node_id, weight in base.passed_on(base_sources, sorted(shadowed_nodes), replaced_refs).items():
        out_weight[node_id] += weight
    fixed = base.ranks(base_sources)
    teleport = (1.0 - PAGERANK_DAMPING) / max(1, node_count)
    rank = dict.fromkeys(overlay_nodes, teleport)
    for _ in range(PAGERANK_MAX_ITERATIONS):
        updated = dict.fromkeys(overlay_nodes, teleport)
        for src, dst, weight in into:
            source_rank = rank[src] if src in overlay_nodes else fixed.get(src, 0.0)
            updated[dst] += PAGERANK_DAMPING * source_rank * weight / out_weight[src]
        change = sum(abs(updated[node] - rank[node]) for node in overlay_nodes)
        rank = updated
        if change < PAGERANK_TOLERANCE:
            break
    return rank
