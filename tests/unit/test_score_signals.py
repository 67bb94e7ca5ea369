"""Each signal the shipped ranking model weighs moves a definition up, all else equal (score.py and
files.py over made-up search results): two candidates alike in every way but one, the one without
the signal placed first by the tie-break, and the one with it must win."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.node_rows import function_row

from smartctx.retrieval.expand import Expansion, Reach
from smartctx.retrieval.file_kinds import FileKind
from smartctx.retrieval.files import rank_files
from smartctx.retrieval.focus import FocusRank
from smartctx.retrieval.name_match import TaskNames
from smartctx.retrieval.query import parse_task
from smartctx.retrieval.rank_model import shipped_model
from smartctx.retrieval.score import FACTOR_PARTS, GRAPH_ONLY_FACTOR, KIND_FACTORS, factor_of, score
from smartctx.retrieval.search import SearchResult
from smartctx.store.snapshot import EdgeRow, NodeRow

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


def test_every_score_is_the_sum_of_the_parts_it_shows() -> None:
    """Focus, hops, a test's vote and a vendored file's factor all in one request: each candidate's
    parts (which a pack shows as ``scoreParts``) add up to its score, its own score leaves out only
    its file's text part, and each file's map reason names what found its best definition."""
    model = shipped_model()
    nodes = [
        node(1, PLAIN_PATH, "write_value"),
        node(2, "b/serializer.py", "serialize_enum", 40),
        node(3, "vendor/enum_lib.py", "serialize_enum"),
        node(4, "tests/test_serializer.py", "test_serialize_enum"),
        node(5, "b/serializer.py", "deconstruct"),
    ]
    expansion = Expansion(
        {**reached(nodes).reached, 5: Reach(2, 1, 2.0)},
        {item.id: item for item in nodes},
        (EdgeRow(4, 2, "calls", 1.0), EdgeRow(2, 5, "calls", 1.0)),
    )
    found = search_result(nodes, lexical={1: 5.0, 2: 4.0, 3: 3.0, 4: 6.0}, named=frozenset({2}))
    kinds = {"vendor/enum_lib.py": FileKind.VENDORED, "tests/test_serializer.py": FileKind.TEST}
    focus = FocusRank(node_share={1: 1.0}, file_share={PLAIN_PATH: 1.0})
    ranked = score(found, expansion, focus, kinds, False, TaskNames(parse_task(TASK)), model.definitions)
    assert sorted(item.node.id for item in ranked) == [1, 2, 3, 5]
    by_id = {item.node.id: item for item in ranked}
    assert by_id[2].parts["testVotes"] > 0 and by_id[2].signals["testVotes"] == 1.0
    assert by_id[5].parts["hops"] == 1.0 and "focusFile" in by_id[1].parts
    # Only the graph reached it: its total is multiplied down, the search found the others.
    assert by_id[5].parts["graphOnly"] == GRAPH_ONLY_FACTOR and "graphOnly" not in by_id[2].parts
    assert by_id[3].parts["kindFactor"] == KIND_FACTORS[FileKind.VENDORED]
    for item in ranked:
        added = [value for name, value in item.parts.items() if name not in ("hops", *FACTOR_PARTS)]
        assert item.score == pytest.approx(sum(added) * factor_of(item.parts), rel=1e-12)
        assert item.own == pytest.approx(sum(added) - item.parts.get("file", 0.0), rel=1e-12)
    files = rank_files(ranked, found, kinds, False, TaskNames(parse_task(TASK)), model.files)
    for file in files:
        added = sum(value for name, value in file.parts.items() if name != "kindFactor")
        assert file.score == pytest.approx(added * file.parts.get("kindFactor", 1.0), rel=1e-12)
    # Each file's map line says what found its best definition.
    reasons = {file.path: file.reason for file in files}
    assert reasons["b/serializer.py"].startswith("defines a name the task uses; used by a matching test")
    assert reasons[PLAIN_PATH] == "near the code you are editing; where the editor is"
    assert reasons["vendor/enum_lib.py"].endswith("vendored, so ranked lower")
