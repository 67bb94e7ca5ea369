"""The SWE-bench scoring rules (bench/quality/swebench_scoring.py) on hand-made packs."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import pytest

from bench import stats
from bench.quality import swebench_scoring

# The gold of every pack below: one function in `pkg/core.py`, whose lines 21-23 and 40 the fix changed.
GOLD_ROW = {
    "gold_files": ["pkg/core.py", "pkg/tests/test_core.py"],
    "gold_functions": ["pkg/core.py::Engine.run", "pkg/tests/test_core.py::test_run"],
    "gold_changed": [["pkg/core.py", 21, 23], ["pkg/core.py", 40, 40], ["pkg/tests/test_core.py", 5, 9]],
}


@pytest.fixture(scope="module")
def scoring() -> ModuleType:
    return swebench_scoring


def item(scoring: ModuleType, spec: str, *, body: bool = True, whole_file: bool = False) -> Any:
    """A pack item from ``"path::Qualified.name:start-end"``."""
    function_id, lines = spec.rsplit(":", 1)
    path, name = function_id.split("::")
    start, end = (int(part) for part in lines.split("-"))
    return scoring.PackItem(path, name, start, end, body=body, whole_file=whole_file)


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("pkg/core.py", False),
        ("pkg/tests/test_core.py", True),
        ("sympy/core/tests/test_basic.py", True),
        ("testing/python/collect.py", True),
        ("test_things.py", True),
        ("pkg/core_test.py", True),
        ("pkg/conftest.py", True),
        ("tests.py", True),
        ("src/_pytest/python.py", False),
        ("pkg/contest.py", False),
        ("pkg/latest/attest.py", False),
    ],
)
def test_test_paths(scoring: ModuleType, path: str, is_test: bool) -> None:
    assert scoring.is_test_path(path) is is_test


def test_gold_leaves_test_files_out(scoring: ModuleType) -> None:
    gold = scoring.Gold.from_instance(GOLD_ROW)
    assert gold.files == ("pkg/core.py",)
    assert gold.functions == ("pkg/core.py::Engine.run",)
    assert gold.changed_lines() == {("pkg/core.py", line) for line in (21, 22, 23, 40)}


# Each case: the pack's items as (spec, body), then the expected
# (file hit, function hit, body hit, line hit, line coverage, file rank).
CASES = {
    "empty pack": ([], (False, False, False, False, 0.0, None)),
    "gold as a summary": (
        [("pkg/core.py::Engine.run:20-45", False)],
        (True, True, False, False, 0.0, 1),
    ),
    "gold as a body": (
        [("pkg/core.py::Engine.run:20-45", True)],
        (True, True, True, True, 1.0, 1),
    ),
    "a neighbour's body covers some changed lines": (
        [("pkg/core.py::Engine.start:22-30", True)],
        (True, False, False, True, 0.5, 1),
    ),
    "overlapping bodies count each line once": (
        [("pkg/core.py::Engine:1-30", True), ("pkg/core.py::Engine.start:22-30", True)],
        (True, False, False, True, 0.75, 1),
    ),
    "the same lines of another file cover nothing": (
        [("pkg/other.py::Engine.run:1-100", True)],
        (False, False, False, False, 0.0, None),
    ),
    "a test file's body is no hit": (
        [("pkg/tests/test_core.py::test_run:1-50", True)],
        (False, False, False, False, 0.0, None),
    ),
    "gold file after another file": (
        [
            ("pkg/other.py::helper:1-5", True),
            ("pkg/other.py::more:6-9", True),
            ("pkg/core.py::Engine:1-2", False),
        ],
        (True, False, False, False, 0.0, 2),
    ),
    "a summary never covers lines": (
        [("pkg/core.py::Engine:1-99", False), ("pkg/core.py::Engine.run:20-45", False)],
        (True, True, False, False, 0.0, 1),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_score_pack(scoring: ModuleType, case: str) -> None:
    specs, expected = CASES[case]
    items = [item(scoring, spec, body=body) for spec, body in specs]
    score = scoring.score_pack(items, scoring.Gold.from_instance(GOLD_ROW))
    assert (
        score.file_hit,
        score.function_hit,
        score.body_hit,
        score.line_hit,
        score.line_coverage,
        score.file_rank,
    ) == expected


def test_whole_file_holds_every_function_in_full(scoring: ModuleType) -> None:
    pack = [item(scoring, f"pkg/core.py::{scoring.MODULE_NAME}:1-200", whole_file=True)]
    score = scoring.score_pack(pack, scoring.Gold.from_instance(GOLD_ROW))
    assert (score.function_hit, score.body_hit, score.line_coverage) == (True, True, 1.0)


def test_a_changed_line_a_body_leaves_out_is_not_covered(scoring: ModuleType) -> None:
    """Lines 21-23 and 40 changed; the body of Engine.run (20-45) leaves its docstring's 22-30 out."""
    gold = scoring.Gold.from_instance(GOLD_ROW)
    whole = scoring.PackItem("pkg/core.py", "Engine.run", 20, 45, body=True)
    shortened = scoring.PackItem("pkg/core.py", "Engine.run", 20, 45, body=True, left_out=((22, 30),))
    assert scoring.score_pack([whole], gold).line_coverage == 1.0
    score = scoring.score_pack([shortened], gold)
    assert (score.body_hit, score.line_hit, score.line_coverage) == (True, True, 0.5)


@pytest.mark.parametrize(
    ("spec", "body", "holds"),
    [
        ("pkg/core.py::Engine:10-60", True, True),
        ("pkg/core.py::Engine:10-30", True, False),
        ("pkg/core.py::Engine:10-60", False, False),
        ("pkg/other.py::Engine:10-60", True, False),
    ],
    ids=["class body", "class body cut before the end", "class summary", "another file"],
)
def test_a_body_spanning_the_gold_function_holds_it(
    scoring: ModuleType, spec: str, body: bool, holds: bool
) -> None:
    gold = scoring.Gold.from_instance(GOLD_ROW)
    gold = scoring.Gold(gold.files, gold.functions, gold.changed, (("pkg/core.py::Engine.run", 20, 45),))
    score = scoring.score_pack([item(scoring, spec, body=body)], gold)
    assert (score.function_hit, score.body_hit) == (holds, holds)


def test_module_level_gold_matches_a_module_item(scoring: ModuleType) -> None:
    gold = scoring.Gold.from_instance(
        {
            "gold_files": ["pkg/core.py"],
            "gold_functions": [f"pkg/core.py::{scoring.MODULE_NAME}"],
            "gold_changed": [["pkg/core.py", 3, 3]],
        }
    )
    summary = scoring.score_pack(
        [item(scoring, f"pkg/core.py::{scoring.MODULE_NAME}:1-200", body=False)], gold
    )
    body = scoring.score_pack([item(scoring, f"pkg/core.py::{scoring.MODULE_NAME}:1-200")], gold)
    assert (summary.function_hit, summary.body_hit) == (True, False)
    assert (body.function_hit, body.body_hit) == (True, True)


def test_first_gold_rank_counts_each_file_once(scoring: ModuleType) -> None:
    paths = ["a.py", "a.py", "b.py", "gold.py", "gold.py"]
    assert scoring.first_gold_rank(paths, ["gold.py"]) == 3
    assert scoring.first_gold_rank(paths, ["missing.py"]) is None


def test_aggregates(scoring: ModuleType) -> None:
    assert scoring.share_within([1, 3, None, 10], 3) == 0.5
    assert math.isnan(scoring.share_within([], 1))
    assert stats.nearest_rank([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert stats.nearest_rank([float(value) for value in range(1, 101)], 95) == 95.0
    assert stats.nearest_rank([7.0], 95) == 7.0
    assert math.isnan(stats.nearest_rank([], 50))
    assert stats.mean([1.0, 0.0]) == 0.5


def ranks(scoring: ModuleType, specs: list[tuple[str, bool]], file_map: tuple[str, ...] = ()) -> Any:
    """The pack of ``specs`` (as in CASES) and ``file_map`` scored against GOLD_ROW."""
    items = [item(scoring, spec, body=body) for spec, body in specs]
    return scoring.score_pack(items, scoring.Gold.from_instance(GOLD_ROW), file_map)


FIVE_BODIES_FROM_TWO_FILES = [
    ("pkg/a.py::one:1-5", True),
    ("pkg/b.py::two:1-5", True),
    ("pkg/a.py::three:10-15", True),
    ("pkg/a.py::four:20-25", True),
    ("pkg/b.py::five:10-15", True),
]


def test_a_gold_file_first_seen_in_a_summary_after_five_bodies_from_two_files_ranks_third(
    scoring: ModuleType,
) -> None:
    score = ranks(scoring, [*FIVE_BODIES_FROM_TWO_FILES, ("pkg/core.py::Engine.run:20-45", False)])
    assert score.file_ranks.positions == (3,)
    # Functions count every definition: the summary is the sixth.
    assert score.function_ranks.positions == (6,)
    assert (score.file_hit, score.function_hit, score.body_hit) == (True, True, False)


def test_the_file_map_ranks_after_the_summaries_and_names_no_function(scoring: ModuleType) -> None:
    score = ranks(
        scoring,
        [("pkg/a.py::one:1-5", True), ("pkg/b.py::two:1-5", False)],
        file_map=("pkg/a.py", "pkg/c.py", "pkg/core.py"),
    )
    # a.py and b.py come from the items; a.py listed again in the map is not counted twice.
    assert score.file_ranks.positions == (4,)
    assert score.function_ranks.positions == (None,)
    assert (score.file_hit, score.function_hit) == (True, False)


def test_a_summary_ranks_after_every_body_and_a_body_repeated_as_summary_counts_once(
    scoring: ModuleType,
) -> None:
    score = ranks(
        scoring,
        [
            ("pkg/core.py::Engine.start:5-15", True),
            ("pkg/other.py::helper:1-9", True),
            ("pkg/core.py::Engine.start:5-15", False),
            ("pkg/core.py::Engine.run:20-45", False),
        ],
    )
    assert (score.file_ranks.positions, score.function_ranks.positions) == ((1,), (3,))


def test_a_class_body_that_spans_the_gold_function_ranks_at_the_class(scoring: ModuleType) -> None:
    gold = scoring.Gold.from_instance(GOLD_ROW)
    gold = scoring.Gold(gold.files, gold.functions, gold.changed, (("pkg/core.py::Engine.run", 20, 45),))
    pack = [
        item(scoring, "pkg/other.py::helper:1-9"),
        item(scoring, "pkg/core.py::Engine:10-60"),
        item(scoring, "pkg/core.py::Engine.run:20-45", body=False),
    ]
    assert scoring.score_pack(pack, gold).function_ranks.positions == (2,)
    # As a summary the class shows only its signature: the method's own summary is the first to hold it.
    pack[1] = item(scoring, "pkg/core.py::Engine:10-60", body=False)
    assert scoring.score_pack(pack, gold).function_ranks.positions == (3,)


def test_a_whole_file_ranks_every_gold_function_in_it_at_its_place(scoring: ModuleType) -> None:
    pack = [
        item(scoring, f"pkg/other.py::{scoring.MODULE_NAME}:1-80", whole_file=True),
        item(scoring, f"pkg/core.py::{scoring.MODULE_NAME}:1-200", whole_file=True),
    ]
    score = scoring.score_pack(pack, scoring.Gold.from_instance(GOLD_ROW))
    assert (score.file_ranks.positions, score.function_ranks.positions) == ((2,), (2,))


def test_definition_ranks_leave_module_gold_out_as_locagent_does(scoring: ModuleType) -> None:
    gold = scoring.Gold(
        files=("pkg/core.py",),
        functions=(f"pkg/core.py::{scoring.MODULE_NAME}", "pkg/core.py::Engine.run"),
        changed=(),
    )
    pack = [item(scoring, "pkg/core.py::Engine.run:20-45")]
    score = scoring.score_pack(pack, gold)
    # The import the fix adds is a gold function no pack item holds: function Acc@10 misses the task,
    # definition Acc@10, over the gold without it, counts it.
    assert score.function_ranks.positions == (None, 1)
    assert score.definition_ranks.positions == (1,)
    figures = scoring.rank_figures([score.file_ranks], [score.function_ranks], [score.definition_ranks])
    assert (figures["function_acc@10"], figures["definition_acc@10"]) == (0.0, 1.0)
    # A task whose only gold function is ``<module>`` has no definition gold: it is left out.
    only_module = scoring.Gold(gold.files, gold.functions[:1], ())
    assert scoring.score_pack(pack, only_module).definition_ranks.positions == ()


def test_several_gold_items_each_get_their_own_rank(scoring: ModuleType) -> None:
    gold = scoring.Gold(
        files=("pkg/core.py", "pkg/util.py", "pkg/gone.py"),
        functions=("pkg/core.py::Engine.run", "pkg/util.py::parse", "pkg/core.py::Engine.run"),
        changed=(),
    )
    pack = [
        item(scoring, "pkg/util.py::parse:1-9"),
        item(scoring, "pkg/a.py::one:1-5"),
        item(scoring, "pkg/core.py::Engine.run:20-45", body=False),
    ]
    score = scoring.score_pack(pack, gold)
    # In the gold's order, a gold name listed twice counted once.
    assert score.file_ranks.positions == (3, 1, None)
    assert score.function_ranks.positions == (3, 1)
    assert (score.file_ranks.best, score.function_ranks.best) == (1, 1)


@pytest.mark.parametrize(
    ("positions", "k", "counts"),
    [
        ((1,), 1, True),
        ((2,), 1, False),
        ((3,), 3, True),
        ((None,), 10, False),
        # Several gold items: all of them in the first k ...
        ((1, 4), 3, False),
        ((1, 4), 5, True),
        ((2, None), 10, False),
        # ... or, with more gold items than k, the first k all gold (LocAgent's acc_at_k).
        ((1, 4), 1, True),
        ((2, 1), 1, True),
        ((2, 3), 1, False),
        (tuple(range(1, 13)), 10, True),
        ((*range(1, 10), 11, 12), 10, False),
        ((), 1, False),
    ],
)
def test_acc_at_k_counts_a_task_when_all_its_gold_is_in_the_first_k(
    scoring: ModuleType, positions: tuple[int | None, ...], k: int, counts: bool
) -> None:
    assert scoring.GoldRanks(positions).within(k) is counts


def test_acc_and_mrr_over_tasks(scoring: ModuleType) -> None:
    tasks = [scoring.GoldRanks(positions) for positions in [(1,), (3,), (None,), (), (4, 2)]]
    # The task without gold at this level is left out: four tasks count.
    assert scoring.accuracy_at(tasks, 1) == 0.25
    assert scoring.accuracy_at(tasks, 3) == 0.5
    assert scoring.accuracy_at(tasks, 4) == 0.75
    # MRR takes the best-ranked gold item: 1, 1/3, 0 and 1/2.
    assert scoring.mean_reciprocal_rank(tasks) == pytest.approx((1 + 1 / 3 + 0 + 1 / 2) / 4)
    assert math.isnan(scoring.accuracy_at([scoring.GoldRanks(())], 1))
    assert math.isnan(scoring.mean_reciprocal_rank([]))
    figures = scoring.rank_figures(tasks, [scoring.GoldRanks((6,))])
    assert (figures["file_acc@10"], figures["function_acc@5"], figures["function_acc@10"]) == (0.75, 0.0, 1.0)
    assert figures["function_mrr"] == pytest.approx(1 / 6)
    assert list(figures) == [
        *(f"file_acc@{k}" for k in scoring.FILE_ACC_KS),
        "file_mrr",
        *(f"function_acc@{k}" for k in scoring.FUNCTION_ACC_KS),
        "function_mrr",
        *(f"file_any@{k}" for k in scoring.FILE_ACC_KS),
        *(f"function_any@{k}" for k in scoring.FUNCTION_ACC_KS),
        *(f"definition_acc@{k}" for k in scoring.FUNCTION_ACC_KS),
        "definition_mrr",
    ]
    # Without definition ranks (a run recorded before them) those figures are unknown, not zero.
    assert math.isnan(figures["definition_acc@10"])


def test_any_at_k_counts_the_best_ranked_gold_item(scoring: ModuleType) -> None:
    # Gold ranked 1 and 4: Acc@3 wants both in the first three, Any@3 the better one.
    tasks = [scoring.GoldRanks((1, 4)), scoring.GoldRanks((5, None)), scoring.GoldRanks((None,))]
    assert [scoring.accuracy_at(tasks, k) for k in (1, 3, 5)] == [1 / 3, 0.0, 1 / 3]
    assert [scoring.accuracy_at(tasks, k, any_gold=True) for k in (1, 3, 5)] == [1 / 3, 1 / 3, 2 / 3]
