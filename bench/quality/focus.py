"""Editor focus and context quality: the same tasks packed with and without editor state.

Each case is a task on a repository at a commit, with its answer key (files and functions the fix
changed; tests never count). Every case is packed once per *focus variant* and scored as
``swebench.py`` scores packs (file, function and body hit):

* ``none``: no editor state, the baseline.
* ``random``: one file drawn at random from the index (not a gold file, not a test), as the active
  file with the cursor on a random line: editor state that has nothing to do with the task. It must
  not cost more than a point.
* ``realistic`` (commit dev set only): what the author's editor plausibly held just before the
  commit, without the answer: open files = the files the same author changed in their previous
  commit, recent edits = the files changed by the commits of the preceding day, each as old as its
  commit is before the task's. The task's own commit never contributes.

    .venv/bin/python -m bench.quality.focus commits               # needs bench/out/commit_tasks.jsonl
    .venv/bin/python -m bench.quality.focus swebench --subset stratified
    .venv/bin/python -m bench.quality.focus swebench --repo flask --limit 3
    .venv/bin/python -m bench.quality.focus commits --budget 2000  # smaller packs: more for focus to decide

(``bench/quality/commits.py extract`` writes the commit tasks.)

Prints one table (per variant: hit rates, the change against ``none``, how often the gold file is
the pack's first file, p50/p95 of the focus stage) and writes per-case rows as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import Any

from bench.datasets import MIRRORS, OUT_DIR, SWE_LITE
from bench.quality.commit_tasks import commits_before, load_tasks, previous_author_commits, task_git_dir
from bench.quality.commit_tasks import is_test_path as is_commit_test_path
from bench.quality.swebench import STRATIFIED_STEP, gold_spans, pack_items
from bench.quality.swebench_repos import RepositoryError, checkout, prepare_work_tree, short_name
from bench.quality.swebench_scoring import Gold, is_test_path, score_pack
from bench.stats import nearest_rank
from smartctx.core.context import ContextOptions, ContextRequest, Focus, RecentEdit
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.live.edits import MAX_REMEMBERED_EDITS
from smartctx.retrieval.pipeline import build_context
from smartctx.store.index_store import IndexStore
from smartctx.store.snapshot import IndexSnapshot

DEFAULT_OUT = OUT_DIR / "focus.json"
DEFAULT_TASKS = OUT_DIR / "commit_tasks.jsonl"
# The random file of a case is drawn with this seed and the case's id, so every run draws the same.
RANDOM_SEED = "smartctx-focus-1"
BASELINE = "none"
RANDOM = "random"
REALISTIC = "realistic"
HITS = ("file_hit", "function_hit", "body_hit")
# The realistic editor state: the recent edits are the preceding day's commits. The open files are
# cut to what the extension sends (client-vscode/src/focus_state.ts), the recent edits to what the
# server remembers (live/edits.py), which it adds to the extension's 20.
RECENT_WINDOW_HOURS = 24.0
MAX_OPEN_FILES = 20
MAX_RECENT_EDITS = MAX_REMEMBERED_EDITS


@dataclass(frozen=True)
class Case:
    """One task: where it runs, what answers it, and the editor states to try beside none."""

    case_id: str
    repo: str
    commit: str
    task: str
    gold: Gold
    # Variant name -> focus, for variants known before indexing (``realistic``).
    focus: dict[str, Focus] = field(default_factory=dict)


def swebench_cases(data: Path, subset: str, repos: Sequence[str], limit: int) -> list[Case]:
    """SWE-bench Lite instances (every fifth for ``stratified``), in repository and date order."""
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = rows[::STRATIFIED_STEP] if subset == "stratified" else rows
    if repos:
        chosen = [row for row in chosen if row["repo"] in repos or short_name(row["repo"]) in repos]
    chosen = sorted(
        chosen,
        key=lambda row: (row["repo"], datetime.fromisoformat(row["base_commit_date"]), row["instance_id"]),
    )
    cases = [
        Case(
            row["instance_id"],
            row["repo"],
            row["base_commit"],
            str(row["problem_statement"]),
            Gold.from_instance(row),
        )
        for row in chosen
    ]
    return cases[:limit] if limit else cases


def commit_cases(tasks: Path, mirrors_dir: Path, repos: Sequence[str], limit: int) -> list[Case]:
    """The commit dev set, each task with the editor state its author plausibly had (see the module
    docstring), in repository order."""
    cases = []
    for row in load_tasks(tasks):
        if repos and row["repo"] not in repos and short_name(row["repo"]) not in repos:
            continue
        git_dir = task_git_dir(mirrors_dir, row)
        cases.append(
            Case(
                row["instance_id"],
                row["repo"],
                row["base_commit"],
                str(row["problem_statement"]),
                Gold.from_instance(row),
                {REALISTIC: realistic_focus(git_dir, row)},
            )
        )
    cases.sort(key=lambda case: case.repo)
    return cases[:limit] if limit else cases


def realistic_focus(git_dir: Path, task: dict[str, Any]) -> Focus:
    """Open: the files of the author's previous commit. Recent edits: the files of the commits of the
    day before the task, newest first, each as old as its commit is before the task's."""
    previous = previous_author_commits(git_dir, task)
    opened = previous[0].files if previous else ()
    task_time = datetime.fromisoformat(str(task["author_date"]))
    edits: dict[str, float] = {}
    for commit in commits_before(git_dir, task, RECENT_WINDOW_HOURS):
        age_s = (task_time - datetime.fromisoformat(commit.author_date)).total_seconds()
        for path in commit.files:
            edits.setdefault(path, age_s)
    return Focus(
        open_paths=tuple(dict.fromkeys(opened)),
        recent_edits=tuple(RecentEdit(path, age) for path, age in edits.items()),
    )


def _is_test(path: str) -> bool:
    """Test code by either set's rule: SWE-bench's Python one or the commit set's."""
    return is_test_path(path) or is_commit_test_path(path)


def random_focus(case: Case, snapshot: IndexSnapshot) -> Focus:
    """A file that has nothing to do with the task as the active file, the cursor on a random line."""
    drawn = random.Random(f"{RANDOM_SEED}:{case.case_id}")
    gold = set(case.gold.files)
    paths = [path for path in snapshot.file_paths() if path not in gold and not _is_test(path)]
    path = drawn.choice(paths)
    last_line = max((node.end_line for node in snapshot.nodes_in_file(path)), default=1)
    return Focus(active_path=path, cursor_line=drawn.randint(1, last_line))


@dataclass
class Run:
    """One scored pack."""

    file_hit: bool
    function_hit: bool
    body_hit: bool
    # The place of the first gold file among the pack's files (bodies first), or None.
    file_rank: int | None
    focus_ms: float
    total_ms: float
    bodies: list[str]
    error: str | None = None


def pack_and_score(
    case: Case,
    gold: Gold,
    focus: Focus,
    snapshot: IndexSnapshot,
    sources: WorkspaceSources,
    counter: TokenCounter,
    options: ContextOptions,
) -> Run:
    started = time.perf_counter()
    try:
        pack = build_context(ContextRequest(case.task, options, focus), snapshot, counter, sources)
    except Exception as error:
        traceback.print_exc()
        return Run(False, False, False, None, 0.0, 0.0, [], f"{type(error).__name__}: {error}")
    total_ms = (time.perf_counter() - started) * 1000

    items = pack_items(pack)
    score = score_pack(items, gold)
    return Run(
        score.file_hit,
        score.function_hit,
        score.body_hit,
        score.file_rank,
        pack.timings_ms.get("focus", 0.0),
        total_ms,
        [item.function_id for item in items if item.body],
    )


class Bench:
    def __init__(self, args: argparse.Namespace, variants: Sequence[str]) -> None:
        self.args = args
        self.variants = (BASELINE, *variants)
        self.counter = TokenCounter()
        self.options = ContextOptions(budget_tokens=args.budget)
        self.rows: list[dict[str, Any]] = []
        self.skipped: list[dict[str, str]] = []

    def run(self, cases: Sequence[Case]) -> None:
        for repo, group in groupby(cases, key=lambda case: case.repo):
            self.run_repo(repo, list(group))
            self.write()

    def run_repo(self, repo: str, cases: list[Case]) -> None:
        try:
            tree = prepare_work_tree(repo, self.args.repos_dir, self.args.mirrors_dir)
        except RepositoryError as error:
            print(f"skipping {len(cases)} case(s): {error}", flush=True)
            self.skipped.extend({"case": case.case_id, "reason": str(error)} for case in cases)
            return
        store = IndexStore(tree, self.args.index_root / short_name(repo))
        indexer = Indexer(tree, store, IndexConfig())
        sources = WorkspaceSources(tree)
        try:
            for case in cases:
                try:
                    self.rows.append(self.run_case(case, tree, store, indexer, sources))
                except Exception as error:
                    traceback.print_exc()
                    self.skipped.append({"case": case.case_id, "reason": f"{type(error).__name__}: {error}"})
        finally:
            store.close()

    def run_case(
        self, case: Case, tree: Path, store: IndexStore, indexer: Indexer, sources: WorkspaceSources
    ) -> dict[str, Any]:
        checkout(tree, case.commit)
        report = indexer.reconcile()
        runs: dict[str, Run] = {}
        with store.snapshot() as snapshot:
            gold = replace(case.gold, spans=gold_spans(snapshot, case.gold))
            indexed = set(snapshot.file_paths())
            for variant in self.variants:
                focus = self.focus_for(variant, case, snapshot, indexed)
                runs[variant] = pack_and_score(
                    case, gold, focus, snapshot, sources, self.counter, self.options
                )
        row = {
            "case": case.case_id,
            "repo": case.repo,
            "commit": case.commit,
            "index_s": report.seconds,
            "gold_files": list(gold.files),
            "focus": {variant: _focus_json(case.focus.get(variant)) for variant in self.variants},
            "runs": {variant: vars(run) for variant, run in runs.items()},
        }
        marks = "  ".join(
            f"{variant} "
            + "".join(m if getattr(runs[variant], f) else "." for m, f in zip("FfB", HITS, strict=True))
            for variant in self.variants
        )
        print(f"{case.case_id:<40} index {report.seconds:5.1f}s  {marks}", flush=True)
        return row

    def focus_for(self, variant: str, case: Case, snapshot: IndexSnapshot, indexed: set[str]) -> Focus:
        if variant == BASELINE:
            return Focus()
        if variant == RANDOM:
            return random_focus(case, snapshot)
        return _indexed_only(case.focus[variant], indexed)

    def summary(self) -> dict[str, dict[str, float]]:
        table: dict[str, dict[str, float]] = {}
        for variant in self.variants:
            runs = [row["runs"][variant] for row in self.rows]
            if not runs:
                continue
            table[variant] = {
                **{hit: 100 * statistics.mean(float(run[hit]) for run in runs) for hit in HITS},
                "file_acc1": 100 * statistics.mean(float(run["file_rank"] == 1) for run in runs),
                "focus_ms_p50": nearest_rank([run["focus_ms"] for run in runs], 50),
                "focus_ms_p95": nearest_rank([run["focus_ms"] for run in runs], 95),
                "cases": len(runs),
            }
        return table

    def write(self) -> None:
        out: Path = self.args.out
        out.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "config": {key: str(value) for key, value in vars(self.args).items()},
            "summary": self.summary(),
            "skipped": self.skipped,
            "cases": self.rows,
        }
        out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def _indexed_only(focus: Focus, indexed: set[str]) -> Focus:
    """The focus without files the index does not hold (deleted or renamed since, or never code), cut
    to as many files as the extension sends."""
    return replace(
        focus,
        active_path=focus.active_path if focus.active_path in indexed else None,
        visible_paths=tuple(path for path in focus.visible_paths if path in indexed)[:MAX_OPEN_FILES],
        open_paths=tuple(path for path in focus.open_paths if path in indexed)[:MAX_OPEN_FILES],
        recent_edits=tuple(edit for edit in focus.recent_edits if edit.path in indexed)[:MAX_RECENT_EDITS],
    )


def _focus_json(focus: Focus | None) -> dict[str, Any] | None:
    if focus is None:
        return None
    return {
        "open": list(focus.visible_paths + focus.open_paths),
        "recent": [[edit.path, round(edit.age_s)] for edit in focus.recent_edits],
    }


def print_report(bench: Bench) -> None:
    summary = bench.summary()
    if BASELINE not in summary:
        print("no case ran")
        return
    base = summary[BASELINE]
    print(
        "\n| variant | cases | file hit | function hit | body hit | Δ file | Δ function | Δ body"
        " | gold file first | focus p50 ms | focus p95 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for variant, figures in summary.items():
        deltas = " | ".join(f"{figures[hit] - base[hit]:+.1f}" for hit in HITS)
        print(
            f"| {variant} | {figures['cases']:.0f} | "
            + " | ".join(f"{figures[hit]:.1f} %" for hit in HITS)
            + f" | {deltas} | {figures['file_acc1']:.1f} % | {figures['focus_ms_p50']:.1f}"
            f" | {figures['focus_ms_p95']:.1f} |"
        )
    if bench.skipped:
        print(f"\nskipped {len(bench.skipped)}: " + ", ".join(item["case"] for item in bench.skipped))


def _names(text: str) -> list[str]:
    return [part for part in text.split(",") if part]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", choices=("commits", "swebench"), help="which tasks")
    parser.add_argument("--data", type=Path, help=f"default {SWE_LITE} or {DEFAULT_TASKS}")
    parser.add_argument("--subset", choices=("stratified", "all"), default="stratified")
    parser.add_argument(
        "--repo", type=_names, default=[], help="only these repositories (short or full names)"
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases")
    parser.add_argument(
        "--budget",
        type=int,
        default=ContextOptions().budget_tokens,
        help="the packs' token budget (a smaller one leaves focus more to decide)",
    )
    parser.add_argument("--repos-dir", type=Path, default=Path("/work/benchrepos/focus-repos"))
    parser.add_argument("--mirrors-dir", type=Path, default=MIRRORS)
    parser.add_argument("--index-root", type=Path, default=Path("/work/benchrepos/focus-index"))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser.parse_args(argv)


CaseLoader = Callable[[argparse.Namespace], tuple[list[Case], tuple[str, ...]]]


def _swebench(args: argparse.Namespace) -> tuple[list[Case], tuple[str, ...]]:
    return swebench_cases(args.data or SWE_LITE, args.subset, args.repo, args.limit), (RANDOM,)


def _commits(args: argparse.Namespace) -> tuple[list[Case], tuple[str, ...]]:
    cases = commit_cases(args.data or DEFAULT_TASKS, args.mirrors_dir, args.repo, args.limit)
    return cases, (REALISTIC, RANDOM)


LOADERS: dict[str, CaseLoader] = {"swebench": _swebench, "commits": _commits}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    cases, variants = LOADERS[args.set](args)
    if not cases:
        print("no case selected: check --repo and --limit", file=sys.stderr)
        return 2
    bench = Bench(args, variants)
    started = time.perf_counter()
    try:
        bench.run(cases)
    finally:
        bench.write()
    print_report(bench)
    print(f"\n{time.perf_counter() - started:.0f} s for {len(bench.rows)} case(s); written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
