"""Each signal the shipped ranking model weighs moves a definition up, all else equal (score.py and
files.py over made-up search results): two candidates alike in every way but one, the one without
the signal placed first by the tie-break, and the one with it must win."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.node_rows import function_row

from smartctx.retrieval.expand import Expansion, Reach
from smartctx.retrieval.files import rank_files
from smartctx.retrieval.focus import FocusRank
from smartctx.retrieval.name_match import TaskNames
from smartctx.retrieval.query import parse_task
from smartctx.retrieval.rank_model import shipped_model
from smartctx.retrieval.score import score
from smartctx.retrieval.search import SearchResult
from smartctx.store.snapshot import NodeRow

TASK = "The migration serializer writes a nested enum without its module path"
# The tie-break puts "a/..." before "b/...": every case below gives the signal to the "b/" candidate.
PLAIN_PATH = "a/plain.py"


def node(node_id: int, path: str, name: str, lines: int = 10) -> NodeRow:
    return function_row(node_id, path, name, 1, lines)


def search_result(nodes: list[NodeRow], **changes: object) -> SearchResult:
    base = SearchResult(
        lexical={item.id: 5.0 for item in nodes},
        file_evidence={item.path: 3.0 for item in nodes},
        named=frozenset(),
        named_exactly=frozenset(),
        framed=frozenset(),
        mentioned_files=frozenset(),
        nodes={item.id: item for item in nodes},
        file_places={item.path: 1 for item in nodes},
    )
    return replace(base, **changes)


CASES = {
    # The task says the definition's name.
    "nameWords": ([node(1, PLAIN_PATH, "write_value"), node(2, "b/other.py", "serialize_enum")], {}),
    # The task says its file's name.
    "fileName": ([node(1, PLAIN_PATH, "write_value"), node(2, "b/serializer.py", "write_value")], {}),
    # The task names its module by a dotted path.
    "moduleNamed": (
        [node(1, PLAIN_PATH, "write_value"), node(2, "b/other.py", "write_value")],
        {"named_modules": frozenset({"b/other.py"})},
    ),
    # Its file comes first in the whole-file search, the scores being equal.
    "filePlace": (
        [node(1, PLAIN_PATH, "write_value"), node(2, "b/other.py", "write_value")],
        {"file_places": {PLAIN_PATH: 2, "b/other.py": 1}},
    ),
    # A longer definition is more often the one a change edits.
    "lines": ([node(1, PLAIN_PATH, "write_value", 5), node(2, "b/other.py", "write_value", 60)], {}),
    # The task names it verbatim.
    "named": (
        [node(1, PLAIN_PATH, "write_value"), node(2, "b/other.py", "write_value")],
        {"named": frozenset({2})},
    ),
}


def reached(nodes: list[NodeRow]) -> Expansion:
    """Every node a seed of its own, all equally strong."""
    return Expansion(
        {item.id: Reach(item.id, 0, 5.0) for item in nodes}, {item.id: item for item in nodes}, ()
    )


@pytest.mark.parametrize("signal", sorted(CASES))
def test_a_weighed_signal_lifts_its_definition(signal: str) -> None:
    model = shipped_model()
    if model.definitions.weight(signal) <= 0:
        pytest.fail(f"the shipped model no longer weighs {signal}: drop its case or its signal")
    nodes, changes = CASES[signal]
    found = search_result(nodes, **changes)
    ranked = score(
        found, reached(nodes), FocusRank(), {}, False, TaskNames(parse_task(TASK)), model.definitions
    )
    assert [item.node.id for item in ranked] == [2, 1]
    assert ranked[0].parts[signal] > ranked[1].parts.get(signal, 0.0)


@pytest.mark.parametrize("signal", ["fileName", "moduleNamed"])
def test_a_weighed_signal_lifts_its_file(signal: str) -> None:
    model = shipped_model()
    if model.files.weight(signal) <= 0:
        pytest.fail(f"the shipped model no longer weighs {signal} for files: drop its case")
    nodes, changes = CASES[signal]
    # The definitions scored alike, so that only the file's own signal can tell the files apart.
    ranked = score(
        search_result(nodes),
        reached(nodes),
        FocusRank(),
        {},
        False,
        TaskNames(parse_task("")),
        model.definitions,
    )
    files = rank_files(
        ranked, search_result(nodes, **changes), {}, False, TaskNames(parse_task(TASK)), model.files
    )
    assert [file.path for file in files] == [nodes[1].path, PLAIN_PATH]
