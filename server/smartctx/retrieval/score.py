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

A candidate that only the graph reached (a caller, callee, subclass or member of what the search
found, which matched nothing of the task itself) multiplies its total by ``GRAPH_ONLY_FACTOR``: it
stays a candidate, below what the search found alike.

Tests, unless the task is about them, are evidence rather than candidates: a test that matches the
task votes for the code it calls, imports or subclasses (one graph hop), and takes no slot itself.
A test is a definition of a test file, or one inside a ``tests`` or ``test`` module of a source file
(Rust's ``#[cfg(test)] mod tests``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from smartctx.core.model import SymbolKind
from smartctx.retrieval.expand import Expansion
from smartctx.retrieval.file_kinds import FileKind
from smartctx.retrieval.focus import FocusRank
from smartctx.retrieval.name_match import TaskNames
from smartctx.retrieval.rank_model import LinearWeights
from smartctx.retrieval.search import SearchResult
from smartctx.retrieval.signal_table import NO_VALUES, SignalTable, Vector, column
from smartctx.store.snapshot import NodeRow

# The edges along which a test votes: it calls, references, imports or subclasses the code.
TEST_VOTE_EDGES = frozenset({"calls", "references", "imports", "inherits"})
# Modules whose definitions are tests wherever their file is: Rust keeps unit tests in a
# `#[cfg(test)] mod tests` at the end of the source file they test. Counted as code, they took 112
# of the first 10 places of 48 of the commit dev set's 80 Rust packs; as tests they vote instead
# (function MRR 0.567 -> 0.572, no task worse, SWE-bench Lite's packs unchanged: bench/HISTORY.md).
TEST_MODULES = frozenset({"tests", "test"})
# Files that are not the project's own code rank below it: their total is multiplied by these.
# Tests only when the task is about tests; otherwise they vote instead of ranking at all. A package's
# own test library (``django/test/``) as documentation: code a task can be about, seldom the code to
# change.
KIND_FACTORS: Mapping[FileKind, float] = {
    FileKind.VENDORED: 0.15,
    FileKind.GENERATED: 0.15,
    FileKind.DOCUMENTATION: 0.5,
    FileKind.BUILD: 0.4,
    FileKind.TEST: 1.0,
    FileKind.TEST_LIBRARY: 0.5,
}
# A candidate the search did not find, which only the graph reached from one it did, multiplies its
# total by this. Its lexical signal is its seed's BM25 halved per hop, so on that alone a callee or
# subclass of the best match outranked the best match's weaker neighbours in its own file that do
# match the task: among the first 10 candidates such a definition was gold 2-3 % of the time against
# 16-17 % for those the search found (commit training set, dev set; 0.2 % against 7 % on SWE-bench
# Lite). The learned weights cannot say so (every weight is at least 0, and a long class reached from
# its method holds the gold lines). Chosen on the commit training set's packs (function Acc@10 30.7 ->
# 31.7 %, flat from 0.5 to 0.8), then confirmed on the dev set and SWE-bench Lite: bench/HISTORY.md.
# It multiplies the score only, not the definition's own score that ranks files, so the file
# ranking does not change.
GRAPH_ONLY_FACTOR = 0.8
GRAPH_ONLY_PART = "graphOnly"
FILE_PART = "file"
# The file-kind factor's part: it multiplies the score rather than adding to it (as hops, a fact,
# adds nothing).
KIND_PART = "kindFactor"
# The parts that multiply a definition's score; the others add to it (but hops, a fact).
FACTOR_PARTS = (KIND_PART, GRAPH_ONLY_PART)


def factor_of(parts: Mapping[str, float]) -> float:
    """What a definition's added parts were multiplied by: its ``FACTOR_PARTS`` together."""
    factor = 1.0
    for name in FACTOR_PARTS:
        factor *= parts.get(name, 1.0)
    return factor


class ScoredNode(NamedTuple):
    """A candidate with its score and the parts it is made of; a tuple, as a request scores a
    thousand or so (a frozen dataclass's constructor costs several times a tuple's)."""

    node: NodeRow
    score: float
    parts: Mapping[str, float]
    # The signals behind the parts, unweighted (what the weights were learned over).
    signals: Mapping[str, float] = NO_VALUES
    # The score without its file's whole-text part and before its file's kind factor: what a file
    # ranks its definitions by (files.py counts the file's text once, as a signal of its own).
    own: float = 0.0


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
    "innermostFrame",
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
    "similarCommits",
    "titleScope",
)
# Definitions this long or longer get the whole ``lines`` signal (its log scale's top).
LINES_SCALE = 1000
_LOG_LINES_SCALE = math.log(LINES_SCALE)
# The kind signal of each kind (a kind without one has none).
_KIND_SIGNAL_NAMES = ("callable", "container", "constant")
_KIND_SIGNAL: Mapping[SymbolKind, str] = {
    SymbolKind.FUNCTION: "callable",
    SymbolKind.METHOD: "callable",
    SymbolKind.CONSTANT: "constant",
    **{
        kind: "container"
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
    signals = _signals(candidates, search, expansion, names)
    parts = signals.weighed(weights)
    totals: list[float] = parts.total().tolist()
    owns: list[float] = parts.total(leaving_out=FILE_PART).tolist()
    # Parts found after the table, by candidate: focus, hops, test votes and the kind factor.
    later: defaultdict[int, dict[str, float]] = defaultdict(dict)
    # Focus scales with the task's own score of each node, so it settles what the task leaves close
    # and never lifts a node the task is not about over one it is. Without focus there is nothing to
    # scale.
    if focus.is_focused():
        focused = focus.parts(list(zip(candidates, totals, strict=True)))
        for index, node in enumerate(candidates):
            for name, value in focused.get(node.id, {}).items():
                later[index][name] = value
                totals[index] += value
                owns[index] += value
    for index, node in enumerate(candidates):
        hops = expansion.reached[node.id].hops
        if hops:
            later[index]["hops"] = float(hops)
    kept: Iterable[int] = range(len(candidates))
    votes: dict[int, float] = {}
    if not tests_wanted:
        kept, votes = _tests_vote(candidates, totals, expansion, kinds)
    vote_weight = weights.weight("testVotes")
    for index, vote in votes.items():
        if vote and vote_weight:
            later[index]["testVotes"] = vote_weight * vote
            totals[index] += vote_weight * vote
            owns[index] += vote_weight * vote
    scored: list[ScoredNode] = []
    for index in kept:
        node = candidates[index]
        kind = kinds.get(node.path)
        if kind is not None and KIND_FACTORS[kind] != 1.0:
            later[index][KIND_PART] = KIND_FACTORS[kind]
            totals[index] *= KIND_FACTORS[kind]
        if expansion.reached[node.id].hops:
            later[index][GRAPH_ONLY_PART] = GRAPH_ONLY_FACTOR
            totals[index] *= GRAPH_ONLY_FACTOR
        voted = {"testVotes": votes[index]} if index in votes else NO_VALUES
        parts_row = parts.row(index, later.get(index, NO_VALUES))
        scored.append(ScoredNode(node, totals[index], parts_row, signals.row(index, voted), owns[index]))
    scored.sort(key=lambda item: (-item.score, item.node.path, item.node.start_line, item.node.id))
    return scored


def _signals(
    candidates: list[NodeRow], search: SearchResult, expansion: Expansion, names: TaskNames
) -> SignalTable:
    """Every candidate's signals but the test votes (found once the candidates are scored)."""
    reached = expansion.reached
    lexical = [search.lexical.get(node.id, reached[node.id].strength) for node in candidates]
    pagerank = [node.pagerank for node in candidates]
    usage = [math.log1p(node.usage) for node in candidates]
    # A request's candidates come from a few hundred files: each file's signals are found once.
    top_file = max(search.file_evidence.values(), default=0.0) or 1.0
    per_file = {
        path: _file_signals(path, search, top_file, names) for path in {node.path for node in candidates}
    }
    files = SignalTable.of_rows(_FILE_SIGNALS, [per_file[node.path] for node in candidates]).values
    kinds = [_KIND_SIGNAL.get(node.kind) for node in candidates]
    columns: dict[str, Vector | float] = {
        "bm25": column(lexical) / (max(lexical) or 1.0),
        "pagerank": column(pagerank) / (max(pagerank) or 1.0),
        "usage": column(usage) / (max(usage) or 1.0),
        **{name: files[:, place] for place, name in enumerate(_FILE_SIGNALS)},
        "named": _holds(candidates, search.named),
        "namedExactly": _holds(candidates, search.named_exactly),
        "frame": _holds(candidates, search.framed),
        "innermostFrame": _holds(candidates, search.innermost_framed),
        "nameWords": column([names.name(node.name) for node in candidates]),
        **{name: column([kind == name for kind in kinds]) for name in _KIND_SIGNAL_NAMES},
        "lines": column([_lines(node) for node in candidates]),
        "reached": column([reached[node.id].hops > 0 for node in candidates]),
    }
    return SignalTable.of(columns, len(candidates))


def _holds(candidates: list[NodeRow], ids: frozenset[int]) -> Vector | float:
    """1 for each candidate in ``ids``, else 0 (most requests have none)."""
    return column([node.id in ids for node in candidates]) if ids else 0.0


def _lines(node: NodeRow) -> float:
    return min(1.0, math.log(node.end_line - node.start_line + 1) / _LOG_LINES_SCALE)


# The signals every definition of a file shares, in the order of ``_file_signals``.
_FILE_SIGNALS = (
    FILE_PART,
    "filePlace",
    "mentionedFile",
    "moduleNamed",
    "fileName",
    "folderName",
    "similarCommits",
    "titleScope",
)


def _file_signals(
    path: str, search: SearchResult, top_file: float, names: TaskNames
) -> tuple[float, float, float, float, float, float, float, float]:
    file_named, folder_named = names.path(path)
    place = search.file_places.get(path)
    return (
        search.file_evidence.get(path, 0.0) / top_file,
        1.0 / place if place else 0.0,
        float(path in search.mentioned_files),
        float(path in search.named_modules),
        file_named,
        folder_named,
        search.similar_commits.get(path, 0.0),
        names.scoped(path),
    )


def _in_test_module(node: NodeRow) -> bool:
    """Whether ``node`` is defined inside a test module of its file (``TEST_MODULES``)."""
    return any(part in TEST_MODULES for part in node.qualified_name.split(".")[:-1])


def _tests_vote(
    candidates: list[NodeRow], totals: list[float], expansion: Expansion, kinds: Mapping[str, FileKind]
) -> tuple[list[int], dict[int, float]]:
    """The places of the candidates that are not tests, and the vote each gets from the
    best-matching test that uses it."""
    tests = {
        node.id: total
        for node, total in zip(candidates, totals, strict=True)
        if kinds.get(node.path) is FileKind.TEST or _in_test_module(node)
    }
    if not tests:
        return list(range(len(candidates))), {}
    top_test = max(tests.values()) or 1.0
    by_id: dict[int, float] = {}
    for edge in expansion.edges:
        if edge.kind in TEST_VOTE_EDGES and edge.src_id in tests and edge.dst_id not in tests:
            by_id[edge.dst_id] = max(by_id.get(edge.dst_id, 0.0), tests[edge.src_id] / top_test)
    kept = [index for index, node in enumerate(candidates) if node.id not in tests]
    return kept, {index: by_id[candidates[index].id] for index in kept if candidates[index].id in by_id}
