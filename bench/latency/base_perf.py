"""A pack from a team's published base against the same pack from the local index, side by side.

One run, on a throw-away PostgreSQL (tests/postgres_server.py, as ``pg_search.py`` starts it): the
local index of ROOT (a copy of ``--index-dir``, brought up to date, or one built) is published as one
commit, then every SWE-bench Lite problem statement of ``--repo`` goes through the pipeline
``--rounds`` times each way, interleaved: over the local index (SQLite and tantivy, its snapshots
from one pool, as the server reads them) and over the published commit (team/base_snapshot.py, its
snapshots sharing one ``CommitFacts``, as a server would). Reported: wall and thread-CPU p50/p95 of
each and their ratios, the stages, and how many packs are the same: in items, order and text, and
also in scores to within 1e-5 (tantivy sums in 32-bit floats, and publishing redacts the search words
the local index keeps, which moves every BM25 score a little).

    PYTHONPATH=server .venv/bin/python -m bench.latency.base_perf /work/benchrepos/qp-django \\
        --index-dir /work/benchrepos/qp-index
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tests.postgres_server import PostgresServer, start

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.latency.pg_search import COMMIT, publish_index, uptime
from bench.repository import copy_index, indexed_store
from bench.stats import median_and_p95, percentile
from smartctx.core.context import ContextOptions, ContextPack, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import SnapshotPool
from smartctx.team.base import PublishedCommit
from smartctx.team.base_snapshot import BaseSnapshot, CommitFacts
from smartctx.team.database import READ_APPLICATION, connect, parse_url
from smartctx.wire.convert import pack_to_wire

# The fields of a pack's scores: equal only to within the float noise between the two stores.
SCORE_FIELDS = ("score", "scoreParts")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", type=Path, help="an index of root to copy (else one is built)")
    parser.add_argument(
        "--repo", default="django/django", help="whose SWE-bench Lite statements are the tasks"
    )
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "base_perf.json")
    args = parser.parse_args()
    root = args.root.resolve()
    tasks = problem_statements(args.repo, args.data)
    load_before = uptime()
    with (
        tempfile.TemporaryDirectory(prefix="smartctx-base-perf-") as temp,
        published(root, Path(temp) / "index", args.index_dir) as (server, commit),
    ):
        rows = measure(root, Path(temp) / "index" / INDEX_FILE_NAME, server.url(), commit, tasks, args)
    report(rows, len(tasks))
    print(f"load: before {load_before}; after {uptime()}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "repo": args.repo, "rows": rows},
            indent=1,
        )
    )
    print(f"written: {args.json}")


@contextmanager
def published(
    root: Path, index_dir: Path, copied_from: Path | None
) -> Iterator[tuple[PostgresServer, PublishedCommit]]:
    """``root``'s index at ``index_dir`` (a copy of ``copied_from`` brought up to date, or one
    built) published as one commit to a throw-away PostgreSQL server, stopped afterwards."""
    if copied_from is not None:
        copy_index(copied_from, index_dir, root)
    indexed_store(root, index_dir).close()
    server = start()
    try:
        publish_s, commit_id, _ = publish_index(server, root, index_dir / INDEX_FILE_NAME)
        print(f"published in {publish_s:.1f} s")
        yield server, PublishedCommit(commit_id, COMMIT, datetime.now(timezone.utc))
    finally:
        server.stop()


def measure(
    root: Path,
    index_path: Path,
    url: str,
    commit: PublishedCommit,
    tasks: list[str],
    args: argparse.Namespace,
) -> list[dict[str, Any]]:
    connection = connect(parse_url(url, READ_APPLICATION))
    counter = TokenCounter()
    sources = WorkspaceSources(root)
    options = ContextOptions(budget_tokens=args.budget)
    pool = SnapshotPool()
    # A server keeps one per published commit, as the pool keeps the local index's generation values.
    facts = CommitFacts()

    def local() -> IndexReader:
        return pool.snapshot(index_path)

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
            row: dict[str, Any] = {"round": round_number, "task": task_number}
            for name, (wall_ms, cpu_ms, pack) in runs.items():
                row.update(
                    {f"{name}_ms": wall_ms, f"{name}_cpu_ms": cpu_ms, f"{name}_stages_ms": pack.timings_ms}
                )
            if round_number == 0:
                # Compared once per task: the later rounds make the same packs.
                base_pack, local_pack = _wire(runs["base"][2]), _wire(runs["local"][2])
                row["same_items"] = _without_scores(base_pack) == _without_scores(local_pack)
                row["same_pack"] = same_pack(base_pack, local_pack)
            rows.append(row)
    connection.close()
    pool.close()
    return rows


def _wire(pack: ContextPack) -> Any:
    wire = dict(pack_to_wire(pack))
    metadata = dict(wire["metadata"])
    for volatile in ("timingsMs", "freshness"):
        metadata.pop(volatile)
    wire["metadata"] = metadata
    return wire


def _without_scores(pack: Any) -> Any:
    if isinstance(pack, dict):
        return {key: _without_scores(value) for key, value in pack.items() if key not in SCORE_FIELDS}
    if isinstance(pack, (list, tuple)):
        return [_without_scores(value) for value in pack]
    return pack


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
    items = sum(1 for row in rows if row.get("same_items"))
    same = sum(1 for row in rows if row.get("same_pack"))
    print(
        f"\npacks from the base against the local index's, {tasks} tasks: the same items in the same order"
        f" with the same text {items}; and the same scores within 1e-5 {same}"
    )


if __name__ == "__main__":
    main()
