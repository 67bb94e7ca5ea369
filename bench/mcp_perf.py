"""Latency of a ``get_context_for_task`` call through ``smartctx mcp`` over stdio, against the same
request run in process (``build_context`` on the same index), over the same task texts.

Indexes the tree once, runs every task in process, then starts ``smartctx mcp`` on that index and
asks the same tasks through the MCP SDK's client. The first request of each path is left out of the
percentiles (it loads the tokenizer and warms SQLite's cache). The difference is what the protocol
costs: JSON-RPC framing, the pack as text, JSON and one resource link per citation, two pipes.

    .venv/bin/python bench/mcp_perf.py /path/to/django --repo django/django
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.index_store import IndexStore, index_dir_in

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "swe_lite.jsonl"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def in_process(root: Path, index_parent: Path, tasks: list[str], budget: int) -> list[float]:
    store = IndexStore(root, index_dir_in(index_parent, root))
    try:
        Indexer(root, store, IndexConfig()).reconcile()
        sources, counter = WorkspaceSources(root), TokenCounter()
        times_ms: list[float] = []
        for task in tasks:
            began = time.perf_counter()
            with store.snapshot() as snapshot:
                build_context(
                    ContextRequest(task, ContextOptions(budget_tokens=budget)), snapshot, counter, sources
                )
            times_ms.append((time.perf_counter() - began) * 1000)
    finally:
        store.close()
    return times_ms


async def over_mcp(root: Path, index_parent: Path, tasks: list[str], budget: int) -> list[float]:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "smartctx", "mcp", "--root", str(root), "--index-dir", str(index_parent)],
    )
    times_ms: list[float] = []
    async with Client(parameters, mode="legacy") as client:
        # The index is already up to date: wait for the reconcile that confirms it.
        while (await client.call_tool("index_status", {})).structured_content["state"] != "ready":
            await anyio.sleep(0.1)
        for task in tasks:
            began = time.perf_counter()
            result = await client.call_tool("get_context_for_task", {"task": task, "budgetTokens": budget})
            times_ms.append((time.perf_counter() - began) * 1000)
            if result.is_error:
                raise RuntimeError(f"the tool failed: {result.content}")
    return times_ms


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path)
    parser.add_argument("--repo", default="django/django", help="which instances' problem statements to use")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N tasks (0: all)")
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--json", type=Path, default=Path("bench/out/mcp_perf.json"))
    args = parser.parse_args()
    tasks = [
        row["problem_statement"]
        for row in map(json.loads, args.data.read_text().splitlines())
        if row["repo"] == args.repo
    ]
    tasks = tasks[: args.limit] if args.limit else tasks
    root = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="smartctx-mcp-perf-") as temp:
        local = in_process(root, Path(temp), tasks, args.budget)
        remote = anyio.run(over_mcp, root, Path(temp), tasks, args.budget)
    rows: dict[str, Any] = {}
    table = ["| path | n | p50 ms | p95 ms | first ms |", "|---|---|---|---|---|"]
    for name, values in (("in process (build_context)", local), ("MCP tool call over stdio", remote)):
        warm = values[1:]
        p50, p95 = statistics.median(warm), percentile(warm, 0.95)
        rows[name] = {"n": len(warm), "p50_ms": p50, "p95_ms": p95, "first_ms": values[0]}
        table.append(f"| {name} | {len(warm)} | {p50:.1f} | {p95:.1f} | {values[0]:.0f} |")
    overhead = {
        key: rows["MCP tool call over stdio"][key] - rows["in process (build_context)"][key]
        for key in ("p50_ms", "p95_ms")
    }
    print("\n".join(table))
    print(f"\nMCP overhead: {overhead['p50_ms']:+.1f} ms p50, {overhead['p95_ms']:+.1f} ms p95")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "root": str(root),
                "tasks": len(tasks),
                "budget": args.budget,
                "paths": rows,
                "overhead": overhead,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
