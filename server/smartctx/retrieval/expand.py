"""Stage 2: follow the graph from the seeds, a bounded number of hops.

Each hop adds at most ``hop_frontier_cap`` nodes, the strongest first, and that cap bounds what is
loaded, not only what is expanded further: a hub with ten thousand callers costs one capped hop.
A neighbour is always weaker than the seed that reached it (a distance penalty per hop).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from smartctx.core.model import SymbolKind
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import EdgeRow, NodeRow

# Strength kept per hop, before the edge's own confidence; below 1 so a neighbour never outranks
# the seed that reached it on lexical grounds.
HOP_DECAY = 0.5
# How much each kind of edge says about relevance. Containment (a class and its methods) matters
# less than a call, and a module's containment is not followed at all: it would add every
# definition in the file.
EDGE_KIND_FACTORS: Mapping[str, float] = {
    "calls": 1.0,
    "inherits": 1.0,
    "references": 0.8,
    "imports": 0.5,
    "contains": 0.6,
}


class Reach(NamedTuple):
    """How a node was reached: from which seed, in how many hops, how strongly. A tuple, for the
    same reason as ``ScoredNode``: the expansion makes hundreds."""

    seed: int
    hops: int
    strength: float


@dataclass(frozen=True)
class Expansion:
    reached: dict[int, Reach]
    nodes: dict[int, NodeRow]
    edges: tuple[EdgeRow, ...]


def expand(
    snapshot: IndexReader,
    seeds: Mapping[int, float],
    known: Mapping[int, NodeRow],
    hop_depth: int,
    hop_frontier_cap: int,
) -> Expansion:
    reached = {node_id: Reach(node_id, 0, strength) for node_id, strength in seeds.items()}
    nodes = {node_id: known[node_id] for node_id in seeds if node_id in known}
    missing = [node_id for node_id in seeds if node_id not in nodes]
    nodes.update((node.id, node) for node in snapshot.nodes(missing))
    edges: list[EdgeRow] = []
    frontier = sorted(seeds, key=lambda node_id: (-seeds[node_id], node_id))
    for hop in range(1, hop_depth + 1):
        if not frontier:
            break
        offers: dict[int, Reach] = {}
        hop_edges = snapshot.edges_touching(frontier)
        # The nodes the last hop reached, which are those this one expands from.
        ends = set(frontier)
        for src_id, dst_id, kind, confidence in hop_edges:
            for near, far in ((src_id, dst_id), (dst_id, src_id)):
                if near not in ends or far in reached:
                    continue
                if kind == "contains" and nodes[near].kind is SymbolKind.MODULE:
                    continue
                origin = reached[near]
                strength = origin.strength * HOP_DECAY * confidence * EDGE_KIND_FACTORS.get(kind, 0.5)
                best = offers.get(far)
                if best is None or strength > best.strength:
                    offers[far] = Reach(origin.seed, hop, strength)
        chosen = sorted(offers, key=lambda node_id: (-offers[node_id].strength, node_id))[:hop_frontier_cap]
        loaded = {node.id: node for node in snapshot.nodes(chosen)}
        for node_id in chosen:
            if node_id in loaded:
                reached[node_id] = offers[node_id]
                nodes[node_id] = loaded[node_id]
        edges.extend(e for e in hop_edges if e.src_id in reached and e.dst_id in reached)
        frontier = [node_id for node_id in chosen if node_id in loaded]
    return Expansion(reached, nodes, tuple(sorted(set(edges), key=lambda e: (e.src_id, e.dst_id, e.kind))))
