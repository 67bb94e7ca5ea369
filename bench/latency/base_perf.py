"""A pack from a team's published base against the same pack from the local index, side by side.

The work tree must be a clean git checkout (the commit is what is published). Indexes it locally,
publishes that index to the PostgreSQL at ``--url`` (nothing is written when the commit is already
there), then runs every SWE-bench Lite problem statement of ``--repo`` through the pipeline twice
per round, interleaved: once over the local index (SQLite and tantivy) and once over the published
commit (team/base_snapshot.py, the server at ``--url``). Reported: wall and thread-CPU p50/p95 of
each, their ratios, the stages, and how many packs are the same (items, order and text; scores
within 1e-5, since tantivy sums in 32-bit floats).

    PYTHONPATH=server .venv/bin/python -m bench.latency.base_perf /path/to/clean/django \\
        --url postgresql://USER@/DATABASE?host=/SOCKET/FOLDER --index-dir /tmp/django-index
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.stats import median_and_p95, percentile
from smartctx.core.context import ContextOptions, ContextPack, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import SnapshotPool
from smartctx.team.base import published_commits
from smartctx.team.base_snapshot import BaseSnapshot, CommitFacts
from smartctx.team.database import READ_APPLICATION, connect, parse_url
from smartctx.wire.convert import pack_to_wire

REPOSITORY = "bench.invalid/base-perf"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a clean git checkout")
    parser.add_argument("--url", required=True, help="postgresql://… of a server this run may publish to")
    parser.add_argument("--index-dir", type=Path, required=True, help="the local index's folder")
    parser.add_argument(
        "--repo", default="django/django", help="whose SWE-bench Lite statements are the tasks"
    )
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "base_perf.json")
    args = parser.parse_args()
    root = args.root.resolve()
    began = time.perf_counter()
    published = subprocess.run(
        [
            sys.executable,
            "-m",
            "smartctx",
            "index",
            str(root),
            "--index-dir",
            str(args.index_dir),
            "--quiet",
            "--publish",
            args.url,
            "--repository",
            REPOSITORY,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    print(published.stdout.strip().splitlines()[-1], f"({time.perf_counter() - began:.1f} s with the index)")
    tasks = problem_statements(args.repo, args.data)
    connection = connect(parse_url(args.url, READ_APPLICATION))
    (commit, *_) = published_commits(connection, REPOSITORY)
    counter = TokenCounter()
    sources = WorkspaceSources(root)
    options = ContextOptions(budget_tokens=args.budget)

    pool = SnapshotPool()

    def local() -> IndexReader:
        return pool.snapshot(args.index_dir / INDEX_FILE_NAME)

    # A server keeps one per published commit; the local snapshots' pool keeps the same facts.
    facts = CommitFacts()

    def base() -> IndexReader:
        return BaseSnapshot(connection, commit, facts)

    def timed(task: str, open_reader: Callable[[], Any]) -> tuple[float, float, ContextPack]:
        began, began_cpu = time.perf_counter(), time.thread_time()
        with open_reader() as reader:
            pack = build_context(ContextRequest(task, options), reader, counter, sources)
        return (time.perf_counter() - began) * 1000, (time.thread_time() - began_cpu) * 1000, pack

    rows: list[dict[str, Any]] = []
    # A first request of each loads the tokenizer and warms both caches; it is not counted.
    timed(tasks[0], local)
    timed(tasks[0], base)
    for round_number in range(args.rounds):
        for task_number, task in enumerate(tasks):
            order = (
                (("local", local), ("base", base))
                if task_number % 2 == round_number % 2
                else (("base", base), ("local", local))
            )
            runs = {name: timed(task, opener) for name, opener in order}
            rows.append(
                {
                    "round": round_number,
                    "task": task_number,
                    **{f"{name}_ms": runs[name][0] for name in runs},
                    **{f"{name}_cpu_ms": runs[name][1] for name in runs},
                    **{f"{name}_stages_ms": runs[name][2].timings_ms for name in runs},
                    # Compared once per task: the later rounds make the same packs.
                    "same_pack": same_pack(_wire(runs["base"][2]), _wire(runs["local"][2]))
                    if round_number == 0
                    else None,
                }
            )
    connection.close()
    pool.close()
    report(rows, len(tasks))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"date": time.strftime("%Y-%m-%d"), "repo": args.repo, "rows": rows}, indent=2)
    )
    print(f"written: {args.json}")


def _wire(pack: ContextPack) -> Any:
    wire = dict(pack_to_wire(pack))
    metadata = dict(wire["metadata"])
    for volatile in ("timingsMs", "freshness"):
        metadata.pop(volatile)
    wire["metadata"] = metadata
    return wire


def same_pack(base: Any, local: Any) -> bool:
    """The same items in the same order with the same text, scores within 1e-5."""
    if isinstance(base, float) and isinstance(local, float):
        return math.isclose(base, local, rel_tol=1e-5, abs_tol=1e-6)
    if isinstance(base, dict) and isinstance(local, dict):
        return base.keys() == local.keys() and all(same_pack(base[key], local[key]) for key in base)
    if isinstance(base, (list, tuple)) and isinstance(local, (list, tuple)):
        return len(base) == len(local) and all(same_pack(*pair) for pair in zip(base, local, strict=True))
    return bool(base == local)


def report(rows: list[dict[str, Any]], tasks: int) -> None:
    table = [
        "| measure | local p50 | local p95 | base p50 | base p95 | base÷local p50 | base÷local p95 |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, suffix in (("wall, ms", "_ms"), ("thread CPU, ms", "_cpu_ms")):
        local_p50, local_p95 = median_and_p95([row["local" + suffix] for row in rows])
        base_p50, base_p95 = median_and_p95([row["base" + suffix] for row in rows])
        table.append(
            f"| {label} | {local_p50:.1f} | {local_p95:.1f} | {base_p50:.1f} | {base_p95:.1f}"
            f" | {base_p50 / local_p50:.2f} | {base_p95 / local_p95:.2f} |"
        )
    stages = list(rows[0]["local_stages_ms"])
    for stage in stages:
        local_values = [row["local_stages_ms"].get(stage, 0.0) for row in rows]
        base_values = [row["base_stages_ms"].get(stage, 0.0) for row in rows]
        table.append(
            f"| · {stage} | {statistics.median(local_values):.1f} | {percentile(local_values, 0.95):.1f}"
            f" | {statistics.median(base_values):.1f} | {percentile(base_values, 0.95):.1f} | | |"
        )
    print("\n".join(table))
    same = sum(1 for row in rows if row["same_pack"])
    print(f"\nsame pack from the base as from the local index: {same} of {tasks} tasks")


if __name__ == "__main__":
    main()
