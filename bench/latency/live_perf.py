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

    .venv/bin/python bench/live_perf.py /work/benchrepos/django \\
        --checkout /tmp/watch-django --from b6ad8b687a --to 17e661641d
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from tests.index_dump import dump

from bench.datasets import OUT_DIR, SWE_LITE
from bench.stats import percentile
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.lsp.protocol import CONTEXT_FOR_TASK, INDEX_STATUS
from smartctx.lsp.server import json_converter
from smartctx.store.index_store import IndexStore

EDITS = 50
QUERIES = 50
# Every wait is bounded so a broken server ends the run instead of hanging it.
WAIT_S = 600.0
EDIT_FILE = "smartctx_live_probe.py"
# The end of the server's log kept in memory, to say what it was doing when a wait fails.
LOG_TAIL_BYTES = 8192


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Server:
    """One `smartctx serve` over stdio and the status notifications it sent.

    Its stderr (the log) is read as it comes, into ``log`` when given: a pipe nobody reads fills up
    (64 KB: about 900 request lines) and then blocks the server at its next log line. The end of
    it is kept in memory either way (:meth:`log_tail`).
    """

    def __init__(self, root: Path, index_dir: Path, log: Path | None = None) -> None:
        self.root = root
        self.index_dir = index_dir
        self.log = log
        self._log_end = bytearray()
        self.client = LanguageClient("live-perf", "1", converter_factory=json_converter)
        self.statuses: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reading_log: asyncio.Task[None] | None = None

        @self.client.feature(INDEX_STATUS)
        def on_status(params: Any) -> None:
            self.statuses.append(params)
            self._changed.set()

    async def start(self) -> float:
        """Start and initialize; seconds from `initialized` to the first "ready"."""
        await self.launch()
        return await self.initialize()

    async def launch(self) -> None:
        """Start the server process (not yet initialized) and begin reading its log."""
        await self.client.start_io(sys.executable, "-m", "smartctx", "serve")
        self._reading_log = asyncio.create_task(self._read_log())

    async def _read_log(self) -> None:
        process = self.client._server
        stream = process.stderr if process is not None else None
        if stream is None:
            return
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") if self.log is not None else contextlib.nullcontext() as sink:
            while chunk := await stream.read(65536):
                self._log_end += chunk
                del self._log_end[:-LOG_TAIL_BYTES]
                if sink is not None:
                    sink.write(chunk)
                    sink.flush()

    def log_tail(self, lines: int = 10) -> str:
        """The server's last log lines."""
        return "\n".join(self._log_end.decode(errors="replace").splitlines()[-lines:])

    async def initialize(self) -> float:
        """Initialize a launched server; seconds from `initialized` to the first "ready"."""
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=self.root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)],
                initialization_options={"indexDir": str(self.index_dir)},
            )
        )
        started = time.perf_counter()
        self.client.initialized(types.InitializedParams())
        await self.until(lambda status: status["state"] == "ready")
        return time.perf_counter() - started

    @property
    def pid(self) -> int:
        process = self.client._server
        assert process is not None
        return int(process.pid)

    async def until(self, holds: Any, after: int = 0, timeout_s: float = WAIT_S) -> dict[str, Any]:
        """The first status notification, from number ``after`` on, for which ``holds`` is true;
        TimeoutError, with the end of the server's log, when none comes within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        seen = after
        while True:
            for status in self.statuses[seen:]:
                if holds(status):
                    return status
            seen = len(self.statuses)
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise TimeoutError(
                    f"no such status from the server within {timeout_s:.0f} s; its log ends:\n"
                    + self.log_tail()
                ) from None

    async def context(self, task: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.client.protocol.send_request_async(
            CONTEXT_FOR_TASK, {"task": task}
        )
        return result

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()
        if self._reading_log is not None:
            await self._reading_log


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


def files_table(index_path: Path) -> set[tuple[str, str]]:
    connection = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        return set(connection.execute("SELECT path, content_hash FROM files"))
    finally:
        connection.close()


def same_index(live_store: Path, fresh_store: Path, root: Path) -> bool:
    """Row for row: nodes, references, edges, and scores within rounding."""
    live_index = IndexStore(root, live_store)
    fresh_index = IndexStore(root, fresh_store)
    try:
        with live_index.snapshot() as snapshot:
            live = dump(snapshot)
        with fresh_index.snapshot() as snapshot:
            fresh = dump(snapshot)
    finally:
        live_index.close()
        fresh_index.close()
    if (live.nodes, live.refs, live.edges) != (fresh.nodes, fresh.refs, fresh.edges):
        return False
    return live.scores.keys() == fresh.scores.keys() and all(
        math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)
        for key, (rank, use) in live.scores.items()
        for a, b in zip((rank, use), fresh.scores[key], strict=True)
    )


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


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
    while True:
        status = await server.until(lambda s: s["state"] == "ready" and s["pendingFiles"] == 0, seen)
        seen = server.statuses.index(status) + 1
        if files_table(live_path) == expected:
            break
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
    tasks = [
        row["problem_statement"]
        for row in map(json.loads, args.data.read_text().splitlines())
        if row["repo"] == args.repo
    ][: args.queries + 1]
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
