"""A canonical, id-free dump of an index, so two indexes of the same tree can be compared."""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path

from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store.index_store import IndexStore
from smartctx.store.snapshot import IndexSnapshot


@dataclass(frozen=True)
class IndexDump:
    nodes: list[tuple[object, ...]]
    refs: list[tuple[str, str, str, str, int, int]]
    edges: list[tuple[str, str, str, str, str, float]]
    scores: dict[tuple[str, str], tuple[float, float]]


def dump(snapshot: IndexSnapshot) -> IndexDump:
    nodes: list[tuple[object, ...]] = []
    scores: dict[tuple[str, str], tuple[float, float]] = {}
    for path in snapshot.file_paths():
        for node in snapshot.nodes_in_file(path):
            key = f"{node.qualified_name}@{node.start_line}"
            nodes.append(
                (path, key, node.kind.value, node.end_line, node.signature, node.doc, node.content_hash)
            )
            scores[(path, key)] = (node.pagerank, node.usage)
    return IndexDump(sorted(nodes), snapshot.all_refs(), snapshot.all_edges(), scores)


def fresh_dump(root: Path, index_dir: Path) -> IndexDump:
    """The dump of an index of ``root`` built from nothing in ``index_dir`` (emptied first)."""
    shutil.rmtree(index_dir, ignore_errors=True)
    store = IndexStore(root, index_dir)
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            return dump(snapshot)
    finally:
        store.close()


def assert_same_index(live: IndexDump, fresh: IndexDump) -> None:
    """Row for row the same index; graph scores equal up to floating-point noise."""
    assert live.nodes == fresh.nodes
    assert live.refs == fresh.refs
    assert live.edges == fresh.edges
    assert live.scores.keys() == fresh.scores.keys()
    for key, (rank, use) in live.scores.items():
        fresh_rank, fresh_use = fresh.scores[key]
        assert math.isclose(rank, fresh_rank, rel_tol=1e-6, abs_tol=1e-12), key
        assert math.isclose(use, fresh_use, rel_tol=1e-9, abs_tol=1e-12), key
