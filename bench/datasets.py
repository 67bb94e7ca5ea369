"""The data the benchmarks read and the folder they write to: SWE-bench Lite and the never-train list
in the shared steering folder beside the checkout (``../shared/bench/``, whose README says how its
repositories are fetched), the fetched repositories, and this checkout's own files."""

from __future__ import annotations

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
