"""How a context pack is scored against the fix that was merged: pure functions, no I/O.

`bench/quality/swebench.py` turns each system's answer into `PackItem`s and each SWE-bench instance into a
`Gold`, and this module says what was hit and where. Kept apart so `tests/unit/test_bench_scoring.py`
can check every rule on hand-made packs; SWE-bench Lite (`swebench.py`, `swebench_replay.py`), the
commit dev set (`commits.py`) and editor focus (`focus.py`) all score with it.

Two kinds of figure:

- **In the pack somewhere**: file hit, function hit, body hit, changed lines inside packed bodies.
- **Where in the pack** (issue #23): a pack is read top-down, so each gold item gets a rank, the place
  where it first appears in the pack's order. A file's order is the files of the bodies in pack order,
  then those of the summaries, then the file map, each file counted once at its first appearance; a
  function's order is the pack's bodies, then its summaries, each definition counted once (the file
  map names no definition). A gold item the pack lacks has no rank.

  **Acc@k** follows LocAgent (Chen et al., ACL 2025, arXiv:2503.09089; ``acc_at_k`` in
  ``utils/eval_metric.py`` of github.com/gersteinlab/LocAgent), the definition SweRank (Reddy et al.
  2025, arXiv:2505.07849) reports against: a task counts when *all* of its gold items are among the
  first k or, when it has more gold items than k, when the first k are all gold. With one gold item
  (every SWE-bench Lite task has one gold file) that is the item's rank <= k; with gold files ranked 1
  and 4, Acc@1 and Acc@5 count and Acc@3 does not. SweRank's own ``topk_accuracy`` drops the "more
  than k" clause (two gold files never count at k = 1); the two differ only there. Acc@1 is always
  "the first item is gold"; past k = 1, a task with several gold items can count at k = 1 and not at
  k = 3 (gold ranked 1 and 4), so Acc@k need not grow with k on a set with several gold items per
  task (the commit dev set). **Any@k** is the lenient reading beside it: the best-ranked gold item
  among the first k (equal to Acc@k for one gold item, and at k = 1).
  **MRR** is the mean over tasks of 1 / the rank of the best-ranked gold item (0 when none is in the
  pack), the usual first-relevant-result definition. A task with no gold item at a level (every
  changed file a test) is left out of that level's Acc@k and MRR, as LocAgent leaves it out.

  **Definition Acc@k** is function Acc@k over the gold built as LocAgent builds its own
  (``utils/benchmark/parse_oracle_patch.py``): without ``<module>``, the lines outside every
  definition (imports, globals, macros), which no pack holds as an item, and without the tasks left
  with no gold function. It is the figure the anchors of issue #23 report; function Acc@k, which
  counts ``<module>`` as a gold function no pack can place, is the stricter one beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# How the published gold names a change at the top level of a file, outside any definition.
MODULE_NAME = "<module>"

_TEST_FOLDERS = frozenset({"test", "tests", "testing"})

# The cut-offs reported at each level, those LocAgent and SweRank report on SWE-bench Lite.
FILE_ACC_KS = (1, 3, 5, 10)
FUNCTION_ACC_KS = (1, 5, 10)


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
    # Lines of a body that its source does not show (``BodyItem.left_out``): no changed line there
    # counts as covered.
    left_out: tuple[tuple[int, int], ...] = ()

    def shows(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line and not any(
            start <= line <= end for start, end in self.left_out
        )

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
class GoldRanks:
    """Where each gold item of one level (files or functions) first appears in a pack's order.

    ``positions`` holds one 1-based rank per gold item, in the gold's order, None for an item the pack
    lacks; it is empty when the task has no gold item at this level.
    """

    positions: tuple[int | None, ...]

    @property
    def best(self) -> int | None:
        """The rank of the best-ranked gold item (the one MRR counts), or None when none is packed."""
        return min((rank for rank in self.positions if rank is not None), default=None)

    def any_within(self, k: int) -> bool:
        """Any@k's rule: the best-ranked gold item among the first ``k``."""
        return self.best is not None and self.best <= k

    def within(self, k: int) -> bool:
        """Acc@k's rule (LocAgent's): every gold item among the first ``k`` or, with more gold items
        than ``k``, the first ``k`` all gold."""
        found = sum(1 for rank in self.positions if rank is not None and rank <= k)
        return bool(self.positions) and found >= min(len(self.positions), k)


@dataclass(frozen=True)
class Score:
    """What one pack got right, and where.

    ``line_hit`` says a packed body covers at least one changed line; ``line_coverage`` is the share of
    changed lines inside packed bodies. ``file_ranks`` and ``function_ranks`` place each gold file and
    gold function in the pack's order (the module docstring says how).
    """

    file_hit: bool
    function_hit: bool
    body_hit: bool
    line_hit: bool
    line_coverage: float
    file_ranks: GoldRanks
    function_ranks: GoldRanks
    # The ranks of the gold functions that are definitions (``<module>`` left out).
    definition_ranks: GoldRanks

    @property
    def file_rank(self) -> int | None:
        """The rank of the best-ranked gold file, or None when no gold file is packed."""
        return self.file_ranks.best


def gold_ranks(order: Iterable[str], gold: Iterable[str]) -> GoldRanks:
    """Each gold entry's 1-based rank among the distinct entries of ``order``, at its first appearance."""
    ranks: dict[str, int] = {}
    for entry in order:
        ranks.setdefault(entry, len(ranks) + 1)
    return GoldRanks(tuple(ranks.get(entry) for entry in dict.fromkeys(gold)))


def first_gold_rank(paths: Iterable[str], gold_files: Iterable[str]) -> int | None:
    """The 1-based rank of the first gold file among ``paths`` counted once each, or None."""
    return gold_ranks(paths, gold_files).best


def _holds(item: PackItem, function: str, span: tuple[int, int] | None) -> bool:
    """Whether ``item`` shows the gold ``function`` (``file::Qualified.name``): by its name, as a whole
    file packed as it is, or as a packed body that spans the function's lines in the base commit."""
    path = function.split("::", 1)[0]
    return (
        item.function_id == function
        or (item.whole_file and item.file_path == path)
        or (
            item.body
            and span is not None
            and item.file_path == path
            and item.start_line <= span[0]
            and span[1] <= item.end_line
        )
    )


def function_ranks(items: Sequence[PackItem], gold: Gold) -> GoldRanks:
    """Each gold function's rank among the pack's definitions (``items`` in pack order, a definition
    counted once at its first appearance, two of one name at different lines, such as Java overloads,
    twice): the place of the first item that holds it."""
    spans = {name: (start, end) for name, start, end in gold.spans}
    definitions: dict[tuple[str, int], PackItem] = {}
    for item in items:
        definitions.setdefault((item.function_id, item.start_line), item)
    return GoldRanks(
        tuple(
            next(
                (
                    place
                    for place, item in enumerate(definitions.values(), start=1)
                    if _holds(item, function, spans.get(function))
                ),
                None,
            )
            for function in dict.fromkeys(gold.functions)
        )
    )


def score_pack(items: Sequence[PackItem], gold: Gold, file_map: Sequence[str] = ()) -> Score:
    """Score one pack: ``items`` in pack order (bodies first, then summaries), then the paths its file
    map lists, which count for file hit and file rank but never for a function."""
    bodies = [item for item in items if item.body]
    changed = gold.changed_lines()
    covered = {
        (path, line)
        for path, line in changed
        if any(body.file_path == path and body.shows(line) for body in bodies)
    }
    files = gold_ranks([*(item.file_path for item in items), *file_map], gold.files)
    functions = function_ranks(items, gold)
    positions = dict(zip(dict.fromkeys(gold.functions), functions.positions, strict=True))
    return Score(
        file_hit=files.best is not None,
        function_hit=functions.best is not None,
        body_hit=function_ranks(bodies, gold).best is not None,
        line_hit=bool(covered),
        line_coverage=len(covered) / len(changed) if changed else 0.0,
        file_ranks=files,
        function_ranks=functions,
        definition_ranks=GoldRanks(
            tuple(rank for function, rank in positions.items() if not is_module(function))
        ),
    )


def is_module(function: str) -> bool:
    """Whether a gold function (``file::Qualified.name``) is the lines outside every definition."""
    return function.endswith(f"::{MODULE_NAME}")


def accuracy_at(ranks: Iterable[GoldRanks], k: int, *, any_gold: bool = False) -> float:
    """Acc@k over tasks (``GoldRanks.within``), or Any@k with ``any_gold`` (``GoldRanks.any_within``),
    tasks without gold at this level left out; NaN for none."""
    counted = [task for task in ranks if task.positions]
    hits = [task.any_within(k) if any_gold else task.within(k) for task in counted]
    return sum(hits) / len(hits) if hits else math.nan


def mean_reciprocal_rank(ranks: Iterable[GoldRanks]) -> float:
    """MRR over tasks: 1 / the best gold rank, 0 when no gold item is packed; tasks without gold at this
    level left out; NaN for none."""
    counted = [task for task in ranks if task.positions]
    reciprocal = [0.0 if task.best is None else 1 / task.best for task in counted]
    return sum(reciprocal) / len(reciprocal) if reciprocal else math.nan


def rank_figures(
    files: Sequence[GoldRanks], functions: Sequence[GoldRanks], definitions: Sequence[GoldRanks] = ()
) -> dict[str, float]:
    """The rank metrics of a set of packs, one ``GoldRanks`` per pack and level: file Acc@k and MRR,
    function Acc@k and MRR, Any@k of both levels, then definition Acc@k and MRR (NaN without
    ``definitions``, as in a run recorded before they were)."""
    return {
        **{f"file_acc@{k}": accuracy_at(files, k) for k in FILE_ACC_KS},
        "file_mrr": mean_reciprocal_rank(files),
        **{f"function_acc@{k}": accuracy_at(functions, k) for k in FUNCTION_ACC_KS},
        "function_mrr": mean_reciprocal_rank(functions),
        **{f"file_any@{k}": accuracy_at(files, k, any_gold=True) for k in FILE_ACC_KS},
        **{f"function_any@{k}": accuracy_at(functions, k, any_gold=True) for k in FUNCTION_ACC_KS},
        **{f"definition_acc@{k}": accuracy_at(definitions, k) for k in FUNCTION_ACC_KS},
        "definition_mrr": mean_reciprocal_rank(definitions),
    }


def share_within(ranks: Sequence[int | None], k: int) -> float:
    """The share of ``ranks`` that are at most ``k`` (Acc@k); None counts as a miss."""
    if not ranks:
        return math.nan
    return sum(1 for rank in ranks if rank is not None and rank <= k) / len(ranks)
