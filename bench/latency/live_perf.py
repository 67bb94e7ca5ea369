"""The live server's freshness and latency, measured over LSP against a real `smartctx serve`.

Starts `python -m smartctx serve` over stdio, as an editor does, and measures:

* initial index: `initialized` sent → the first "ready" `smartctx/indexStatus` (fresh index folder), on a
  copy of ROOT (the copy receives the edits, so ROOT itself is never written);
* server RSS once ready (the server process; its parser workers have exited by then);
* save → queryable: write one file with a new function, then ask `smartctx/contextForTask` for it after
  each status notification until the answer holds it; the time from the write to that answer;
* contextForTask over LSP: the SWE-bench Lite problem statements of the repository, warm;
* branch switch (with --checkout): a second server on a git work tree at FROM; `git checkout TO`; the time
  from the checkout's start until the server's files table equals that of a fresh index of TO, with the
  fresh index (in-process, same parser workers) timed beside it as the baseline. The whole index (nodes,
  references, edges, scores) is then compared with the fresh one, row for row.

    .venv/bin/python -m bench.latency.live_perf /work/benchrepos/django \\
        --checkout /tmp/watch-django --from b6ad8b687a --to 17e661641d
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.lsp_server import Server
from bench.procfs import rss_mb
from bench.repository import files_table, git, same_index
from bench.stats import percentile
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store.index_store import IndexStore

EDITS = 50
QUERIES = 50
EDIT_FILE = "smartctx_live_probe.py"


async def save_to_queryable(server: Server, edits: int) -> list[float]:
    latencies: list[float] = []
    probe = server.root / "django" / EDIT_FILE
    for number in range(edits):
        name = f"live_probe_{number}_{time.time_ns() % 1_000_000}"
        seen = len(server.statuses)
        started = time.perf_counter()
        probe.write_text(
            f'def {name}(value):\n    """Probe {number}."""\n    return value\n', encoding="utf-8"
        )
        while True:
            asked = len(server.statuses)
            pack = await server.context(name)
            if any(body["name"] == name for body in pack["bodies"]):
                latencies.append((time.perf_counter() - started) * 1000)
                break
            await server.until(lambda status: True, max(seen, asked))
    return latencies


async def query_latencies(server: Server, tasks: list[str]) -> list[float]:
    latencies: list[float] = []
    for task in tasks:
        started = time.perf_counter()
        await server.context(task)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


async def branch_switch(root: Path, source: str, target: str, temp: Path) -> dict[str, Any]:
    git(root, "checkout", "-q", "-f", target)
    fresh_dir = temp / "fresh-target"
    started = time.perf_counter()
    store = IndexStore(root, fresh_dir)
    Indexer(root, store, IndexConfig()).reconcile()
    fresh_s = time.perf_counter() - started
    store.close()
    expected = files_table(next(fresh_dir.glob("index-*.sqlite")))
    git(root, "checkout", "-q", "-f", source)
    changed = git(root, "diff", "--name-only", source, target).split()

    server = Server(root, temp / "live-switch")
    await server.start()
    # The server keeps one index folder per workspace folder inside its indexDir.
    live_path = next((temp / "live-switch").glob("*/index-*.sqlite"))
    seen = len(server.statuses)
    started = time.perf_counter()
    git(root, "checkout", "-q", target)
    checkout_s = time.perf_counter() - started
    await server.until_indexed(live_path, expected, seen)
    consistent_s = time.perf_counter() - started
    await server.stop()
    equal = same_index(live_path.parent, fresh_dir, root)
    git(root, "checkout", "-q", "-f", source)
    return {
        "changed_files": len(changed),
        "indexed_files_after": len(expected),
        "git_checkout_s": checkout_s,
        "consistent_s": consistent_s,
        "fresh_index_s": fresh_s,
        "equals_fresh_index": equal,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tasks = problem_statements(args.repo, args.data)[: args.queries + 1]
    results: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "root": str(args.root)}
    with tempfile.TemporaryDirectory(prefix="smartctx-live-") as temp_name:
        temp = Path(temp_name)
        work = temp / args.root.name
        shutil.copytree(args.root, work, symlinks=True)
        server = Server(work, temp / "live-index")
        results["initial_index_s"] = await server.start()
        results["rss_mb"] = rss_mb(server.pid)
        results["save_to_queryable_ms"] = await save_to_queryable(server, args.edits)
        warm = await query_latencies(server, tasks)
        results["context_for_task_ms"] = warm[1:]
        await server.stop()
        if args.checkout is not None:
            results["branch_switch"] = await branch_switch(
                args.checkout.resolve(), args.source, args.target, temp
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a tree to copy and serve (never written)")
    parser.add_argument("--checkout", type=Path, help="a git work tree for the branch-switch measurement")
    parser.add_argument("--from", dest="source", default="b6ad8b687a")
    parser.add_argument("--to", dest="target", default="17e661641d")
    parser.add_argument("--repo", default="django/django", help="which SWE-bench Lite tasks to ask")
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--edits", type=int, default=EDITS)
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "live_perf.json")
    args = parser.parse_args()
    results = asyncio.run(run(args))
    saves = results["save_to_queryable_ms"]
    queries = results["context_for_task_ms"]
    table = [
        "| measure | value | target |",
        "|---|---|---|",
        f"| initial index to ready | {results['initial_index_s']:.1f} s | |",
        f"| server RSS when ready | {results['rss_mb']:.0f} MB | ≤ 400 MB |",
        f"| save → queryable p50 / p95 (n={len(saves)}) | {statistics.median(saves):.0f} / "
        f"{percentile(saves, 0.95):.0f} ms | p95 ≤ 200 ms |",
        f"| contextForTask over LSP p50 / p95 (n={len(queries)}) | {statistics.median(queries):.0f} / "
        f"{percentile(queries, 0.95):.0f} ms | p95 ≤ 120 ms |",
    ]
    switch = results.get("branch_switch")
    if switch is not None:
        table += [
            f"| branch switch: files changed by git / indexed after | {switch['changed_files']:,} / "
            f"{switch['indexed_files_after']:,} | |",
            f"| · git checkout itself | {switch['git_checkout_s']:.1f} s | |",
            f"| · checkout start → index consistent | {switch['consistent_s']:.1f} s | ≤ 15 s (10k files) |",
            f"| · baseline: fresh full index of the target | {switch['fresh_index_s']:.1f} s | |",
            f"| · live index equals the fresh one | {switch['equals_fresh_index']} | True |",
        ]
    print("\n".join(table))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
