"""What depends on a definition: its callers, subclasses, type users, importers and other
references, found by walking the index's edges backwards (issue #5).

A pure function over a read-only snapshot. The walk is bounded three ways, so a hub such as a
base class used everywhere cannot blow up the answer: by depth, by the incoming edges read per
hop, and by the dependents kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from smartctx.core.history import IMPACT_GROUPS
from smartctx.core.model import SymbolKind
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import EdgeRow, NodeRow

# Incoming edges read per hop. A hub's first edges (by stable id) are kept and the answer says it
# was capped, instead of loading thousands of rows.
MAX_EDGES_PER_HOP = 1000
# Dependents kept at one depth before going a hop further; deeper hops start from these only.
MAX_FRONTIER_PER_HOP = 200
# Dependents returned in all: enough to judge a change's reach, few enough to read.
MAX_DEPENDENTS = 60

# The group each edge kind puts a dependent in; "references" to a type are "typeUsers".
_GROUP_OF_KIND = {"calls": "callers", "inherits": "subclasses", "imports": "importers"}
_TYPE_KINDS = frozenset(
    {
        SymbolKind.CLASS,
        SymbolKind.STRUCT,
        SymbolKind.INTERFACE,
        SymbolKind.ENUM,
        SymbolKind.TRAIT,
        SymbolKind.TYPE,
    }
)
_GROUP_ORDER = {group: index for index, group in enumerate(IMPACT_GROUPS)}


@dataclass(frozen=True, slots=True)
class Dependent:
    node: NodeRow
    group: str
    depth: int
    # The definition it depends on: the target, one of its members, or a dependent one hop closer.
    via: NodeRow
    confidence: float


@dataclass(frozen=True, slots=True)
class Impact:
    target: NodeRow
    dependents: tuple[Dependent, ...]
    # Every dependent reached, before MAX_DEPENDENTS; with ``truncated`` also a hub's edges were cut.
    found: int
    truncated: bool


def impact(snapshot: IndexReader, target: NodeRow, depth: int) -> Impact:
    """Reverse dependencies of ``target`` (and of its direct members: a class's methods), up to
    ``depth`` hops, sorted by (depth, group, path, line, name)."""
    members = snapshot.nodes(snapshot.children([target.id]))
    inside = {target.id: target} | {node.id: node for node in members if _within(node, target)}
    reached: dict[int, Dependent] = {}
    frontier: dict[int, NodeRow] = dict(inside)
    truncated = False
    for hop in range(1, depth + 1):
        if not frontier:
            break
        edges, complete = snapshot.incoming_edges(sorted(frontier), MAX_EDGES_PER_HOP)
        truncated = truncated or not complete
        best: dict[int, EdgeRow] = {}
        for edge in edges:
            if edge.src_id in inside or edge.src_id in reached:
                continue
            current = best.get(edge.src_id)
            if current is None or _edge_rank(edge, frontier) < _edge_rank(current, frontier):
                best[edge.src_id] = edge
        sources = {node.id: node for node in snapshot.nodes(best)}
        found = [
            Dependent(
                node=sources[source_id],
                group=_group(edge.kind, frontier[edge.dst_id]),
                depth=hop,
                via=frontier[edge.dst_id],
                confidence=round(edge.confidence, 6),
            )
            for source_id, edge in best.items()
            if source_id in sources and not _within(sources[source_id], target)
        ]
        found.sort(key=_order)
        reached.update((dependent.node.id, dependent) for dependent in found)
        if len(found) > MAX_FRONTIER_PER_HOP:
            truncated = True
        frontier = {dependent.node.id: dependent.node for dependent in found[:MAX_FRONTIER_PER_HOP]}
    ordered = sorted(reached.values(), key=_order)
    return Impact(
        target=target,
        dependents=tuple(ordered[:MAX_DEPENDENTS]),
        found=len(ordered),
        truncated=truncated or len(ordered) > MAX_DEPENDENTS,
    )


def _within(node: NodeRow, target: NodeRow) -> bool:
    """Whether ``node`` lies inside ``target``'s span (a method of the class, a nested helper)."""
    return (
        node.path == target.path
        and target.start_line <= node.start_line
        and node.end_line <= target.end_line
        and node.id != target.id
    ) or node.id == target.id


def _group(kind: str, depended_on: NodeRow) -> str:
    if kind in _GROUP_OF_KIND:
        return _GROUP_OF_KIND[kind]
    return "typeUsers" if depended_on.kind in _TYPE_KINDS else "references"


def _edge_rank(edge: EdgeRow, frontier: dict[int, NodeRow]) -> tuple[int, float, int]:
    """Which of several edges from one source explains it best: the earlier group, then the more
    confident edge, then the lower target id (for a stable answer)."""
    return (_GROUP_ORDER[_group(edge.kind, frontier[edge.dst_id])], -edge.confidence, edge.dst_id)


def _order(dependent: Dependent) -> tuple[int, int, str, int, str, int]:
    node = dependent.node
    return (
        dependent.depth,
        _GROUP_ORDER[dependent.group],
        node.path,
        node.start_line,
        node.qualified_name,
        node.id,
    )
