"""Stage 3: one score per candidate, from named signals, each explaining its share.

Every candidate gets its signals (``DEFINITION_SIGNALS`` names them all): BM25 over its own text,
PageRank and usage, each normalised over the candidate set; the whole-file lexical evidence of its
file and its file's place in that search; exact mentions in the task (a name, a dotted name, a stack
frame, a file path, a module path); how much of its name, its file's name and its folder's name the
task's words cover; what kind of definition it is and how long; whether only the graph reached it;
and the votes of matching tests. The weights of ``rank_model.py`` turn the signals into parts, and
the parts add up to the score. The editor's focus (``focus.py``: a personalised PageRank from the
editor's files) adds parts scaled by each candidate's score before it. A file that is not the
project's own code (vendored, generated, documentation, build scripts) multiplies the total by its
kind's factor. Every part is kept in ``parts`` so a pack can say why each item is there; the signals
are kept too, for training (``bench/quality/rank_features.py``).

Tests, unless the task is about them, are evidence rather than candidates: a test that matches the
task votes for the code it calls, imports or subclasses (one graph hop), and takes no slot itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from smartctx.core.model import SymbolKind
from smartctx.retrieval.expand import Expansion
from smartctx.retrieval.file_kinds import FileKind
from smartctx.retrieval.focus import FocusRank
from smartctx.retrieval.name_match import TaskNames
from smartctx.retrieval.rank_model import LinearWeights
from smartctx.retrieval.search import SearchResult
from smartctx.store.snapshot import NodeRow

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
    # The signals behind the parts, unweighted (what the weights were learned over).
    signals: Mapping[str, float] = MappingProxyType({})


# Every signal a definition can have, the names ``rank_model.json`` weighs.
DEFINITION_SIGNALS = (
    "bm25",
    "pagerank",
    "usage",
    FILE_PART,
    "filePlace",
    "named",
    "namedExactly",
    "frame",
    "mentionedFile",
    "moduleNamed",
    "testVotes",
    "nameWords",
    "fileName",
    "folderName",
    "callable",
    "container",
    "constant",
    "lines",
    "reached",
)
# Definitions this long or longer get the whole ``lines`` signal (its log scale's top).
LINES_SCALE = 1000
_LOG_LINES_SCALE = math.log(LINES_SCALE)
# The kind signals of each kind (a kind without any has none).
_KIND_SIGNALS: Mapping[SymbolKind, Mapping[str, float]] = {
    SymbolKind.FUNCTION: {"callable": 1.0},
    SymbolKind.METHOD: {"callable": 1.0},
    SymbolKind.CONSTANT: {"constant": 1.0},
    **{
        kind: {"container": 1.0}
        for kind in (
            SymbolKind.CLASS,
            SymbolKind.STRUCT,
            SymbolKind.INTERFACE,
            SymbolKind.ENUM,
            SymbolKind.TRAIT,
        )
    },
}


def score(
    search: SearchResult,
    expansion: Expansion,
    focus: FocusRank,
    kinds: Mapping[str, FileKind],
    tests_wanted: bool,
    names: TaskNames,
    weights: LinearWeights,
) -> list[ScoredNode]:
    """Score every reached node that can be packed (not module nodes; not tests unless they are
    wanted), best first, ties by id. ``kinds`` holds the paths that are not own code; ``names`` says
    how much of a name or path the task's words cover."""
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
    task_parts: list[tuple[NodeRow, dict[str, float], dict[str, float]]] = []
    # A request's candidates come from a few hundred files: each file's signals are found once.
    per_file = {
        path: _file_signals(path, search, top_file, names) for path in {node.path for node in candidates}
    }
    for node in candidates:
        signals = {
            **per_file[node.path],
            **_KIND_SIGNALS.get(node.kind, {}),
            "bm25": lexical[node.id] / top_lexical,
            "pagerank": node.pagerank / top_rank,
            "usage": math.log1p(node.usage) / top_usage,
            "nameWords": names.name(node.name),
            "lines": min(1.0, math.log(node.end_line - node.start_line + 1) / _LOG_LINES_SCALE),
        }
        # Most candidates have none of these: they are added only where they hold.
        if node.id in search.named:
            signals["named"] = 1.0
        if node.id in search.named_exactly:
            signals["namedExactly"] = 1.0
        if node.id in search.framed:
            signals["frame"] = 1.0
        if expansion.reached[node.id].hops:
            signals["reached"] = 1.0
        task_parts.append((node, signals, weights.parts(signals)))
    # Focus scales with the task's own score of each node, so it settles what the task leaves close
    # and never lifts a node the task is not about over one it is. Without focus there is nothing to
    # scale (and a thousand totals not to add up).
    focused = (
        focus.parts([(node, total_of(parts)) for node, _, parts in task_parts]) if focus.is_focused() else {}
    )
    scored: list[ScoredNode] = []
    for node, signals, parts in task_parts:
        parts.update(focused.get(node.id, {}))
        reach = expansion.reached[node.id]
        if reach.hops:
            parts["hops"] = float(reach.hops)
        scored.append(ScoredNode(node, total_of(parts), parts, signals))
    if not tests_wanted:
        scored = _tests_vote(scored, expansion, kinds, weights)
    scored = [_with_kind_factor(item, kinds) for item in scored]
    scored.sort(key=lambda item: (-item.score, item.node.path, item.node.start_line, item.node.id))
    return scored


def _file_signals(path: str, search: SearchResult, top_file: float, names: TaskNames) -> dict[str, float]:
    """The signals every definition of a file shares."""
    file_named, folder_named = names.path(path)
    signals = {
        FILE_PART: search.file_evidence.get(path, 0.0) / top_file,
        "fileName": file_named,
        "folderName": folder_named,
    }
    if path in search.file_places:
        signals["filePlace"] = 1.0 / search.file_places[path]
    if path in search.mentioned_files:
        signals["mentionedFile"] = 1.0
    if path in search.named_modules:
        signals["moduleNamed"] = 1.0
    return signals


def total_of(parts: Mapping[str, float]) -> float:
    """The score the parts make: the sum of the added parts times the file-kind factor, if any."""
    added = sum(value for name, value in parts.items() if name not in NOT_ADDED)
    return added * parts.get(KIND_PART, 1.0)


def _with_kind_factor(item: ScoredNode, kinds: Mapping[str, FileKind]) -> ScoredNode:
    kind = kinds.get(item.node.path)
    if kind is None or KIND_FACTORS[kind] == 1.0:
        return item
    parts = {**item.parts, KIND_PART: KIND_FACTORS[kind]}
    return ScoredNode(item.node, total_of(parts), parts, item.signals)


def _tests_vote(
    scored: list[ScoredNode], expansion: Expansion, kinds: Mapping[str, FileKind], weights: LinearWeights
) -> list[ScoredNode]:
    """The candidates without tests, each with the vote of the best-matching test that uses it."""
    tests = {item.node.id: item.score for item in scored if kinds.get(item.node.path) is FileKind.TEST}
    if not tests:
        return scored
    top_test = max(tests.values()) or 1.0
    votes: dict[int, float] = {}
    for edge in expansion.edges:
        if edge.kind in TEST_VOTE_EDGES and edge.src_id in tests and edge.dst_id not in tests:
            vote = tests[edge.src_id] / top_test
            votes[edge.dst_id] = max(votes.get(edge.dst_id, 0.0), vote)
    voted: list[ScoredNode] = []
    for item in scored:
        if item.node.id in tests:
            continue
        if item.node.id in votes:
            signals = {**item.signals, "testVotes": votes[item.node.id]}
            parts = {**item.parts, **weights.parts({"testVotes": votes[item.node.id]})}
            item = ScoredNode(item.node, total_of(parts), parts, signals)
        voted.append(item)
    return voted
