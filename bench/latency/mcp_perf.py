"""Latency of a ``get_context_for_task`` call through ``smartctx mcp`` over stdio, against the same
request run in process (``build_context`` on the same index), over the same task texts.

Indexes the tree once, then starts two ``smartctx mcp`` servers on that index: the first takes the
index folder's writer lock, the second follows it (live/sharing.py), as when an agent's server runs
beside the editor's. Each task is then asked three ways in turn, in process and through each server,
so that all three see the same load. The first request of each path is left out of the percentiles
(it loads the tokenizer and warms SQLite's cache). The difference is what the protocol costs:
JSON-RPC framing, the pack as text, JSON and one resource link per citation, two pipes; and for the
follower, whatever following costs.

Each pack's own stage timings (``metadata.timingsMs``) are kept too, so the overhead splits into the
pipeline inside the server and everything around it.

With ``--version NAME=SERVER`` (twice or more: a frozen tree's ``server`` folder each), each version
runs a writer of its own, on its own copy of the index, and each task is asked in process, then of
each version's server in turn (the order rotating from task to task), so that versions are compared
under the same load. The in-process path runs the code the benchmark itself imports.

    .venv/bin/python -m bench.latency.mcp_perf /path/to/django --repo django/django
    PYTHONPATH=/work/frozen-b/server .venv/bin/python -m bench.latency.mcp_perf /path/to/django \
        --version main=/work/frozen-a/server --version new=/work/frozen-b/server
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.repository import indexed_store
from bench.stats import median_and_p95
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.index_store import index_dir_in
from smartctx.store.snapshot import IndexSnapshot, SnapshotPool

# The in-process path asks on a kept connection (SnapshotPool), as the servers do, which is the fair
# comparison; its figure on a snapshot opened per call, as this benchmark measured before, is kept
# beside it.
IN_PROCESS = ("in process (build_context)", "in process, a snapshot opened per call")
PATHS = (*IN_PROCESS, "MCP writer over stdio", "MCP follower over stdio")
SERVER_PATHS = PATHS[2:]


def in_process(
    number: int,
    task: str,
    budget: int,
    index_path: Path,
    pool: SnapshotPool,
    sources: WorkspaceSources,
    counter: TokenCounter,
    times: dict[str, list[float]],
) -> None:
    """Task ``number`` asked in process on a pooled snapshot and on one opened for it, each wall time
    in ms going to its path in ``times``. The second asking of a task finds caches the first filled
    (redacted strings, SQLite's pages), so the order alternates from task to task."""
    openers = {
        IN_PROCESS[0]: lambda: pool.snapshot(index_path),
        IN_PROCESS[1]: lambda: IndexSnapshot(index_path),
    }
    for name in IN_PROCESS if number % 2 == 0 else IN_PROCESS[::-1]:
        began = time.perf_counter()
        with openers[name]() as opened:
            build_context(
                ContextRequest(task, ContextOptions(budget_tokens=budget)), opened, counter, sources
            )
        times[name].append((time.perf_counter() - began) * 1000)


def index_once(root: Path, index_parent: Path) -> Path:
    """Index the tree; the path of the index file."""
    store = indexed_store(root, index_dir_in(index_parent, root))
    store.close()
    return store.path


async def role_of(client: Client) -> str:
    """The server's role once its index is ready."""
    while True:
        status = (await client.call_tool("index_status", {})).structured_content
        assert status is not None
        if status["state"] == "ready":
            return str(status["role"])
        await anyio.sleep(0.1)


def server(root: Path, index_parent: Path, code: str | None = None) -> Client:
    """A ``smartctx mcp`` server running ``code`` (a ``server`` folder), else the benchmark's own."""
    # The SDK passes a server only a few environment variables; PYTHONPATH names the frozen tree
    # under test, without which the server would run whatever smartctx the interpreter has installed.
    code = code or os.environ.get("PYTHONPATH")
    forwarded = {"PYTHONPATH": code} if code else None
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "smartctx", "mcp", "--root", str(root), "--index-dir", str(index_parent)],
        env=forwarded,
    )
    return Client(parameters, mode="legacy")


async def side_by_side(
    root: Path, index_parent: Path, index_path: Path, tasks: list[str], budget: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per path, each task's wall time; per server, each pack's own pipeline time; in ms."""
    sources, counter, pool = WorkspaceSources(root), TokenCounter(), SnapshotPool()
    times: dict[str, list[float]] = {name: [] for name in PATHS}
    pipeline: dict[str, list[float]] = {name: [] for name in SERVER_PATHS}
    async with server(root, index_parent) as writer:
        # The first server takes the lock before the second starts.
        roles = [await role_of(writer)]
        async with server(root, index_parent) as follower:
            roles.append(await role_of(follower))
            if roles != ["writer", "follower"]:
                raise RuntimeError(f"expected a writer and a follower, got {roles}")
            for number, task in enumerate(tasks):
                in_process(number, task, budget, index_path, pool, sources, counter, times)
                for name, client in zip(SERVER_PATHS, (writer, follower), strict=True):
                    times[name].append(await timed_call(client, task, budget, pipeline[name]))
    return times, pipeline


async def versions_side_by_side(
    root: Path,
    index_parents: dict[str, Path],
    index_path: Path,
    tasks: list[str],
    budget: int,
    codes: dict[str, str],
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """As :func:`side_by_side`, with one writer per version; paths are named by version."""
    sources, counter, pool = WorkspaceSources(root), TokenCounter(), SnapshotPool()
    names = [f"MCP writer over stdio ({name})" for name in codes]
    times: dict[str, list[float]] = {name: [] for name in [*IN_PROCESS, *names]}
    pipeline: dict[str, list[float]] = {name: [] for name in names}
    async with AsyncExitStack() as stack:
        clients = []
        for version, code in codes.items():
            client = await stack.enter_async_context(server(root, index_parents[version], code))
            if await role_of(client) != "writer":
                raise RuntimeError(f"{version}'s server does not write its own index")
            clients.append(client)
        for number, task in enumerate(tasks):
            in_process(number, task, budget, index_path, pool, sources, counter, times)
            turn = number % len(names)
            for name, client in [*zip(names, clients, strict=True)][turn:] + [
                *zip(names, clients, strict=True)
            ][:turn]:
                times[name].append(await timed_call(client, task, budget, pipeline[name]))
    return times, pipeline


async def timed_call(client: Client, task: str, budget: int, pipeline: list[float]) -> float:
    """One ``get_context_for_task`` call's wall time in ms; its pack's own stage times go to ``pipeline``."""
    began = time.perf_counter()
    result = await client.call_tool("get_context_for_task", {"task": task, "budgetTokens": budget})
    elapsed = (time.perf_counter() - began) * 1000
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"the tool failed: {result.content}")
    pipeline.append(sum(result.structured_content["metadata"]["timingsMs"].values()))
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path)
    parser.add_argument("--repo", default="django/django", help="which instances' problem statements to use")
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N tasks (0: all)")
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "mcp_perf.json")
    parser.add_argument(
        "--version",
        action="append",
        default=[],
        metavar="NAME=SERVER",
        help="a version's server folder (a frozen tree's server/); give two or more to compare them",
    )
    args = parser.parse_args()
    codes = dict(version.split("=", 1) for version in args.version)
    tasks = problem_statements(args.repo, args.data)
    tasks = tasks[: args.limit] if args.limit else tasks
    root = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="smartctx-mcp-perf-") as temp:
        index_path = index_once(root, Path(temp) / "bench")
        if codes:
            # Each version writes an index of its own, a copy of the one just built.
            parents = {version: Path(temp) / f"version-{number}" for number, version in enumerate(codes)}
            for parent in parents.values():
                shutil.copytree(Path(temp) / "bench", parent)
            times, pipeline = anyio.run(
                versions_side_by_side, root, parents, index_path, tasks, args.budget, codes
            )
        else:
            times, pipeline = anyio.run(
                side_by_side, root, Path(temp) / "bench", index_path, tasks, args.budget
            )
    rows: dict[str, Any] = {}
    table = [
        "| path | n | p50 ms | p95 ms | first ms | pipeline p50 ms | outside the pipeline p50 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, values in times.items():
        warm = values[1:]
        p50, p95 = median_and_p95(warm)
        inside = statistics.median(pipeline[name][1:]) if name in pipeline else None
        # Each call's wall time less its own pipeline: what the protocol costs, call by call.
        outside = (
            statistics.median([wall - own for wall, own in zip(warm, pipeline[name][1:], strict=True)])
            if name in pipeline
            else None
        )
        rows[name] = {"n": len(warm), "p50_ms": p50, "p95_ms": p95, "first_ms": values[0]}
        rows[name] |= {"pipeline_p50_ms": inside, "outside_pipeline_p50_ms": outside}
        shown = ["" if value is None else f"{value:.1f}" for value in (inside, outside)]
        table.append(
            f"| {name} | {len(warm)} | {p50:.1f} | {p95:.1f} | {values[0]:.0f} | {shown[0]} | {shown[1]} |"
        )
    overhead = {
        base: {
            name: {key: rows[name][key] - rows[base][key] for key in ("p50_ms", "p95_ms")}
            for name in pipeline
        }
        for base in IN_PROCESS
    }
    print("\n".join(table))
    for base, against in overhead.items():
        for name, extra in against.items():
            p50, p95 = extra["p50_ms"], extra["p95_ms"]
            print(f"{name} overhead against {base}: {p50:+.1f} ms p50, {p95:+.1f} ms p95")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "root": str(root),
                "tasks": len(tasks),
                "budget": args.budget,
                "paths": rows,
                "overhead": overhead,
                "versions": codes,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
