"""Stage 3: one score per candidate, from named signals, each explaining its share.

The base is the seed recipe, 0.5 BM25 + 0.3 PageRank + 0.2 usage, each normalised over the
candidate set. Added to it: whole-file lexical evidence, exact mentions in the task (a name, a stack
frame, a file path) and the editor's focus (``focus.py``: a personalised PageRank from the editor's
files, scaled by each candidate's score before it). Every part is kept in ``parts`` so a pack can say
why each item is there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from smartctx.core.model import SymbolKind
from smartctx.retrieval.expand import Expansion
from smartctx.retrieval.focus import FocusRank
from smartctx.retrieval.query import is_test_path
from smartctx.retrieval.search import SearchResult
from smartctx.store.snapshot import NodeRow

BM25_WEIGHT = 0.5
PAGERANK_WEIGHT = 0.3
USAGE_WEIGHT = 0.2
# Whole-file lexical evidence: the task's words spread over a file's definitions.
FILE_WEIGHT = 2.0
# The task names the symbol verbatim, a stack frame sits in it, or it is in a file the task names.
NAMED_WEIGHT = 0.6
# A dotted mention (``QuerySet.bulk_create``) names one definition more precisely than a bare name.
NAMED_EXACTLY_WEIGHT = 0.4
FRAME_WEIGHT = 1.2
MENTIONED_FILE_WEIGHT = 0.3
# Tests match a bug report's words as well as the code under test does; unless the task is about
# tests, the code comes first.
TEST_FILE_FACTOR = 0.4


@dataclass(frozen=True)
class ScoredNode:
    node: NodeRow
    score: float
    parts: dict[str, float]


def score(
    search: SearchResult, expansion: Expansion, focus: FocusRank, tests_wanted: bool
) -> list[ScoredNode]:
    """Score every reached node that can be packed (not module nodes), best first, ties by id."""
    candidates = [node for node in expansion.nodes.values() if node.kind is not SymbolKind.MODULE]
    if not candidates:
        return []
    lexical = {
        node.id: search.lexical.get(node.id, expansion.reached[node.id].strength) for node in candidates
    }
    top_lexical = max(lexical.values()) or 1.0
    top_rank = max(node.pagerank for node in candidates) or 1.0
    top_usage = max(math.log1p(node.usage) for node in candidates) or 1.0
    top_file = max(search.file_evidence.values(), default=0.0) or 1.0
    task_parts: list[tuple[NodeRow, dict[str, float]]] = []
    for node in candidates:
        parts = {
            "bm25": BM25_WEIGHT * lexical[node.id] / top_lexical,
            "pagerank": PAGERANK_WEIGHT * node.pagerank / top_rank,
            "usage": USAGE_WEIGHT * math.log1p(node.usage) / top_usage,
            "file": FILE_WEIGHT * search.file_evidence.get(node.path, 0.0) / top_file,
        }
        if node.id in search.named:
            parts["named"] = NAMED_WEIGHT
        if node.id in search.named_exactly:
            parts["namedExactly"] = NAMED_EXACTLY_WEIGHT
        if node.id in search.framed:
            parts["frame"] = FRAME_WEIGHT
        if node.path in search.mentioned_files:
            parts["mentionedFile"] = MENTIONED_FILE_WEIGHT
        task_parts.append((node, parts))
    # Focus scales with the task's own score of each node, so it settles what the task leaves close
    # and never lifts a node the task is not about over one it is.
    focused = focus.parts([(node, sum(parts.values())) for node, parts in task_parts])
    scored: list[ScoredNode] = []
    for node, parts in task_parts:
        parts.update(focused.get(node.id, {}))
        total = sum(parts.values())
        reach = expansion.reached[node.id]
        if reach.hops:
            parts["hops"] = float(reach.hops)
        if not tests_wanted and is_test_path(node.path):
            parts["testFactor"] = TEST_FILE_FACTOR
            total *= TEST_FILE_FACTOR
        scored.append(ScoredNode(node, total, parts))
    scored.sort(key=lambda item: (-item.score, item.node.path, item.node.start_line, item.node.id))
    return scored
