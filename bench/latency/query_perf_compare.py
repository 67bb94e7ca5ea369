"""Query latency of two (or more) versions of smartctx side by side, on one index, interleaved.

Each version runs in a worker process of its own, importing smartctx from the server folder it is
given (a frozen worktree of a commit), over the same index and the same SWE-bench Lite problem
statements of one repository (or, with ``--commits REV``, the tasks bench/indexing/scale.py writes from the
commit messages before REV: a repository SWE-bench does not cover, such as babel). Tasks are sent
to the versions in turn, the order alternating from one task to the next, so that the load of a
shared machine falls on every version alike: the ratio of their percentiles is the figure to read,
more than the milliseconds.

    .venv/bin/python -m bench.latency.query_perf_compare /work/benchrepos/rank-swe/django \\
        --index-dir /tmp/idx-django --version main=/work/frozen-main/server --version new=server

Each answer also carries a digest of its pack as JSON without its timings: the script reports the
tasks whose packs differ between versions, so a change meant only for speed shows it ranks and
packs exactly as before (``--require-same-packs`` makes a difference fail the run). Besides wall
time it records each request's CPU time, which the load of other processes moves less.

With ``--lsp`` each version is a ``smartctx serve`` over stdio instead, asked
``smartctx/contextForTask`` as an editor asks it (live_perf.py's client), each on its own copy of
the index (two servers on one index folder would be a writer and a follower). Wall time is then
the client's, from the request's first byte to the answer's last; CPU time is the server
process's; and the table gains the part of the wall time outside the pipeline's own stages
(framing, JSON, the exit's redaction, the event loop).

The versions share one index (built once, by this process's smartctx) unless a version names its
own after a comma (``--version old=/work/frozen-old/server,/tmp/idx-old``): a version whose index
format differs needs one, which its worker brings up to date with its own code before the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench import side_by_side
from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.repository import commit_message_tasks, indexed_store
from bench.stats import median_and_p95, percentile
from smartctx.lsp.protocol import CONTEXT_FOR_TASK

# With --commits, this many tasks: the number of queries scale.py asks by default, so that both
# measure the same commit messages.
COMMIT_TASKS = 60


def pack_digest(wire: dict[str, Any]) -> str:
    """A pack as JSON without what differs between two runs of one code: its timings, and when its
    index was last brought up to date (each LSP server does so on its own copy)."""
    metadata = wire["metadata"]
    metadata.pop("timingsMs")
    metadata["freshness"].pop("lastUpdate")
    return hashlib.sha256(json.dumps(wire, sort_keys=True).encode()).hexdigest()


def process_cpu_s(pid: int) -> float:
    """CPU seconds a process's threads have run so far, to the nanosecond (Linux's schedstat; the
    clock ticks of /proc/PID/stat are 10 ms); threads that ended are not counted."""
    total_ns = 0
    for thread in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total_ns += int((thread / "schedstat").read_text().split()[0])
    return total_ns / 1e9


def lsp_worker(root: Path, index_dir: Path, budget: int) -> None:
    """Like :func:`worker`, through a ``smartctx serve`` of this process's smartctx over stdio."""
    from bench.lsp_server import Server

    # The client takes the current loop when it is made; requests then run on it one at a time.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    server = Server(root, index_dir)
    loop.run_until_complete(server.start())
    for task in side_by_side.asked():
        cpu_before = process_cpu_s(server.pid)
        began = time.perf_counter()
        wire = loop.run_until_complete(
            server.client.protocol.send_request_async(
                CONTEXT_FOR_TASK, {"task": task, "options": {"budgetTokens": budget}}
            )
        )
        total_ms = (time.perf_counter() - began) * 1000
        cpu_ms = (process_cpu_s(server.pid) - cpu_before) * 1000
        stages: dict[str, float] = dict(wire["metadata"]["timingsMs"])
        stages["outside"] = total_ms - sum(stages.values())
        side_by_side.answer(
            {
                "total_ms": total_ms,
                "cpu_ms": cpu_ms,
                "stages_ms": stages,
                "tokens": wire["tokensUsed"],
                "pack": pack_digest(wire),
            }
        )
    loop.run_until_complete(server.stop())
    loop.close()


def worker(root: Path, index_dir: Path, budget: int) -> None:
    """Answer one task per line of stdin with one JSON line of timings (run with --worker)."""
    from smartctx.core.context import ContextOptions, ContextRequest
    from smartctx.core.tokens import TokenCounter
    from smartctx.indexing.sources import WorkspaceSources
    from smartctx.retrieval.pipeline import build_context

    try:  # the version's own conversion: smartctx.wire since issue 25
        from smartctx.wire.convert import pack_to_wire
    except ImportError:  # before: smartctx.output
        from smartctx.output.pack_json import pack_to_wire  # type: ignore[no-redef]

    store = indexed_store(root, index_dir)
    sources = WorkspaceSources(root)
    counter = TokenCounter()
    for task in side_by_side.asked():
        began, began_cpu = time.perf_counter(), time.process_time()
        with store.snapshot() as snapshot:
            pack = build_context(
                ContextRequest(task, ContextOptions(budget_tokens=budget)), snapshot, counter, sources
            )
        total_ms = (time.perf_counter() - began) * 1000
        cpu_ms = (time.process_time() - began_cpu) * 1000
        digest = pack_digest(pack_to_wire(pack))
        side_by_side.answer(
            {
                "total_ms": total_ms,
                "cpu_ms": cpu_ms,
                "stages_ms": pack.timings_ms,
                "tokens": pack.tokens_used,
                "pack": digest,
            }
        )
    store.close()


def start_worker(spec: side_by_side.VersionSpec, args: argparse.Namespace) -> side_by_side.Worker:
    """A version's worker on the shared index or its own; over LSP on a copy of it (two servers on one
    index folder would be a writer and a follower)."""
    index_dir = spec.index_dir or args.index_dir
    if args.lsp:
        copy = args.index_dir.with_name(f"{args.index_dir.name}-lsp-{spec.name}")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(index_dir, copy)
        index_dir = copy
    mode = "--lsp-worker" if args.lsp else "--worker"
    arguments = (str(args.root), str(index_dir.resolve()), str(args.budget))
    return side_by_side.Worker(spec.name, spec.server, __file__, mode, *arguments)


def main() -> int:
    if sys.argv[1:2] in (["--worker"], ["--lsp-worker"]):
        run = lsp_worker if sys.argv[1] == "--lsp-worker" else worker
        run(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--repo", default="django/django", help="whose problem statements to use")
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument(
        "--commits",
        metavar="REV",
        help="instead of SWE-bench problem statements, tasks written from the commit messages before REV"
        " (bench/indexing/scale.py's, as its queries are)",
    )
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--tasks", type=int, help="ask only the first N tasks")
    parser.add_argument("--rounds", type=int, default=2, help="times each task is asked of each version")
    side_by_side.add_version_argument(parser, own_index=True)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "query_perf_compare.json")
    parser.add_argument("--lsp", action="store_true", help="ask smartctx serve over stdio, not in process")
    parser.add_argument(
        "--require-same-packs", action="store_true", help="exit 1 if any task's pack differs between versions"
    )
    args = parser.parse_args()
    if args.rounds < 1 or len(args.version) < 2:
        parser.error("compare at least two versions over at least one round")
    args.root = args.root.resolve()
    if args.commits:
        tasks = commit_message_tasks(args.root, args.commits, COMMIT_TASKS)[: args.tasks]
    else:
        tasks = problem_statements(args.repo, args.data)[: args.tasks]
    indexed_store(args.root, args.index_dir).close()
    versions = [start_worker(spec, args) for spec in args.version]
    # One warm-up each: the tokenizer's load and SQLite's cold cache are not what is compared.
    for version in versions:
        version.ask(tasks[0])
    load = os.getloadavg()[0]
    for round_number in range(args.rounds):
        for number, task in enumerate(tasks):
            for version in side_by_side.in_turns(versions, number + round_number):
                version.rows.append(version.ask(task))
    for version in versions:
        version.close()
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {len(tasks)} tasks")
    stages = list(
        dict.fromkeys(stage for version in versions for row in version.rows for stage in row["stages_ms"])
    )
    print(
        "| version | n | p50 ms | p95 ms | CPU p50 / p95 ms | tokens | "
        + " | ".join(f"{s} p50/p95" for s in stages)
        + " |"
    )
    print("|---" * (6 + len(stages)) + "|")
    for version in versions:
        totals = [row["total_ms"] for row in version.rows]
        cells = [
            f"{statistics.median(values):.1f} / {percentile(values, 0.95):.1f}"
            for values in ([row["stages_ms"].get(stage, 0.0) for row in version.rows] for stage in stages)
        ]
        tokens = statistics.mean(row["tokens"] for row in version.rows)
        p50, p95 = median_and_p95(totals)
        cpu = [row["cpu_ms"] for row in version.rows]
        print(
            f"| {version.name} | {len(totals)} | {p50:.1f} | {p95:.1f} | "
            f"{statistics.median(cpu):.1f} / {percentile(cpu, 0.95):.1f} | {tokens:,.0f} | "
            + " | ".join(cells)
            + " |"
        )
    differing = 0
    for version in versions[1:]:
        ratios = []
        for measure in ("total_ms", "cpu_ms"):
            first = [row[measure] for row in versions[0].rows]
            values = [row[measure] for row in version.rows]
            p50 = statistics.median(values) / statistics.median(first)
            p95 = percentile(values, 0.95) / percentile(first, 0.95)
            ratios.append(f"{'wall' if measure == 'total_ms' else 'CPU'} p50 x{p50:.2f}, p95 x{p95:.2f}")
        # Every round asks the same tasks in the same order, so rows match up one to one.
        changed = sorted(
            {
                number % len(tasks)
                for number, (ours, theirs) in enumerate(zip(version.rows, versions[0].rows, strict=True))
                if ours["pack"] != theirs["pack"]
            }
        )
        differing += len(changed)
        print(
            f"{version.name} / {versions[0].name}: {'; '.join(ratios)}; packs differ on {len(changed)} of"
            f" {len(tasks)} tasks" + (f" (task numbers {changed[:20]})" if changed else "")
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({version.name: version.rows for version in versions}, indent=1) + "\n", encoding="utf-8"
    )
    return 1 if args.require_same_packs and differing else 0


if __name__ == "__main__":
    sys.exit(main())
