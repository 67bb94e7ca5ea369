"""A canonical, id-free dump of an index, so two indexes of the same tree can be compared."""

from __future__ import annotations

from dataclasses import dataclass

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
