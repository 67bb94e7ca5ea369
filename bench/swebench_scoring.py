"""How a context pack is scored against the fix that was merged: pure functions, no I/O.

`bench/swebench.py` turns each system's answer into `PackItem`s and each SWE-bench instance into a
`Gold`, and this module says what was hit. Kept apart so `tests/unit/test_bench_scoring.py` can check
every rule on hand-made packs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# How the published gold names a change at the top level of a file, outside any definition.
MODULE_NAME = "<module>"

_TEST_FOLDERS = frozenset({"test", "tests", "testing"})


def is_test_path(path: str) -> bool:
    """Whether a workspace-relative POSIX path is test code, which the gold never counts.

    A file counts as a test when it sits under a ``test``/``tests``/``testing`` folder or is named
    like one (``test_*.py``, ``*_test.py``, ``tests.py``, ``conftest.py``).
    """
    *folders, name = path.split("/")
    return (
        any(folder in _TEST_FOLDERS for folder in folders)
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name in {"tests.py", "conftest.py"}
    )


@dataclass(frozen=True)
class PackItem:
    """One item of a pack, as the scorer sees it.

    ``qualified_name`` is ``MODULE_NAME`` for a module node. ``body`` says the full source was packed
    (a summary only shows a signature and doc). A ``whole_file`` item is a whole file packed as it is:
    every definition in it counts as present in full.
    """

    file_path: str
    qualified_name: str
    start_line: int
    end_line: int
    body: bool
    whole_file: bool = False

    @property
    def function_id(self) -> str:
        return f"{self.file_path}::{self.qualified_name}"


@dataclass(frozen=True)
class Gold:
    """The answer key of one instance with test files left out.

    ``functions`` are ``file::Qualified.name``; ``changed`` are ``(file, start, end)`` line ranges,
    1-based and inclusive, in the base commit's numbering.
    """

    files: tuple[str, ...]
    functions: tuple[str, ...]
    changed: tuple[tuple[str, int, int], ...]
    # Where each gold function is in the base commit, ``(function id, start, end)``, when the index
    # knows it: a packed body that spans those lines (a class with its methods) holds the function.
    spans: tuple[tuple[str, int, int], ...] = ()

    @classmethod
    def from_instance(cls, row: Mapping[str, Any]) -> Gold:
        return cls(
            files=tuple(path for path in row["gold_files"] if not is_test_path(path)),
            functions=tuple(
                name for name in row["gold_functions"] if not is_test_path(name.split("::", 1)[0])
            ),
            changed=tuple(
                (path, int(start), int(end))
                for path, start, end in row["gold_changed"]
                if not is_test_path(path)
            ),
        )

    def changed_lines(self) -> set[tuple[str, int]]:
        return {(path, line) for path, start, end in self.changed for line in range(start, end + 1)}


@dataclass(frozen=True)
class Score:
    """What one pack got right.

    ``line_hit`` says a packed body covers at least one changed line; ``line_coverage`` is the share of
    changed lines inside packed bodies. ``file_rank`` is the 1-based position of the first gold file
    in the pack's order of files (bodies first, then summaries), or None when no gold file is packed.
    """

    file_hit: bool
    function_hit: bool
    body_hit: bool
    line_hit: bool
    line_coverage: float
    file_rank: int | None


def first_gold_rank(paths: Iterable[str], gold_files: Iterable[str]) -> int | None:
    """The 1-based rank of the first gold file among ``paths`` counted once each, or None."""
    wanted = set(gold_files)
    seen: set[str] = set()
    for path in paths:
        if path in seen:
            continue
        seen.add(path)
        if path in wanted:
            return len(seen)
    return None


def _present(items: Iterable[PackItem], gold: Gold) -> bool:
    wanted = set(gold.functions)
    gold_function_files = {name.split("::", 1)[0] for name in gold.functions}
    spans = [(name.split("::", 1)[0], start, end) for name, start, end in gold.spans if name in wanted]
    return any(
        item.function_id in wanted
        or (item.whole_file and item.file_path in gold_function_files)
        or (
            item.body
            and any(
                path == item.file_path and item.start_line <= start and end <= item.end_line
                for path, start, end in spans
            )
        )
        for item in items
    )


def score_pack(items: Sequence[PackItem], gold: Gold) -> Score:
    """Score one pack (``items`` in pack order: bodies first, then summaries)."""
    bodies = [item for item in items if item.body]
    changed = gold.changed_lines()
    covered = {
        (path, line)
        for path, line in changed
        if any(body.file_path == path and body.start_line <= line <= body.end_line for body in bodies)
    }
    rank = first_gold_rank((item.file_path for item in items), gold.files)
    return Score(
        file_hit=rank is not None,
        function_hit=_present(items, gold),
        body_hit=_present(bodies, gold),
        line_hit=bool(covered),
        line_coverage=len(covered) / len(changed) if changed else 0.0,
        file_rank=rank,
    )


def percentile(values: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile (``percent`` from 0 to 100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    index = max(0, math.ceil(percent / 100 * len(ordered)) - 1)
    return ordered[index]


def share_within(ranks: Sequence[int | None], k: int) -> float:
    """The share of ``ranks`` that are at most ``k`` (Acc@k); None counts as a miss."""
    if not ranks:
        return math.nan
    return sum(1 for rank in ranks if rank is not None and rank <= k) / len(ranks)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan
