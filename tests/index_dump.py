"""A canonical, id-free dump of an index, so two indexes of the same tree can be compared."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
    return IndexDump(sorted(nodes), snapshot.all_refs(), snapshot.all_edges(), scores, search)
