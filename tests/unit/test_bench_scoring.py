"""The SWE-bench scoring rules (bench/swebench_scoring.py) on hand-made packs."""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"

# The gold of every pack below: one function in `pkg/core.py`, whose lines 21-23 and 40 the fix changed.
GOLD_ROW = {
    "gold_files": ["pkg/core.py", "pkg/tests/test_core.py"],
    "gold_functions": ["pkg/core.py::Engine.run", "pkg/tests/test_core.py::test_run"],
    "gold_changed": [["pkg/core.py", 21, 23], ["pkg/core.py", 40, 40], ["pkg/tests/test_core.py", 5, 9]],
}


@pytest.fixture(scope="module")
def scoring() -> Iterator[ModuleType]:
    """The scoring module, imported from bench/ (which is not a package)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCH_DIR))
        yield importlib.import_module("swebench_scoring")


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
    assert scoring.percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert scoring.percentile([float(value) for value in range(1, 101)], 95) == 95.0
    assert scoring.percentile([7.0], 95) == 7.0
    assert math.isnan(scoring.percentile([], 50))
    assert scoring.mean([1.0, 0.0]) == 0.5
