"""The live server on a large repository (issue #12 item 5): cold, no-op, one-file update, a real branch
switch, query latency, memory and index size, all over LSP against a real `smartctx serve`.

A git work tree of MIRROR (a bare or normal git directory) is cloned with ``--shared`` into WORK and
checked out at FROM. Then, in one run on one machine:

* cold: a server on a fresh index folder; `initialized` → the first "ready" status. The peak RSS of the
  server plus its parser workers is sampled every 50 ms from /proc;
* no-op: the server restarted on the same index; `initialized` → "ready";
* one-file update: an existing source file gets a new definition appended (bench/indexing/probes.py); the time
  from the write until the index holds it (a read-only connection polls the committed index: what
  every query reads), and until a contextForTask answer for its name packs it (asked again after each
  status notification, and at least every ``PACK_POLL_S``). Each wait is bounded (``UPDATE_WAIT_S``):
  a definition not indexed or not packed in time is reported with where the pack put it, and the
  run goes on;
* queries: contextForTask over LSP for tasks written from the repository's own commit messages (the
  subjects and bodies of the commits before FROM); the first is reported apart (warm-up), then p50/p95
  of the round trip and of the pipeline's own ``metadata.timingsMs`` total;
* memory: the server's RSS when ready, after the queries, and after ``--soak`` more queries (the task
  list repeated), so growth over many requests shows;
* branch switch: `git checkout TO` under the running server; the time from the checkout's start until
  the live files table equals that of a fresh index of TO, with that fresh index (in-process, the same
  parser workers) timed in the same run as the baseline, and the two compared row for row;
* size: the index folder on disk (database, WAL and shared memory) against the bytes of the indexed
  source files.

Each server's log goes to ``server-*.log`` beside the index folders.

    .venv/bin/python -m bench.indexing.scale /work/.mirror/babel+babel/repo /work/benchrepos/speed-babel \\
        --from 726154c78e --to 1da3cfa1a2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.datasets import OUT_DIR
from bench.indexing.probes import with_probe
from bench.lsp_server import WAIT_S, Server
from bench.procfs import PeakRssSampler, rss_mb
from bench.repository import commit_message_tasks, files_table, git, same_index
from bench.stats import median_and_p95
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.parsing.languages import language_for_path
from smartctx.store.index_store import IndexStore

QUERIES = 60
SOAK_QUERIES = 1000
UPDATES = 20
SCORES_POLL_S = 0.05
# How long one probe may take to be indexed, and then to be packed, before it counts as a failure.
UPDATE_WAIT_S = 60.0
# How often the committed index is read while waiting for a probe (a read costs well under 1 ms).
INDEX_POLL_S = 0.002
# A pack is asked for again after each status notification, and at least this often.
PACK_POLL_S = 0.5


def scores_dirty(index_path: Path) -> bool:
    connection = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'scores_dirty'").fetchone()
    finally:
        connection.close()
    return row is not None and row[0] == "1"


def index_size(index_dir: Path) -> int:
    return sum(path.stat().st_size for path in index_dir.rglob("*") if path.is_file())


def source_bytes(root: Path, paths: list[str]) -> int:
    return sum((root / path).stat().st_size for path in paths)


def indexed_paths(index_path: Path) -> list[str]:
    return sorted(path for path, _ in files_table(index_path))


def update_candidates(index_path: Path) -> list[str]:
    """Files a person edits: parsed without errors, not test fixtures (fixture files are often
    deliberately broken, and an appended function would not parse as one)."""
    connection = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        clean = [
            path
            for (path,) in connection.execute("SELECT path FROM files WHERE has_errors = 0 ORDER BY path")
        ]
    finally:
        connection.close()
    return [path for path in clean if "fixtures/" not in path and "/test/" not in path] or clean


def holds_name(connection: sqlite3.Connection, name: str) -> bool:
    """Whether the committed index has a definition named ``name`` (each call reads afresh)."""
    return connection.execute("SELECT 1 FROM nodes WHERE name = ? LIMIT 1", (name,)).fetchone() is not None


async def until_indexed(connection: sqlite3.Connection, name: str, present: bool, deadline: float) -> bool:
    """Poll the index until a definition named ``name`` is there (or gone); False at the deadline."""
    while holds_name(connection, name) != present:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(INDEX_POLL_S)
    return True


def where_packed(pack: dict[str, Any], name: str, path: str) -> str:
    """Where a pack put a definition it was asked for by name, for a failure report."""
    if any(body["name"] == name for body in pack["bodies"]):
        return "body"
    if any(summary["name"] == name for summary in pack["summaries"]):
        return "summary"
    if any(line["filePath"] == path for line in pack["fileMap"]):
        return "file map"
    return f"absent ({len(pack['bodies'])} bodies: {', '.join(b['name'] for b in pack['bodies'][:5])})"


async def until_packed(server: Server, name: str, path: str, deadline: float) -> str:
    """Ask for a pack about ``name`` after each status notification (and every PACK_POLL_S) until it
    holds the definition as a body; where the last pack put it otherwise."""
    while True:
        asked = len(server.statuses)
        pack = await server.context(name)
        place = where_packed(pack, name, path)
        remaining = deadline - time.monotonic()
        if place == "body" or remaining <= 0:
            return place
        with contextlib.suppress(TimeoutError):
            await server.until(lambda status: True, asked, min(PACK_POLL_S, remaining))


async def one_file_updates(server: Server, index_path: Path, paths: list[str], count: int) -> dict[str, Any]:
    """Append a definition to existing files, one at a time, and time it into the index and into a
    pack; each file is restored (and its probe gone from the index) before the next."""
    indexed_ms: list[float] = []
    packed_ms: list[float] = []
    failures: list[dict[str, str]] = []
    step = max(1, len(paths) // count)
    connection = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True, isolation_level=None)
    try:
        for number, path in enumerate(paths[::step][:count]):
            file = server.root / path
            original = file.read_bytes()
            name = f"scale_probe_{number}_{time.time_ns() % 1_000_000}"
            language = language_for_path(path) or ""
            started = time.perf_counter()
            deadline = time.monotonic() + UPDATE_WAIT_S
            file.write_bytes(with_probe(language, original, name))
            if not await until_indexed(connection, name, True, deadline):
                failures.append({"path": path, "name": name, "failed": "not indexed"})
            else:
                indexed_ms.append((time.perf_counter() - started) * 1000)
                place = await until_packed(server, name, path, time.monotonic() + UPDATE_WAIT_S)
                if place == "body":
                    packed_ms.append((time.perf_counter() - started) * 1000)
                else:
                    failures.append({"path": path, "name": name, "failed": f"not packed as a body: {place}"})
            file.write_bytes(original)
            if not await until_indexed(connection, name, False, time.monotonic() + UPDATE_WAIT_S):
                failures.append({"path": path, "name": name, "failed": "not removed after the restore"})
    finally:
        connection.close()
    return {"indexed_ms": indexed_ms, "packed_ms": packed_ms, "failures": failures}


async def queries(server: Server, tasks: list[str]) -> tuple[list[float], list[float]]:
    """Round trip and pipeline time (the sum of ``metadata.timingsMs``) per task."""
    round_trips: list[float] = []
    pipeline: list[float] = []
    for task in tasks:
        started = time.perf_counter()
        pack = await server.context(task)
        round_trips.append((time.perf_counter() - started) * 1000)
        pipeline.append(sum(pack["metadata"]["timingsMs"].values()))
    return round_trips, pipeline


async def run(args: argparse.Namespace) -> dict[str, Any]:
    work: Path = args.work.resolve()
    if not (work / ".git").exists():
        work.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", str(args.mirror), str(work)], check=True
        )
    git(work, "checkout", "-q", "-f", args.source)
    git(work, "clean", "-q", "-fdx")
    indexes = work.parent / f"{work.name}-indexes"
    shutil.rmtree(indexes, ignore_errors=True)
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_at_start": os.getloadavg(),
        "from": git(work, "rev-parse", args.source).strip(),
        "to": git(work, "rev-parse", args.target).strip(),
    }
    tasks = commit_message_tasks(work, args.source, args.queries + 1)

    server = Server(work, indexes / "live", log=indexes / "server-cold.log")
    await server.launch()
    sampler = PeakRssSampler(server.pid)
    sampler.start()
    results["cold_s"] = await server.initialize()
    sampler.done.set()
    sampler.join()
    results["cold_peak_server_mb"] = sampler.peak_own_mb
    results["cold_peak_server_and_workers_mb"] = sampler.peak_total_mb
    results["rss_ready_mb"] = rss_mb(server.pid)
    live_path = next((indexes / "live").glob("*/index-*.sqlite"))
    paths = indexed_paths(live_path)
    results["indexed_files"] = len(paths)
    results["source_mb"] = source_bytes(work, paths) / 1e6
    results["index_mb"] = index_size(live_path.parent) / 1e6
    await server.stop()

    server = Server(work, indexes / "live", log=indexes / "server-queries.log")
    await server.launch()
    results["noop_s"] = await server.initialize()
    results["updates"] = await one_file_updates(server, live_path, update_candidates(live_path), args.updates)
    round_trips, pipeline = await queries(server, tasks)
    results["query_first_ms"] = round_trips[0]
    results["query_ms"] = round_trips[1:]
    results["query_pipeline_ms"] = pipeline[1:]
    results["rss_after_queries_mb"] = rss_mb(server.pid)
    soak = (tasks[1:] * (args.soak // max(1, len(tasks) - 1) + 1))[: args.soak]
    await queries(server, soak)
    results["soak_queries"] = len(soak)
    results["rss_after_soak_mb"] = rss_mb(server.pid)
    await server.stop()
    results["index_mb_after_updates"] = index_size(live_path.parent) / 1e6

    results["branch_switch"] = await switch(work, args.source, args.target, indexes)
    results["load_at_end"] = os.getloadavg()
    return results


async def switch(work: Path, source: str, target: str, indexes: Path) -> dict[str, Any]:
    """Checkout ``target`` under a server that has indexed ``source``; the fresh index of ``target``
    is built first, in this process, as the baseline."""
    git(work, "checkout", "-q", "-f", target)
    fresh_dir = indexes / "fresh-target"
    started = time.perf_counter()
    store = IndexStore(work, fresh_dir)
    fresh_report = Indexer(work, store, IndexConfig()).reconcile()
    fresh_s = time.perf_counter() - started
    store.close()
    expected = files_table(next(fresh_dir.glob("index-*.sqlite")))
    git(work, "checkout", "-q", "-f", source)
    changed = git(work, "diff", "--name-only", "--no-renames", source, target).split()

    server = Server(work, indexes / "live", log=indexes / "server-switch.log")
    await server.launch()
    await server.initialize()
    live_path = next((indexes / "live").glob("*/index-*.sqlite"))
    sampler = PeakRssSampler(server.pid)
    sampler.start()
    seen = len(server.statuses)
    started = time.perf_counter()
    git(work, "checkout", "-q", target)
    checkout_s = time.perf_counter() - started
    await server.until_indexed(live_path, expected, seen)
    consistent_s = time.perf_counter() - started
    # Graph scores follow once updates have been quiet for a moment (live_index.SCORES_QUIET_S).
    deadline = time.monotonic() + WAIT_S
    while scores_dirty(live_path) and time.monotonic() < deadline:
        await asyncio.sleep(SCORES_POLL_S)
    scored_s = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    await server.stop()
    equal = same_index(live_path.parent, fresh_dir, work)
    git(work, "checkout", "-q", "-f", source)
    return {
        "changed_files": len(changed),
        "changed_source_files": sum(1 for path in changed if language_for_path(path) is not None),
        "indexed_files_after": len(expected),
        "git_checkout_s": checkout_s,
        "consistent_s": consistent_s,
        "scores_s": scored_s,
        "fresh_index_s": fresh_s,
        "fresh_index_stages_s": fresh_report.stage_seconds,
        "peak_server_and_workers_mb": sampler.peak_total_mb,
        "equals_fresh_index": equal,
    }


def table(results: dict[str, Any]) -> str:
    moved = results["branch_switch"]
    updates = results["updates"]
    trips = results["query_ms"]
    pipeline = results["query_pipeline_ms"]
    ratio = results["index_mb"] / results["source_mb"]
    rows = [
        (
            "indexed files at FROM / source MB",
            f"{results['indexed_files']:,} / {results['source_mb']:.1f}",
            "10k",
        ),
        ("cold: initialized to ready", f"{results['cold_s']:.1f} s", "<= 60 s"),
        (
            "cold: peak RSS server / server + workers",
            f"{results['cold_peak_server_mb']:.0f} / {results['cold_peak_server_and_workers_mb']:.0f} MB",
            "<= 1 GB",
        ),
        ("no-op restart to ready", f"{results['noop_s']:.2f} s", ""),
        (
            f"one-file update: save to indexed p50 / p95 (n={len(updates['indexed_ms'])})",
            spread(updates["indexed_ms"]),
            "p95 <= 50 ms",
        ),
        (
            f"- save to packed as a body for its name p50 / p95 (n={len(updates['packed_ms'])})",
            spread(updates["packed_ms"]),
            "",
        ),
        ("- probes not indexed or not packed in time", str(len(updates["failures"])), "0"),
        (f"contextForTask over LSP p50 / p95 (n={len(trips)})", spread(trips), "p95 <= 60 ms"),
        ("- pipeline's own timings p50 / p95", spread(pipeline), ""),
        (
            f"server RSS: ready / after {len(trips) + 1} queries / after {results['soak_queries']:,} more",
            f"{results['rss_ready_mb']:.0f} / {results['rss_after_queries_mb']:.0f} / "
            f"{results['rss_after_soak_mb']:.0f} MB",
            "<= 1 GB, flat",
        ),
        ("index on disk / per source byte", f"{results['index_mb']:.1f} MB / {ratio:.1f}x", "<= 4x"),
        (
            "branch switch: files changed by git (source) / indexed after",
            f"{moved['changed_files']:,} ({moved['changed_source_files']:,})"
            f" / {moved['indexed_files_after']:,}",
            ">= 10k changed",
        ),
        ("- checkout start to files consistent", f"{moved['consistent_s']:.1f} s", "<= 15 s"),
        ("- ... and graph scores recomputed", f"{moved['scores_s']:.1f} s", ""),
        ("- baseline: fresh index of the target, same run", f"{moved['fresh_index_s']:.1f} s", ""),
        ("- switch / fresh", f"{moved['consistent_s'] / moved['fresh_index_s']:.2f}x", "<= 0.5x"),
        (
            "- peak RSS server + workers during the switch",
            f"{moved['peak_server_and_workers_mb']:.0f} MB",
            "<= 1 GB",
        ),
        ("- live index equals the fresh one", str(moved["equals_fresh_index"]), "True"),
        (
            "load average at start / end",
            f"{results['load_at_start'][0]:.1f} / {results['load_at_end'][0]:.1f}",
            "",
        ),
    ]
    return "\n".join(
        ["| measure | value | target |", "|---|---|---|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows]
    )


def spread(values: list[float]) -> str:
    if not values:
        return "none"
    p50, p95 = median_and_p95(values)
    return f"{p50:.0f} / {p95:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("mirror", type=Path, help="the repository's git directory (never written)")
    parser.add_argument("work", type=Path, help="where the work tree goes (its indexes go beside it)")
    parser.add_argument("--from", dest="source", required=True, help="the commit indexed cold")
    parser.add_argument("--to", dest="target", required=True, help="the commit switched to")
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--soak", type=int, default=SOAK_QUERIES)
    parser.add_argument("--updates", type=int, default=UPDATES)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "scale.json")
    args = parser.parse_args()
    results = asyncio.run(run(args))
    print(table(results))
    for failure in results["updates"]["failures"]:
        print(f"probe {failure['name']} in {failure['path']}: {failure['failed']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
