"""A canonical, id-free dump of an index, so two indexes of the same tree can be compared."""

from __future__ import annotations

import math
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store.index_store import IndexStore
from smartctx.store.snapshot import IndexSnapshot

_WORD = re.compile(r"[a-z0-9]+")
# Enough hits per probe word to return every match in a test workspace.
_SEARCH_LIMIT = 10_000


@dataclass(frozen=True)
class IndexDump:
    nodes: list[tuple[object, ...]]
    refs: list[tuple[str, str, str, str, int, int]]
    edges: list[tuple[str, str, str, str, str, float]]
    scores: dict[tuple[str, str], tuple[float, float]]
    folded: list[tuple[str, str, int, str]]
    # Per probe word: the definitions and the files full-text search finds, with their BM25 scores.
    # Filled only when asked for, since it runs two searches per distinct word of every name.
    search: dict[str, tuple[list[tuple[str, str, float]], list[tuple[str, float]]]] = field(
        default_factory=dict
    )


def dump(snapshot: IndexSnapshot, *, with_search: bool = False) -> IndexDump:
    nodes: list[tuple[object, ...]] = []
    scores: dict[tuple[str, str], tuple[float, float]] = {}
    keys: dict[int, tuple[str, str]] = {}
    for path in snapshot.file_paths():
        for node in snapshot.nodes_in_file(path):
            key = f"{node.qualified_name}@{node.start_line}"
            nodes.append(
                (path, key, node.kind.value, node.end_line, node.signature, node.doc, node.content_hash)
            )
            scores[(path, key)] = (node.pagerank, node.usage)
            keys[node.id] = (path, key)
    search: dict[str, tuple[list[tuple[str, str, float]], list[tuple[str, float]]]] = {}
    if with_search:
        words = {word for path, key, *_ in nodes for word in _WORD.findall(f"{path} {key}".lower())}
        for word in sorted(words):
            hits = sorted(
                (*keys[hit.node_id], round(hit.bm25, 9)) for hit in snapshot.search({word: 1}, _SEARCH_LIMIT)
            )
            files = sorted(
                (path, round(score, 9)) for path, score in snapshot.search_files({word: 1}, _SEARCH_LIMIT)
            )
            search[word] = (hits, files)
    return IndexDump(
        sorted(nodes), snapshot.all_refs(), snapshot.all_edges(), scores, snapshot.all_folded(), search
    )


def fresh_dump(root: Path, index_dir: Path) -> IndexDump:
    """The dump (search included) of an index of ``root`` built from nothing in ``index_dir``."""
    shutil.rmtree(index_dir, ignore_errors=True)
    store = IndexStore(root, index_dir)
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            return dump(snapshot, with_search=True)
    finally:
        store.close()


def assert_same_index(live: IndexDump, fresh: IndexDump) -> None:
    """Row for row the same index and the same search answers; graph scores equal up to
    floating-point noise."""
    assert live.nodes == fresh.nodes
    assert live.refs == fresh.refs
    assert live.edges == fresh.edges
    assert live.folded == fresh.folded
    assert live.search == fresh.search
    assert live.scores.keys() == fresh.scores.keys()
    for key, (rank, use) in live.scores.items():
        fresh_rank, fresh_use = fresh.scores[key]
        assert math.isclose(rank, fresh_rank, rel_tol=1e-6, abs_tol=1e-12), key
        assert math.isclose(use, fresh_use, rel_tol=1e-9, abs_tol=1e-12), key
