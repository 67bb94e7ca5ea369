"""The data the benchmarks read and the folder they write to: SWE-bench Lite and the never-train list
in the shared steering folder beside the checkout (``../shared/bench/``, whose README says how its
repositories are fetched), the commit tasks (``quality/commits.py extract``), the fetched
repositories, and this checkout's own files."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

# The checkout this bench/ belongs to: its sources and test fixtures are data for some benchmarks.
CHECKOUT = Path(__file__).resolve().parents[1]
SHARED_BENCH = CHECKOUT.parent / "shared" / "bench"
SWE_LITE = SHARED_BENCH / "swe_lite.jsonl"
# The repositories no model may learn from, one owner/name a line ("#" starts a comment).
NEVER_TRAIN = SHARED_BENCH / "never_train.txt"
# Where the fetch tool puts each repository, as <owner>+<name>/repo git directories.
MIRRORS = Path("/work/.mirror")
# Every script's JSON unless it is told where (git-ignored).
OUT_DIR = CHECKOUT / "bench" / "out"


def problem_statements(repo: str, data: Path = SWE_LITE) -> list[str]:
    """The problem statements of ``repo``'s SWE-bench Lite instances, in the file's order: the task
    texts of the latency benchmarks."""
    rows = map(json.loads, data.read_text().splitlines())
    return [row["problem_statement"] for row in rows if row["repo"] == repo]


def commit_task_statements(data: Path, root: Path) -> list[str]:
    """The problem statements of a commit-task file (``quality/commits.py extract``'s JSONL) whose
    repository sits in ``root`` as a folder ``owner+name`` (``indexing/monorepo.py``'s layout): the
    task texts of a benchmark on a tree SWE-bench Lite has no tasks for. The repositories take turns
    (the first task of each, then the second, …, each repository's in the file's order), so that the
    first N tasks spread over every repository instead of filling up with the first."""
    by_repository: dict[str, list[str]] = {}
    for row in map(json.loads, data.read_text().splitlines()):
        if (root / row["repo"].replace("/", "+")).is_dir():
            by_repository.setdefault(row["repo"], []).append(row["problem_statement"])
    turns = itertools.zip_longest(*by_repository.values())
    return [text for turn in turns for text in turn if text is not None]


def task_statements(root: Path, repo: str, data: Path, commit_tasks: Path | None) -> list[str]:
    """A latency benchmark's task texts: ``commit_tasks``' for the repositories in ``root`` when given,
    else ``repo``'s SWE-bench Lite problem statements from ``data``."""
    if commit_tasks is not None:
        return commit_task_statements(commit_tasks, root)
    return problem_statements(repo, data)
