"""How soon a fresh clone answers: from a team's published base, against building its own index.

The work tree must be a clean git checkout. One run, on a throw-away PostgreSQL (as
``latency/pg_search.py`` starts it): a CI-like ``smartctx index --publish`` of the tree into its own
index folder, then, ``--rounds`` times each, interleaved, a live workspace (the one the language
server and the MCP server run) opening the tree with an empty index folder:

* **base**: with the published base (``TeamBase``); the time from adding the folder to the first
  pack, which the base answers while the folder's own index is still being built;
* **cold**: without one; the time from adding the folder to the first pack once its own first index
  is ready (the answer a user waits for without a base).

Both ask the first SWE-bench Lite problem statement of ``--repo`` at 8k, or with
``--commit-tasks`` the first commit task of the tree's repositories (a monorepo of
``indexing/monorepo.py``, which SWE-bench has no tasks for); reported: each run's seconds (and of
them the seconds until the folder could answer), its peak resident memory (the process, and with its
parser workers), the medians and their ratio. ``--index-dir`` starts the CI job's index folder as a
copy of an index of the tree, so that the publish copies it instead of indexing the tree cold (on a
monorepo that is the cold run's own quarter of an hour again).

    PYTHONPATH=server .venv/bin/python -m bench.indexing.first_answer /tmp/django-clone
    PYTHONPATH=server .venv/bin/python -m bench.indexing.first_answer /work/benchrepos/mono/tree \
        --commit-tasks /work/benchrepos/train-out/train_tasks.jsonl \
        --index-dir /work/benchrepos/mono/index --rounds 1
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.postgres_server import start

from bench.datasets import OUT_DIR, SWE_LITE, task_statements
from bench.latency.pg_search import uptime
from bench.procfs import PeakRssSampler, children
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.live.tasks import BackgroundTasks
from smartctx.live.workspace import Folder, Workspace
from smartctx.parsing.languages import is_source
from smartctx.team.reading import TeamBase

REPOSITORY = "bench.invalid/first-answer"
# How often the runs look whether the base is found or the index is ready.
POLL_S = 0.01
# How long a run's folder index, stopped by closing the workspace, may take to end its parser
# workers before the next run starts beside them anyway.
WORKERS_END_S = 300.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a clean git checkout")
    parser.add_argument(
        "--repo", default="django/django", help="whose first SWE-bench Lite statement is asked"
    )
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument(
        "--commit-tasks",
        type=Path,
        help="ask the first task of this commit-task JSONL whose repository is a folder of root",
    )
    parser.add_argument(
        "--index-dir", type=Path, help="an index of root the CI job's index folder starts as a copy of"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "first_answer.json")
    args = parser.parse_args()
    root = args.root.resolve()
    task = task_statements(root, args.repo, args.data, args.commit_tasks)[0]
    print(f"task: {task.splitlines()[0][:100]}")
    load_before = uptime()
    server = start()
    runs: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="smartctx-first-answer-") as temp:
            ci_index = Path(temp) / "ci-index"
            if args.index_dir is not None:
                shutil.copytree(args.index_dir, ci_index)
            began = time.perf_counter()
            ci_job = subprocess.run(
                [sys.executable, "-m", "smartctx", "index", str(root), "--quiet", "--index-dir",
                 str(ci_index), "--publish", server.url(), "--repository", REPOSITORY],
                check=False, capture_output=True, text=True,
            )  # fmt: skip
            if ci_job.returncode != 0:
                raise SystemExit(f"the publish failed ({ci_job.returncode}): {ci_job.stderr.strip()}")
            publish_s = time.perf_counter() - began
            print(f"published (index + copy) in {publish_s:.1f} s")
            shutil.rmtree(ci_index)
            for round_number in range(args.rounds):
                for kind in ("base", "cold") if round_number % 2 == 0 else ("cold", "base"):
                    base = TeamBase(server.url(), REPOSITORY, is_source) if kind == "base" else None
                    index_dir = Path(temp) / f"{kind}-{round_number}"
                    run = first_answer(root, index_dir, base, task)
                    runs.append({"round": round_number, "kind": kind, **run})
                    print(
                        f"{kind:5s} round {round_number}: {run['seconds']:6.2f} s (could answer after"
                        f" {run['ready_s']:.2f} s; answered from the base: {run['from_base']}); peak RSS"
                        f" {run['peak_own_mb']:.0f} MB, with its workers {run['peak_total_mb']:.0f} MB"
                    )
                    _wait_for_workers()
    finally:
        server.stop()
    base_s = statistics.median(run["seconds"] for run in runs if run["kind"] == "base")
    cold_s = statistics.median(run["seconds"] for run in runs if run["kind"] == "cold")
    print(f"\npublish (index + copy) {publish_s:.1f} s")
    print("| first answer of a fresh clone | median s |\n|---|---|")
    print(f"| from the published base | {base_s:.2f} |\n| after a cold local index | {cold_s:.2f} |")
    for kind in ("base", "cold"):
        own = max(run["peak_own_mb"] for run in runs if run["kind"] == kind)
        total = max(run["peak_total_mb"] for run in runs if run["kind"] == kind)
        print(f"peak RSS until the first answer, {kind}: {own:.0f} MB, with parser workers {total:.0f} MB")
    print(f"base ÷ cold: {base_s / cold_s:.3f}")
    print(f"load: before {load_before}; after {uptime()}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                     "publish_s": publish_s, "runs": runs}, indent=1))  # fmt: skip
    print(f"written: {args.json}")


def first_answer(root: Path, index_dir: Path, base: TeamBase | None, task: str) -> dict[str, Any]:
    """Seconds from adding the folder to its first pack, of them the seconds until it could answer,
    whether the base answered it, and the peak resident memory meanwhile (this process, and with the
    parser workers the folder's own index runs in)."""
    tasks = BackgroundTasks()
    workspace = Workspace(index_dir, lambda uri, counts: None, tasks, base=base)
    sampler = PeakRssSampler()
    sampler.start()
    try:
        began = time.perf_counter()
        folder = workspace.add(root.as_uri(), str(root), root.name)
        assert folder is not None
        folder.index.start()
        while not _can_answer(folder, expect_base=base is not None):
            time.sleep(POLL_S)
        ready_s = time.perf_counter() - began
        pack = workspace.context([folder], [ContextRequest(task, ContextOptions())], lambda: False)
        seconds = time.perf_counter() - began
    finally:
        sampler.done.set()
        sampler.join()
        workspace.close()
    return {
        "seconds": seconds,
        "ready_s": ready_s,
        "from_base": any(warning.code == "answered-from-base" for warning in pack.warnings),
        "peak_own_mb": sampler.peak_own_mb,
        "peak_total_mb": sampler.peak_total_mb,
    }


def _wait_for_workers() -> None:
    """Wait until the closed folder's parser workers have ended: a base run closes its folder while
    the folder's own index is still being built, and the next run must not share the cores with it."""
    deadline = time.monotonic() + WORKERS_END_S
    while _spawned_workers() and time.monotonic() < deadline:
        time.sleep(POLL_S * 10)


def _spawned_workers() -> list[int]:
    """This process's children that multiprocessing spawned as workers: not its resource tracker,
    which stays for the life of the process once the first pool has started."""
    found = []
    for pid in children():
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def _can_answer(folder: Folder, *, expect_base: bool) -> bool:
    if expect_base and folder.base is not None:
        return True
    return folder.index.status().state == "ready"


if __name__ == "__main__":
    main()
