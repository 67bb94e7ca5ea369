"""Context quality on the multi-language commit dev set (issue #11): C, Go, Rust, TypeScript, Java, Ruby.

The tasks are real commits of ten public repositories (``commit_tasks.py`` says which commits and
why): the message is the task, what the commit changed in its parent is the gold. They run through
the SWE-bench machinery unchanged (``swebench.py``): one work tree per repository, ``git checkout``
of each task's parent and an incremental index update, then smartctx, baseline (a) (whole files by
BM25) and baseline (b) (the seed recipe) at each budget, scored by ``swebench_scoring.py``. The
report is per language, with plain BM25's top-10 files as the figure to beat, then where the gold
first appears in smartctx's packs (file and function Acc@k, MRR) per language and per repository.

    .venv/bin/python -m bench.quality.commits extract                # writes bench/out/commit_tasks.jsonl
    .venv/bin/python -m bench.quality.commits run --repo fd,sinatra  # a slice while iterating
    .venv/bin/python -m bench.quality.commits run                    # the figures to report
    .venv/bin/python -m bench.quality.commits coverage               # does the parser see these repos?

``--set train`` does the same for the training set of the learned ranking (``TRAIN_REPOS``, issue
#23), with its own task file, work trees and indexes; ``run --keep-indexes DIR`` keeps the indexes
``swebench_replay.py`` ranks again:

    .venv/bin/python -m bench.quality.commits extract --set train --per-repo 25
    .venv/bin/python -m bench.quality.commits run --set train --budgets 8000 --keep-indexes DIR

``--set dev-wide`` is the dev set's wider Rust and TypeScript extension (``DEV_WIDE_REPOS``, issue
#23 item 6), kept apart so the dev set's 280 tasks stay as they were. ``--set tracebacks`` takes only
commits whose message quotes a Python traceback (``TRACEBACK_REPOS``, ``MESSAGE_RULES``): the
bug reports pasted from a crash, from which the stack frames' weights are learned (commit messages
seldom quote one, so neither the training set nor the dev set can teach them). ``--set
train-described`` is the training set's repositories again, with only the commits whose message is
at least ``DESCRIBED_MIN_CHARS`` long: tasks described at an issue's length, which subjects are not.
``--set train-changelog`` takes the commits that add a changelog entry, and the entry is the task:
the change told to the project's users, in their words, as an issue tells it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.datasets import MIRRORS, OUT_DIR
from bench.quality.commit_tasks import (
    DEFAULT_PER_REPO,
    MESSAGE_RULES,
    REPO_SETS,
    TRAINING_SETS,
    DevRepo,
    MessageRule,
    extract,
    forbidden_for_training,
    is_test_path,
    load_tasks,
    meta_path,
    write_tasks,
)
from bench.quality.parser_coverage import print_coverage, repo_coverage
from bench.quality.swebench import (
    ALL,
    DEFAULT_BUDGETS,
    Bench,
    _budgets,
    _cell,
    _label,
    format_table,
    grouped,
    rank_table,
    summarise,
)
from bench.quality.swebench_repos import mirror_path, short_name
from bench.quality.swebench_scoring import share_within

# Each set's default files and folders: the task file, the JSON report, the work trees, the indexes
# and the parser coverage report.
DEFAULTS: dict[str, dict[str, Path]] = {
    "dev": {
        "data": OUT_DIR / "commit_tasks.jsonl",
        "out": OUT_DIR / "commits.json",
        "repos_dir": Path("/work/benchrepos/devset-repos"),
        "index_root": Path("/work/benchrepos/devset-index"),
        "coverage_out": OUT_DIR / "commits_parser_coverage.json",
    },
    "dev-wide": {
        "data": OUT_DIR / "devwide_tasks.jsonl",
        "out": OUT_DIR / "commits-devwide.json",
        "repos_dir": Path("/work/benchrepos/devwide-repos"),
        "index_root": Path("/work/benchrepos/devwide-index"),
        "coverage_out": OUT_DIR / "commits_parser_coverage-devwide.json",
    },
    "train": {
        "data": OUT_DIR / "train_tasks.jsonl",
        "out": OUT_DIR / "commits-train.json",
        "repos_dir": Path("/work/benchrepos/train-repos"),
        "index_root": Path("/work/benchrepos/train-index"),
        "coverage_out": OUT_DIR / "commits_parser_coverage-train.json",
    },
    # The training set's work trees and indexes serve both of its task files.
    "train-described": {
        "data": OUT_DIR / "train_described_tasks.jsonl",
        "out": OUT_DIR / "commits-train-described.json",
        "repos_dir": Path("/work/benchrepos/train-repos"),
        "index_root": Path("/work/benchrepos/train-index"),
        "coverage_out": OUT_DIR / "commits_parser_coverage-train.json",
    },
    "train-changelog": {
        "data": OUT_DIR / "train_changelog_tasks.jsonl",
        "out": OUT_DIR / "commits-train-changelog.json",
        "repos_dir": Path("/work/benchrepos/train-repos"),
        "index_root": Path("/work/benchrepos/train-index"),
        "coverage_out": OUT_DIR / "commits_parser_coverage-train.json",
    },
    "tracebacks": {
        "data": OUT_DIR / "traceback_tasks.jsonl",
        "out": OUT_DIR / "commits-tracebacks.json",
        "repos_dir": Path("/work/benchrepos/traceback-repos"),
        "index_root": Path("/work/benchrepos/traceback-index"),
        "coverage_out": OUT_DIR / "commits_parser_coverage-tracebacks.json",
    },
}
DEFAULT_TASKS = DEFAULTS["dev"]["data"]
DEFAULT_OUT = DEFAULTS["dev"]["out"]
# The issue's comparison target: the gold file among plain BM25's first ten whole files.
BM25_TOP_K = 10


class CommitBench(Bench):
    """``swebench.Bench`` on commit tasks: the multi-language test rule, and summaries per language."""

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(args)
        self.is_test = is_test_path

    def by_language(self) -> dict[str, dict[str, Any]]:
        """For each language and for all tasks: every system's summary and BM25's top-k file hit."""
        repos = REPO_SETS[self.args.set]
        language_of_repo = {repo.name: repo.language for repo in repos}
        groups = {
            language: [row for row in self.rows if language_of_repo[row["repo"]] == language]
            for language in dict.fromkeys(repo.language for repo in repos)
        }
        groups[ALL] = list(self.rows)
        figures: dict[str, dict[str, Any]] = {}
        for language, rows in groups.items():
            if not rows:
                continue
            figures[language] = {
                "tasks": len(rows),
                "repos": sorted({row["repo"] for row in rows}),
                "systems": {
                    f"{system}@{budget}": summarise(
                        [row["results"][f"{system}@{budget}"] for row in rows], budget
                    )
                    for system in self.systems
                    for budget in self.budgets
                },
                "bm25_top": {
                    kind: share_within([row["bm25_file_rank"][kind] for row in rows], BM25_TOP_K)
                    for kind in ("all", "non_test")
                },
            }
        return figures

    def document(self) -> dict[str, Any]:
        document = super().document()
        document["by_language"] = self.by_language()
        document["tasks_meta"] = str(meta_path(self.args.data))
        return document


def print_report(bench: CommitBench) -> None:
    figures = bench.by_language()
    smallest = min(bench.budgets)
    print(f"\nCommit {bench.args.set} set, {len(bench.rows)} task(s); gold excludes test files")
    header = ["language", "tasks"]
    for budget in bench.budgets:
        label = _label(f"smartctx@{budget}").split("@")[1]
        header += [f"file {label}", f"func {label}", f"body {label}", f"tokens {label}"]
    header += [f"BM25 top-{BM25_TOP_K}", f"BM25 top-{BM25_TOP_K} no tests"]
    rows = []
    for language, group in figures.items():
        row = [language, str(group["tasks"])]
        for budget in bench.budgets:
            result = group["systems"][f"smartctx@{budget}"]
            row += [
                _cell("{:.1%}", result["file_hit"]),
                _cell("{:.1%}", result["function_hit"]),
                _cell("{:.1%}", result["body_hit"]),
                _cell("{:,.0f}", result["tokens"]),
            ]
        row += [_cell("{:.1%}", group["bm25_top"]["all"]), _cell("{:.1%}", group["bm25_top"]["non_test"])]
        rows.append(row)
    print("\nsmartctx, per language")
    print(format_table(header, rows))
    print(
        f"\nbaselines, file / function / body hit (tokens); (a) at every budget, (b) at {smallest // 1000}k"
    )
    baseline_header = ["language", *(_label(f"baseline-a@{budget}") for budget in bench.budgets)]
    baseline_header.append(_label(f"baseline-b@{smallest}"))
    baseline_rows = []
    for language, group in figures.items():
        cells = [language]
        for name in (*(f"baseline-a@{budget}" for budget in bench.budgets), f"baseline-b@{smallest}"):
            result = group["systems"][name]
            cells.append(
                f"{_cell('{:.0%}', result['file_hit'])} / {_cell('{:.0%}', result['function_hit'])}"
                f" / {_cell('{:.0%}', result['body_hit'])} ({_cell('{:,.0f}', result['tokens'])})"
            )
        baseline_rows.append(cells)
    print(format_table(baseline_header, baseline_rows))
    for budget in bench.budgets:
        for field in ("language", "repo"):
            print(f"\nsmartctx at {budget // 1000}k per {field}: where the gold first appears, and hits")
            print(rank_table(grouped(bench.rows, field, f"smartctx@{budget}"), budget, field))
    overall = figures.get(ALL, {}).get("systems", {})
    latency = [
        f"{_label(name)} p50 {result['latency_ms_p50']:.0f} / p95 {result['latency_ms_p95']:.0f} ms"
        for name, result in overall.items()
        if name.startswith("smartctx@")
    ]
    if latency:
        print("\n" + "; ".join(latency))
    for name, result in overall.items():
        if result["errors"] or result["over_budget"]:
            print(f"{_label(name)}: {result['errors']} error(s), {result['over_budget']:.1%} over budget")
    if bench.skipped:
        print(f"\n{len(bench.skipped)} task(s) skipped; reasons in the JSON")
    print(f"\nper-task rows: {bench.args.out}")


def run(args: argparse.Namespace) -> int:
    if not args.data.exists():
        print(f"no task file at {args.data}: run '{Path(__file__).name} extract' first", file=sys.stderr)
        return 2
    in_set = {repo.name for repo in REPO_SETS[args.set]}
    tasks = [task for task in load_tasks(args.data) if task["repo"] in in_set]
    if args.repo:
        wanted = set(args.repo)
        tasks = [task for task in tasks if task["repo"] in wanted or short_name(task["repo"]) in wanted]
    # Per repository, parents in commit-date order: each checkout moves the work tree a little.
    tasks.sort(key=lambda task: (task["repo"], task["base_commit_date"], task["instance_id"]))
    if args.limit:
        tasks = tasks[: args.limit]
    if not tasks:
        print("no task selected: check --repo and --limit", file=sys.stderr)
        return 2
    # The fields swebench.Bench reads from its arguments.
    args.subset, args.dump_ranking, args.history = "commits", False, False
    bench = CommitBench(args)
    started = time.perf_counter()
    try:
        bench.run(tasks)
    finally:
        bench.write()
    print_report(bench)
    print(f"{time.perf_counter() - started:.0f} s for {len(bench.rows)} task(s)")
    return 0


def selected_repos(args: argparse.Namespace) -> list[DevRepo]:
    """The repositories of the chosen set that ``--repo`` names (all of them without it)."""
    wanted = set(args.repo)
    return [repo for repo in REPO_SETS[args.set] if not wanted or {repo.name, short_name(repo.name)} & wanted]


def run_extract(args: argparse.Namespace) -> int:
    repos = selected_repos(args)
    if args.set in TRAINING_SETS and (forbidden := forbidden_for_training(repos)):
        print(f"never train on {', '.join(forbidden)}: remove them from TRAIN_REPOS", file=sys.stderr)
        return 2
    started = time.perf_counter()
    selections = extract(args.mirrors_dir, repos, args.per_repo, MESSAGE_RULES.get(args.set, MessageRule()))
    write_tasks(args.data, selections)
    rows = [
        [
            selection.repo.name,
            selection.repo.language,
            selection.repo.head[:10],
            str(len(selection.tasks)),
            str(selection.examined),
            ", ".join(f"{reason} {count}" for reason, count in selection.skipped.most_common()),
        ]
        for selection in selections
    ]
    print(format_table(["repo", "language", "head", "tasks", "examined", "skipped"], rows))
    total = sum(len(selection.tasks) for selection in selections)
    print(f"\n{total} tasks in {args.data} ({time.perf_counter() - started:.0f} s)")
    short = [selection.repo.name for selection in selections if len(selection.tasks) < args.per_repo]
    if short:
        print(f"fewer than {args.per_repo} tasks found in: {', '.join(short)}", file=sys.stderr)
        return 1
    return 0


def run_coverage(args: argparse.Namespace) -> int:
    repos = selected_repos(args)
    started = time.perf_counter()
    reports = [repo_coverage(repo, mirror_path(args.mirrors_dir, repo.name)) for repo in repos]
    print_coverage(reports)
    out: Path = args.coverage_out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([report.as_json() for report in reports], indent=1) + "\n", encoding="utf-8")
    print(f"\nper-repository figures: {out} ({time.perf_counter() - started:.0f} s)")
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--repo",
        type=lambda text: [part for part in text.split(",") if part],
        default=[],
        help="only these repositories, by short or full name (fd,sinatra or sharkdp/fd)",
    )
    common.add_argument(
        "--mirrors-dir",
        type=Path,
        default=MIRRORS,
        help="the fetched repositories, as <owner>+<name>/repo git directories",
    )
    common.add_argument(
        "--set",
        choices=sorted(REPO_SETS),
        default="dev",
        help="the pinned repositories: the dev set, its wider extension, the ranking's training set (all"
        " its commits, those described at an issue's length, or their changelog entries), or bug reports"
        " that quote a stack trace",
    )
    common.add_argument(
        "--data", type=Path, default=None, help="the task file (JSON lines; each set has its own default)"
    )
    extract_command = commands.add_parser("extract", parents=[common], help="select the tasks from git")
    extract_command.add_argument(
        "--per-repo", type=int, default=DEFAULT_PER_REPO, help="tasks per repository"
    )
    run_command = commands.add_parser("run", parents=[common], help="pack and score every task")
    run_command.add_argument("--limit", type=int, default=0, help="run only the first N selected tasks")
    run_command.add_argument(
        "--budgets", type=_budgets, default=DEFAULT_BUDGETS, help="token budgets, e.g. 8000,16000"
    )
    run_command.add_argument(
        "--repos-dir",
        type=Path,
        default=None,
        help="one work tree per repository (cloned from --mirrors-dir when missing)",
    )
    run_command.add_argument(
        "--index-root", type=Path, default=None, help="one persistent index folder per repository"
    )
    run_command.add_argument("--out", type=Path, default=None, help="where the JSON goes")
    run_command.add_argument(
        "--keep-indexes",
        type=Path,
        default=None,
        help="copy each task's index, as ranked, to DIR/<instance_id>.sqlite (for swebench_replay.py)",
    )
    coverage_command = commands.add_parser(
        "coverage", parents=[common], help="how much of each repository's code the parser's tags capture"
    )
    coverage_command.add_argument("--coverage-out", type=Path, default=None)
    args = parser.parse_args(argv)
    # The paths left unset take the chosen set's defaults.
    for name, default in DEFAULTS[args.set].items():
        if getattr(args, name, default) is None:
            setattr(args, name, default)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command == "extract":
        return run_extract(args)
    if args.command == "coverage":
        return run_coverage(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
