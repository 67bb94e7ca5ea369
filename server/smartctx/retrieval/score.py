"""Stage 3: one score per candidate, from named signals, each explaining its share.

The base is the seed recipe, 0.5 BM25 + 0.3 PageRank + 0.2 usage, each normalised over the
candidate set. Added to it: whole-file lexical evidence, exact mentions in the task (a name, a stack
frame, a file path), the editor's focus (``focus.py``: a personalised PageRank from the editor's
files, scaled by each candidate's score before it), and the votes of matching tests. A file that is not the
project's own code (vendored, generated, documentation, build scripts) multiplies the total by its
kind's factor. Every part is kept in ``parts`` so a pack can say why each item is there.

Tests, unless the task is about them, are evidence rather than candidates: a test that matches the
task votes for the code it calls, imports or subclasses (one graph hop), and takes no slot itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

from smartctx.core.model import SymbolKind
from smartctx.retrieval.expand import Expansion
from smartctx.retrieval.file_kinds import FileKind
from smartctx.retrieval.focus import FocusRank
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
# A matching test's vote for what it uses, at most this much (for the best-matching test). Small:
# tests call helpers and fixtures as much as the code under test; on SWE-bench Lite's stratified 60
# a vote of 0.5 cost 5 points of function hit against no vote, 0.1 one body hit (bench/RESULTS.md).
TEST_VOTE_WEIGHT = 0.1
# The edges along which a test votes: it calls, references, imports or subclasses the code.
TEST_VOTE_EDGES = frozenset({"calls", "references", "imports", "inherits"})
# Files that are not the project's own code rank below it: their total is multiplied by these.
# Tests only when the task is about tests; otherwise they vote instead of ranking at all.
KIND_FACTORS: Mapping[FileKind, float] = {
    FileKind.VENDORED: 0.15,
    FileKind.GENERATED: 0.15,
    FileKind.DOCUMENTATION: 0.5,
    FileKind.BUILD: 0.4,
    FileKind.TEST: 1.0,
}
FILE_PART = "file"
# Parts that are not added up into the score: facts (hops) and the file-kind factor.
KIND_PART = "kindFactor"
NOT_ADDED = frozenset({"hops", KIND_PART})


class ScoredNode(NamedTuple):
    """A candidate with its score and the parts it is made of; a tuple, as a request scores a
    thousand or so (a frozen dataclass's constructor costs several times a tuple's)."""

    node: NodeRow
    score: float
    parts: dict[str, float]


def score(
    search: SearchResult,
    expansion: Expansion,
    focus: FocusRank,
    kinds: Mapping[str, FileKind],
    tests_wanted: bool,
) -> list[ScoredNode]:
    """Score every reached node that can be packed (not module nodes; not tests unless they are
    wanted), best first, ties by id. ``kinds`` holds the paths that are not own code."""
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
            FILE_PART: FILE_WEIGHT * search.file_evidence.get(node.path, 0.0) / top_file,
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
    focused = focus.parts([(node, total_of(parts)) for node, parts in task_parts])
    scored: list[ScoredNode] = []
    for node, parts in task_parts:
        parts.update(focused.get(node.id, {}))
        reach = expansion.reached[node.id]
        if reach.hops:
            parts["hops"] = float(reach.hops)
        scored.append(ScoredNode(node, total_of(parts), parts))
    if not tests_wanted:
        scored = _tests_vote(scored, expansion, kinds)
    scored = [_with_kind_factor(item, kinds) for item in scored]
    scored.sort(key=lambda item: (-item.score, item.node.path, item.node.start_line, item.node.id))
    return scored


def total_of(parts: Mapping[str, float]) -> float:
    """The score the parts make: the sum of the added parts times the file-kind factor, if any."""
    added = sum(value for name, value in parts.items() if name not in NOT_ADDED)
    return added * parts.get(KIND_PART, 1.0)


def _with_kind_factor(item: ScoredNode, kinds: Mapping[str, FileKind]) -> ScoredNode:
    kind = kinds.get(item.node.path)
    if kind is None or KIND_FACTORS[kind] == 1.0:
        return item
    parts = {**item.parts, KIND_PART: KIND_FACTORS[kind]}
    return ScoredNode(item.node, total_of(parts), parts)


def _tests_vote(
    scored: list[ScoredNode], expansion: Expansion, kinds: Mapping[str, FileKind]
) -> list[ScoredNode]:
    """The candidates without tests, each with the vote of the best-matching test that uses it."""
    tests = {item.node.id: item.score for item in scored if kinds.get(item.node.path) is FileKind.TEST}
    if not tests:
        return scored
    top_test = max(tests.values()) or 1.0
    votes: dict[int, float] = {}
    for edge in expansion.edges:
        if edge.kind in TEST_VOTE_EDGES and edge.src_id in tests and edge.dst_id not in tests:
            vote = TEST_VOTE_WEIGHT * tests[edge.src_id] / top_test
            votes[edge.dst_id] = max(votes.get(edge.dst_id, 0.0), vote)
    voted: list[ScoredNode] = []
    for item in scored:
        if item.node.id in tests:
            continue
        if item.node.id in votes:
            parts = {**item.parts, "testVotes": votes[item.node.id]}
            item = ScoredNode(item.node, total_of(parts), parts)
        voted.append(item)
    return voted
