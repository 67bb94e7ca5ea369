"""A published base with a local overlay read as one index: every query of store/reader.py.

The base answers for every file the overlay does not shadow, the overlay (overlay.py) for the rest,
and each query merges the two as a local index of the whole tree would answer it:

* **Rows** (definitions, files, folded names) of a shadowed file are left out of the base's answers;
  the overlay's rows carry negative ids, so an id says which side to ask.
* **Edges** are the base's but those the overlay hides (:class:`~smartctx.team.base_snapshot.Hidden`),
  plus the overlay's: its own, and those of the base references it resolved again.
* **Lexical search** scores base and overlay documents with the statistics of the merged corpus:
  the number of documents, their average length and each term's document frequency are the base's
  less the shadowed documents', plus the overlay's, so a document scores as in a local index of the
  tree (team/lexical.py's BM25, tantivy's).

Ties between equal scores are broken by id, as in a local index, but ids are not a local index's:
two documents of exactly equal score may come in another order.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from types import TracebackType
from typing import Generic, TypeVar

import numpy as np

from smartctx.core.model import USE_EDGE_KINDS, RefKind, SymbolKind
from smartctx.store.past_commits import CommitPostings
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
    paths_by_file_name,
    paths_with_suffix,
)
from smartctx.team import lexical
from smartctx.team.base_snapshot import BaseSnapshot, Counts
from smartctx.team.lexical import Corpus, IntArray, ListsTable
from smartctx.team.overlay import NewEdge, Overlay, Place
from smartctx.team.postings import Document

Key = TypeVar("Key", int, str)

_CONTAINS = RefKind.CONTAINS.value


class PreparedOverlay:
    """An overlay with the lookups every read of it asks, built once: a server reads one overlay
    for many requests."""

    def __init__(self, overlay: Overlay) -> None:
        self.overlay = overlay
        self.by_name: dict[str, list[NodeRow]] = defaultdict(list)
        self.by_path: dict[str, list[NodeRow]] = defaultdict(list)
        for node in sorted(overlay.nodes.values(), key=lambda node: node.id):
            self.by_name[node.name].append(node)
            self.by_path[node.path].append(node)
        self.out: dict[int, list[NewEdge]] = defaultdict(list)
        self.into: dict[int, list[NewEdge]] = defaultdict(list)
        self.by_ref: dict[int, list[NewEdge]] = defaultdict(list)
        for added in overlay.edges:
            self.out[added.edge.src_id].append(added)
            self.into[added.edge.dst_id].append(added)
            if added.ref_id is not None:
                self.by_ref[added.ref_id].append(added)
        self.refs_at: dict[Place, list[int]] = defaultdict(list)
        for ref_id, place in overlay.places.items():
            self.refs_at[place].append(ref_id)
        self.symbols: _Side[int] = _side(
            lexical.SYMBOL_LISTS,
            0,
            overlay.symbol_documents,
            overlay.shadowed_nodes,
            overlay.shadowed_symbol_words,
        )
        self.files: _Side[str] = _side(
            lexical.FILE_LISTS,
            1,
            overlay.file_documents,
            overlay.shadowed_file_ids,
            overlay.shadowed_file_words,
        )
        # The merged tree's paths, once a read has listed them (the base's never change).
        self.paths: list[str] | None = None
        # What the base's rows the overlay hides count, once statistics were asked.
        self.hidden: Counts | None = None
        self.paths_by_name: dict[str, list[str]] | None = None


class MergedReader:
    """Read-only queries over a base snapshot with an overlay laid on it. Closing it closes the
    base snapshot."""

    def __init__(self, base: BaseSnapshot, prepared: PreparedOverlay) -> None:
        """``base`` must hide what the overlay hides (``BaseSnapshot(…, hidden=overlay.hides())``)."""
        overlay = prepared.overlay
        self._base = base
        self._prepared = prepared
        self._overlay = overlay
        self._shadowed = overlay.shadowed_paths
        self._by_name, self._by_path = prepared.by_name, prepared.by_path
        self._out, self._in, self._by_ref = prepared.out, prepared.into, prepared.by_ref
        self._refs_at = prepared.refs_at
        self._symbols, self._files = prepared.symbols, prepared.files

    def __enter__(self) -> MergedReader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._base.close()

    # Rows

    def _visible(self, nodes: Iterable[NodeRow]) -> list[NodeRow]:
        """The base's rows but those of shadowed files, with their usage as the overlay moved it."""
        change = self._overlay.usage_change
        return [
            node._replace(usage=node.usage + change[node.id]) if node.id in change else node
            for node in nodes
            if node.path not in self._shadowed
        ]

    def meta(self, key: str) -> str | None:
        return self._base.meta(key)

    def stats(self) -> IndexStats:
        base = self._base.stats()
        overlay = self._overlay
        hidden = self._prepared.hidden
        if hidden is None:
            hidden = self._base.hidden_counts(
                overlay.shadowed_file_ids, tuple(overlay.shadowed_nodes), overlay.replaced_refs
            )
            self._prepared.hidden = hidden
        own = overlay.counts
        languages = Counter(base.files_by_language)
        languages.subtract(hidden.files_by_language)
        languages.update(own.files_by_language)
        return replace(
            base,
            files=self.stats_files(),
            nodes=self.row_count(),
            edges=base.edges - hidden.edges + own.edges,
            references=base.references - hidden.references + own.references,
            unresolved_references=base.unresolved_references
            - hidden.unresolved_references
            + own.unresolved_references,
            files_by_language={language: count for language, count in sorted(languages.items()) if count},
            files_with_errors=base.files_with_errors - hidden.files_with_errors + own.files_with_errors,
            folded_definitions=base.folded_definitions - hidden.folded_definitions + own.folded_definitions,
        )

    def stats_files(self) -> int:
        return len(self.file_paths())

    def file_paths(self) -> list[str]:
        if self._prepared.paths is None:
            kept = (path for path in self._base.file_paths() if path not in self._shadowed)
            self._prepared.paths = sorted([*kept, *self._overlay.files])
        return self._prepared.paths

    def nodes(self, node_ids: Iterable[int]) -> list[NodeRow]:
        ids = set(node_ids)
        own = [self._overlay.nodes[node_id] for node_id in ids if node_id in self._overlay.nodes]
        return sorted([*own, *self._visible(self._base.nodes(i for i in ids if i > 0))], key=lambda n: n.id)

    def nodes_with_names(self, names: Iterable[str]) -> dict[str, list[NodeRow]]:
        wanted = set(names)
        found = {name: self._visible(nodes) for name, nodes in self._base.nodes_with_names(wanted).items()}
        for name in wanted:
            if name in self._by_name:
                found[name] = [*self._by_name[name], *found.get(name, [])]
        return {name: nodes for name, nodes in sorted(found.items()) if nodes}

    def definition_counts(self, names: Iterable[str]) -> dict[str, int]:
        wanted = set(names)
        counts = Counter(self._base.definition_counts(wanted))
        counts.subtract({name: self._overlay.shadowed_definitions[name] for name in wanted})
        for name in wanted:
            counts[name] += sum(1 for n in self._by_name.get(name, ()) if n.kind is not SymbolKind.MODULE)
        return {name: count for name, count in sorted(counts.items()) if count}

    def nodes_named_within(self, name: str, qualified_suffix: str) -> list[NodeRow]:
        own = [node for node in self._by_name.get(name, ()) if node.qualified_name.endswith(qualified_suffix)]
        return [*own, *self._visible(self._base.nodes_named_within(name, qualified_suffix))]

    def module_ids(self, paths: Iterable[str]) -> dict[str, int]:
        wanted = set(paths)
        found = self._base.module_ids(path for path in wanted if path not in self._shadowed)
        for path in wanted & self._overlay.files.keys():
            found.update((path, node.id) for node in self._by_path[path] if node.kind is SymbolKind.MODULE)
        return found

    def paths_of(self, node_ids: Iterable[int]) -> dict[int, str]:
        ids = set(node_ids)
        found = {
            node_id: path
            for node_id, path in self._base.paths_of(i for i in ids if i > 0).items()
            if path not in self._shadowed
        }
        found.update((i, self._overlay.nodes[i].path) for i in ids if i in self._overlay.nodes)
        return found

    def innermost_node_at(self, path: str, line: int) -> NodeRow | None:
        if self._overlaid(path):
            around = [
                node for node in self._by_path.get(path, ()) if node.start_line <= line <= node.end_line
            ]
            return min(
                around,
                key=lambda n: (n.end_line - n.start_line, n.kind is SymbolKind.MODULE, n.id),
                default=None,
            )
        return next(
            iter(self._visible([found] if (found := self._base.innermost_node_at(path, line)) else [])), None
        )

    def definitions_named(self, path: str, name: str) -> list[NodeRow]:
        if self._overlaid(path):
            return self._overlay_nodes(path, lambda node: node.name == name)
        return self._visible(self._base.definitions_named(path, name))

    def nodes_at(self, path: str, qualified_name: str) -> list[NodeRow]:
        if self._overlaid(path):
            return self._overlay_nodes(path, lambda node: node.qualified_name == qualified_name)
        return self._visible(self._base.nodes_at(path, qualified_name))

    def _overlaid(self, path: str) -> bool:
        """Whether the overlay answers for ``path`` (a file of the branch's, or one it hides)."""
        return path in self._shadowed or path in self._overlay.files

    def _overlay_nodes(self, path: str, wanted: Callable[[NodeRow], bool]) -> list[NodeRow]:
        """The overlay's definitions in ``path`` that ``wanted`` keeps, first in the file first."""
        return sorted(
            (node for node in self._by_path.get(path, ()) if wanted(node)),
            key=lambda node: (node.start_line, node.id),
        )

    def paths_ending_with(self, suffix: str) -> list[str]:
        if self._prepared.paths_by_name is None:
            self._prepared.paths_by_name = paths_by_file_name(self.file_paths())
        return paths_with_suffix(self._prepared.paths_by_name, suffix)

    def top_definitions(self, paths: Iterable[str], per_file: int) -> dict[str, list[NodeRow]]:
        wanted = set(paths)
        found = {
            path: self._visible(nodes)
            for path, nodes in self._base.top_definitions(wanted - self._shadowed, per_file).items()
        }
        for path in sorted(wanted & self._overlay.files.keys()):
            ranked = sorted(
                (node for node in self._by_path[path] if node.kind is not SymbolKind.MODULE),
                key=lambda node: (-node.pagerank, node.start_line, node.id),
            )[: max(0, per_file)]
            if ranked:
                found[path] = ranked
        return dict(sorted(found.items()))

    def past_commit_postings(self, words: Iterable[str]) -> CommitPostings:
        return self._base.past_commit_postings(words)

    def past_commit_paths(self, commit_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
        return self._base.past_commit_paths(commit_ids)

    def folded_named(self, names: Iterable[str]) -> list[tuple[str, int, NodeRow]]:
        wanted = set(names)
        found = [
            (name, line, holder)
            for name, line, holder in self._base.folded_named(wanted)
            if holder.path not in self._shadowed
        ]
        found.extend(
            (name, line, self._overlay.nodes[holder])
            for name, line, holder in self._overlay.folded
            if name in wanted
        )
        return sorted(found, key=lambda folded: (folded[2].path, folded[1], folded[0]))

    # Edges

    def _added(self, by_end: Mapping[int, list[NewEdge]], node_ids: Iterable[int]) -> list[NewEdge]:
        """The overlay's edges out of (``self._out``) or into (``self._in``) any of these nodes."""
        return [added for node_id in set(node_ids) for added in by_end.get(node_id, ())]

    def edges_touching(self, node_ids: Sequence[int]) -> list[EdgeRow]:
        found = set(self._base.edges_touching([i for i in node_ids if i > 0]))
        found.update(
            added.edge for added in [*self._added(self._out, node_ids), *self._added(self._in, node_ids)]
        )
        return sorted(found, key=lambda edge: (edge.src_id, edge.dst_id, edge.kind))

    def neighbours(self, node_id: int, limit: int) -> list[Neighbour]:
        base_out, base_in = self._base.neighbour_halves(node_id, limit) if node_id > 0 else ([], [])
        added_out = sorted(
            (a.edge for a in self._out.get(node_id, ()) if a.edge.kind != _CONTAINS),
            key=lambda edge: (edge.dst_id, edge.kind),
        )
        added_in = sorted(
            (a.edge for a in self._in.get(node_id, ())), key=lambda edge: (edge.src_id, edge.kind)
        )
        others = self.nodes({edge.dst_id for edge in added_out} | {edge.src_id for edge in added_in})
        where = {node.id: (node.path, int(node.kind is SymbolKind.MODULE)) for node in others}
        # Each half by the other end's id, as the base lists its own: the overlay's first.
        merged_out = [
            Neighbour(edge.dst_id, edge.kind, edge.confidence, *where.get(edge.dst_id, (None, 0)))
            for edge in added_out
        ] + base_out
        merged_in = [
            Neighbour(edge.src_id, edge.kind, edge.confidence, *where.get(edge.src_id, (None, 0)))
            for edge in added_in
        ] + base_in
        by_end = itemgetter(0, 1)
        return sorted(merged_out, key=by_end)[:limit] + sorted(merged_in, key=by_end)[:limit]

    def incoming_edges(self, node_ids: Sequence[int], limit: int) -> tuple[list[EdgeRow], bool]:
        base, base_complete = self._base.incoming_edges([i for i in node_ids if i > 0], limit)
        strongest: dict[tuple[int, int, str], float] = {}
        for edge in [*base, *(a.edge for a in self._added(self._in, node_ids))]:
            if edge.kind == _CONTAINS:
                continue
            key = (edge.dst_id, edge.src_id, edge.kind)
            strongest[key] = max(strongest.get(key, edge.confidence), edge.confidence)
        found = [
            EdgeRow(src, dst, kind, confidence) for (dst, src, kind), confidence in sorted(strongest.items())
        ]
        return (found[:limit], False) if len(found) > limit else (found, base_complete)

    def children(self, node_ids: Sequence[int]) -> list[int]:
        own = [a.edge.dst_id for a in self._added(self._out, node_ids) if a.edge.kind == _CONTAINS]
        return sorted([*own, *self._base.children([i for i in node_ids if i > 0])])

    def reference_targets(self, path: str, line: int, key: str) -> list[NodeRow]:
        strongest: dict[int, float] = {}
        if not self._overlaid(path):
            for confidence, node in self._base.reference_answers(path, line, key):
                strongest[node.id] = confidence
        for ref_id in self._refs_at.get(Place(path, line, key), ()):
            for added in self._by_ref.get(ref_id, ()):
                dst = added.edge.dst_id
                strongest[dst] = max(strongest.get(dst, added.edge.confidence), added.edge.confidence)
        nodes = {node.id: node for node in self.nodes(strongest)}
        return [nodes[i] for i in sorted(strongest, key=lambda i: (-strongest[i], i)) if i in nodes]

    def uses_of(self, node_id: int, top: int) -> Uses:
        count, paths, ranked = self._base.ranked_uses(node_id, top) if node_id > 0 else (0, set(), [])
        added = [
            (a.edge.src_id, self._overlay.places[a.ref_id])
            for a in self._in.get(node_id, ())
            if a.edge.kind in USE_EDGE_KINDS and a.ref_id is not None
        ]
        sources = {node.id: node for node in self.nodes(src for src, _ in added)}
        for src, place in added:
            source = sources[src]
            count += 1
            paths.add(source.path)
            ranked.append((source.pagerank, Use(source.path, place.line, source.qualified_name)))
        best = heapq.nsmallest(top, ranked, key=lambda found: (-found[0], found[1].path, found[1].line))
        return Uses(count, len(paths), tuple(use for _, use in best))

    # Lexical search

    def row_count(self) -> int:
        return self._base.row_count() - len(self._overlay.shadowed_nodes) + len(self._overlay.nodes)

    def common_cutoff(self) -> int:
        return common_cutoff_for(self.row_count())

    def document_counts(self, terms: Iterable[str], at_most: int) -> dict[str, int]:
        wanted = set(terms)
        if at_most <= 0 or not wanted:
            return {}
        # The base's own count, stopped where the shadowed definitions can no longer bring it under
        # ``at_most``: such a term is in ``at_most`` or more documents of the merged corpus. Only
        # the others are counted in full, the shadowed ones left out; counting every posting of a
        # common word ("self") was most of a django request's time otherwise.
        enough = at_most + len(self._symbols.hidden)
        common = {
            term for term, count in self._base.document_counts(wanted, enough).items() if count >= enough
        }
        counts = self._frequencies(self._symbols, wanted - common) | dict.fromkeys(common, at_most)
        return {term: min(at_most, count) for term, count in sorted(counts.items()) if count}

    def _frequencies(self, side: _Side[Key], terms: Iterable[str]) -> dict[str, int]:
        """How many documents of the merged corpus hold each term (memoised: a request counts its
        terms to choose them, then to weigh them)."""
        wanted = set(terms) - side.counted.keys()
        if wanted:
            found = {term: len(side.by_term.get(term, ())) for term in wanted}
            for term, (total, among) in self._base.term_frequencies(side.lists, wanted, side.hidden).items():
                found[term] += total - among
            side.counted.update(found)
        return {term: side.counted[term] for term in set(terms)}

    def _weights(self, side: _Side[Key], terms: Mapping[str, float]) -> tuple[dict[str, float], float]:
        """Each term's BM25 weight (boost * idf * (1 + K1)) in the merged corpus, and its average
        document length."""
        base = self._base.corpora()[side.corpus]
        corpus = Corpus(
            base.documents - len(side.hidden) + side.documents, base.words - side.hidden_words + side.words
        )
        if not corpus.words:
            return {}, 0.0
        frequencies = self._frequencies(side, terms)
        weights = {
            term: boost * lexical.idf(corpus.documents, frequencies[term]) * (1 + lexical.K1)
            for term, boost in terms.items()
            if frequencies[term]
        }
        return weights, corpus.average_length

    def _top(
        self,
        side: _Side[Key],
        terms: Mapping[str, float],
        limit: int,
        keys_of: Callable[[list[int]], Mapping[int, Key]],
    ) -> list[tuple[Key, float]]:
        """The ``limit`` best documents of base and overlay, best first, ties by key: the base's by
        ``keys_of`` their ids, the overlay's by their own keys."""
        weights, average = self._weights(side, terms)
        if limit <= 0 or not weights:
            return []
        base = self._base.top_weighted(side.lists, weights, average, side.hidden, limit)
        keys = keys_of([row_id for row_id, _ in base])
        scores: dict[Key, float] = defaultdict(float)
        for term, weight in weights.items():
            for key, frequency, norm in side.by_term.get(term, ()):
                scores[key] += lexical.bm25(weight, frequency, norm, average)
        hits = [(keys[row_id], score) for row_id, score in base] + list(scores.items())
        hits.sort(key=lambda hit: (-_rounded(hit[1]), hit[0]))
        return hits[:limit]

    def search(self, weighted_terms: Mapping[str, float], limit: int) -> list[SearchHit]:
        terms = chosen_terms(weighted_terms, False, self.common_cutoff(), self.document_counts)
        hits = self._top(
            self._symbols, terms, limit, lambda node_ids: {node_id: node_id for node_id in node_ids}
        )
        return [SearchHit(node_id, score) for node_id, score in hits]

    def search_files(self, weighted_terms: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
        terms = chosen_terms(weighted_terms, True, self.common_cutoff(), self.document_counts)
        hits = self._top(self._files, terms, limit, self._base.paths_by_file_id)
        return sorted(hits, key=lambda hit: (-hit[1], hit[0]))


def _rounded(score: float) -> int:
    """A score as its ties are told (team/lexical.py's SCORE_PLACES)."""
    return round(score * 10.0**lexical.SCORE_PLACES)


@dataclass(frozen=True)
class _Side(Generic[Key]):
    """One kind of the overlay's documents (definitions or files) for lexical search: by term, each
    document holding it with the term's frequency and the document's norm; and what the base's
    shadowed documents of that kind count."""

    lists: ListsTable
    # Which of the base's corpora (BaseSnapshot.corpora) the kind is.
    corpus: int
    by_term: dict[str, list[tuple[Key, int, int]]]
    documents: int
    words: int
    # The base's documents the overlay shadows, by id, sorted.
    hidden: IntArray
    hidden_words: int
    # Document frequencies in the merged corpus, by term, as counted so far.
    counted: dict[str, int] = field(default_factory=dict)


def _side(
    lists: ListsTable,
    corpus: int,
    documents: Mapping[Key, Document],
    hidden: Iterable[int],
    hidden_words: int,
) -> _Side[Key]:
    by_term: dict[str, list[tuple[Key, int, int]]] = defaultdict(list)
    for key, document in documents.items():
        for term, frequency in document.frequencies.items():
            by_term[term].append((key, frequency, document.norm))
    words = sum(document.length for document in documents.values())
    shadowed = np.array(sorted(hidden), dtype=np.int32)
    return _Side(lists, corpus, dict(by_term), len(documents), words, shadowed, hidden_words)
