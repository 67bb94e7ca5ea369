"""Stage 4: choose which ranked items become bodies and which summaries.

The ranked list is capped; no single file may take every body slot; a symbol the task names
verbatim gets a body slot even when it ranks lower; an item inside a chosen body is not repeated.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from heapq import heapify, heappop, heappush

from smartctx.core.model import SymbolKind
from smartctx.retrieval.score import ScoredNode

# The file that matches best usually holds the fix, often in its third-best definition; the cap is
# always one below maxBodies, so another file keeps at least one body slot.
MAX_BODIES_PER_FILE = 3
# A class (or struct, interface …) longer than this is shown by signature, not as a body: its whole
# text would be cut to fit anyway, and the methods that matter can take the body slots. A shorter
# one is worth its slot, since every method in it comes in full.
MAX_CONTAINER_BODY_LINES = 200
_CONTAINERS = frozenset(
    {
        SymbolKind.CLASS,
        SymbolKind.STRUCT,
        SymbolKind.INTERFACE,
        SymbolKind.TRAIT,
        SymbolKind.ENUM,
        SymbolKind.MODULE,
    }
)
# Each further summary from a file already shown counts this much less, so summaries spread over
# files (a pack that names the right file at all beats one that lists ten of the wrong file's tests).
SAME_FILE_SUMMARY_DECAY = 0.6


@dataclass(frozen=True)
class Selection:
    bodies: tuple[ScoredNode, ...]
    summaries: tuple[ScoredNode, ...]


def diversify(
    ranked: Sequence[ScoredNode],
    ranked_cap: int,
    max_bodies: int,
    max_summaries: int,
    named: frozenset[int],
) -> Selection:
    capped = list(ranked[:ranked_cap])
    best_named = next((item for item in ranked if item.node.id in named and _body_worthy(item)), None)
    if best_named is not None and best_named not in capped:
        capped.append(best_named)
    bodies: list[ScoredNode] = []
    # Chosen bodies by file: overlap and containment are only possible within one file.
    bodies_in: defaultdict[str, list[ScoredNode]] = defaultdict(list)
    per_file_cap = max(1, min(MAX_BODIES_PER_FILE, max_bodies - 1))

    def take_body(item: ScoredNode) -> None:
        bodies.append(item)
        bodies_in[item.node.path].append(item)

    if best_named is not None and max_bodies > 0:
        take_body(best_named)
    for item in capped:
        if len(bodies) >= max_bodies:
            break
        same_file = bodies_in[item.node.path]
        if len(same_file) >= per_file_cap or not _body_worthy(item):
            continue
        # Overlapping includes being the same item as a chosen body.
        if any(_overlaps(item, body) for body in same_file):
            continue
        take_body(item)
    bodies.sort(key=lambda item: (-item.score, item.node.id))
    # Inside a body includes being that body. A second definition of a name already summarised
    # (a property's setter, an overload) would repeat its signature, so it gives way to the next.
    named_in_file = {(item.node.path, item.node.qualified_name) for item in bodies}
    rest = [item for item in capped if not any(_inside(item, body) for body in bodies_in[item.node.path])]
    summaries: list[ScoredNode] = []
    shown: Counter[str] = Counter(item.node.path for item in bodies)
    # The best discounted score first, ties to the higher-ranked item. The heap keeps each item's
    # discount from when it was pushed; discounts only grow, so an item whose file has been shown
    # since is pushed back with its current value when it comes up, and the first current one wins.
    heap = [(-_discounted(item, shown), index, shown[item.node.path]) for index, item in enumerate(rest)]
    heapify(heap)
    while heap and len(summaries) < max_summaries:
        _, index, seen = heappop(heap)
        chosen = rest[index]
        if seen != shown[chosen.node.path]:
            heappush(heap, (-_discounted(chosen, shown), index, shown[chosen.node.path]))
            continue
        key = (chosen.node.path, chosen.node.qualified_name)
        if key in named_in_file:
            continue
        named_in_file.add(key)
        summaries.append(chosen)
        shown[chosen.node.path] += 1
    summaries.sort(key=lambda item: (-item.score, item.node.id))
    return Selection(tuple(bodies), tuple(summaries))


def _discounted(item: ScoredNode, shown: Counter[str]) -> float:
    return item.score * SAME_FILE_SUMMARY_DECAY ** shown[item.node.path]


def _body_worthy(item: ScoredNode) -> bool:
    node = item.node
    return node.kind not in _CONTAINERS or node.end_line - node.start_line < MAX_CONTAINER_BODY_LINES


def _inside(item: ScoredNode, outer: ScoredNode) -> bool:
    a, b = item.node, outer.node
    return a.path == b.path and b.start_line <= a.start_line and a.end_line <= b.end_line


def _overlaps(item: ScoredNode, other: ScoredNode) -> bool:
    a, b = item.node, other.node
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line
