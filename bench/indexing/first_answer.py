"""How soon a fresh clone answers: from a team's published base, against building its own index.

The work tree must be a clean git checkout. One run, on a throw-away PostgreSQL (as
``latency/pg_search.py`` starts it): a CI-like ``smartctx index --publish`` of the tree into its own
index folder, then, ``--rounds`` times each, interleaved, a live workspace (the one the language
server and the MCP server run) opening the tree with an empty index folder:

* **base**: with the published base (``TeamBase``); the time from adding the folder to the first
  pack, which the base answers while the folder's own index is still being built;
* **cold**: without one; the time from adding the folder to the first pack once its own first index
  is ready (the answer a user waits for without a base).

Both ask the first SWE-bench Lite problem statement of ``--repo`` at 8k; reported: each run's
seconds, the medians and their ratio.

    PYTHONPATH=server .venv/bin/python -m bench.indexing.first_answer /tmp/django-clone
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.postgres_server import start

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.latency.pg_search import uptime
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.live.tasks import BackgroundTasks
from smartctx.live.workspace import Folder, Workspace
from smartctx.parsing.languages import is_source
from smartctx.team.reading import TeamBase

REPOSITORY = "bench.invalid/first-answer"
# How often the runs look whether the base is found or the index is ready.
POLL_S = 0.01


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a clean git checkout")
    parser.add_argument(
        "--repo", default="django/django", help="whose first SWE-bench Lite statement is asked"
    )
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "first_answer.json")
    args = parser.parse_args()
    root = args.root.resolve()
    task = problem_statements(args.repo, args.data)[0]
    load_before = uptime()
    server = start()
    runs: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="smartctx-first-answer-") as temp:
            began = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "smartctx", "index", str(root), "--quiet", "--index-dir",
                 str(Path(temp) / "ci-index"), "--publish", server.url(), "--repository", REPOSITORY],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            publish_s = time.perf_counter() - began
            for round_number in range(args.rounds):
                for kind in ("base", "cold") if round_number % 2 == 0 else ("cold", "base"):
                    base = TeamBase(server.url(), REPOSITORY, is_source) if kind == "base" else None
                    index_dir = Path(temp) / f"{kind}-{round_number}"
                    seconds, answered_from_base = first_answer(root, index_dir, base, task)
                    runs.append(
                        {
                            "round": round_number,
                            "kind": kind,
                            "seconds": seconds,
                            "from_base": answered_from_base,
                        }
                    )
                    print(
                        f"{kind:5s} round {round_number}: {seconds:6.2f} s"
                        f" (answered from the base: {answered_from_base})"
                    )
    finally:
        server.stop()
    base_s = statistics.median(run["seconds"] for run in runs if run["kind"] == "base")
    cold_s = statistics.median(run["seconds"] for run in runs if run["kind"] == "cold")
    print(f"\npublish (index + copy) {publish_s:.1f} s")
    print("| first answer of a fresh clone | median s |\n|---|---|")
    print(f"| from the published base | {base_s:.2f} |\n| after a cold local index | {cold_s:.2f} |")
    print(f"base ÷ cold: {base_s / cold_s:.3f}")
    print(f"load: before {load_before}; after {uptime()}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                     "publish_s": publish_s, "runs": runs}, indent=1))  # fmt: skip
    print(f"written: {args.json}")


def first_answer(root: Path, index_dir: Path, base: TeamBase | None, task: str) -> tuple[float, bool]:
    """Seconds from adding the folder to its first pack, and whether the base answered it."""
    tasks = BackgroundTasks()
    workspace = Workspace(index_dir, lambda uri, counts: None, tasks, base=base)
    try:
        began = time.perf_counter()
        folder = workspace.add(root.as_uri(), str(root), root.name)
        assert folder is not None
        folder.index.start()
        while not _can_answer(folder, expect_base=base is not None):
            time.sleep(POLL_S)
        pack = workspace.context([folder], [ContextRequest(task, ContextOptions())], lambda: False)
        seconds = time.perf_counter() - began
        return seconds, any(warning.code == "answered-from-base" for warning in pack.warnings)
    finally:
        workspace.close()


def _can_answer(folder: Folder, *, expect_base: bool) -> bool:
    if expect_base and folder.base is not None:
        return True
    return folder.index.status().state == "ready"


if __name__ == "__main__":
    main()
