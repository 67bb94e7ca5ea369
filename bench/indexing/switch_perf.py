"""A branch switch applied as one reconcile, against a fresh index of the target, in one process.

In a git work tree of MIRROR (cloned with ``--shared`` into WORK on first use): a cold index of FROM,
then ``git checkout TO`` and one reconcile of the same index (what the language server does once git
releases its index lock), then a fresh index of TO in another folder. For each: wall seconds, CPU
seconds of this process (the writer) and of its parser workers, and the report's stages. On a shared
machine the CPU seconds move far less than wall time, so the switch/fresh ratio is given for both.

    .venv/bin/python -m bench.indexing.switch_perf /work/.mirror/babel+babel/repo \\
        /work/benchrepos/speed-babel-switch --from 726154c78e --to 1da3cfa1a2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.datasets import OUT_DIR
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store.index_store import IndexStore


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds so far of this process and of its finished children (the parser workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def timed_reconcile(indexer: Indexer) -> dict[str, Any]:
    own_before, workers_before = cpu_seconds()
    started = time.perf_counter()
    report = indexer.reconcile()
    seconds = time.perf_counter() - started
    own_after, workers_after = cpu_seconds()
    return {
        "seconds": seconds,
        "writer_cpu_s": own_after - own_before,
        "workers_cpu_s": workers_after - workers_before,
        "files_parsed": report.files_parsed,
        "files_deleted": report.files_deleted,
        "stages_s": report.stage_seconds,
    }


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    work: Path = args.work.resolve()
    if not (work / ".git").exists():
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", str(args.mirror), str(work)], check=True
        )
    git(work, "checkout", "-q", "-f", args.source)
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_at_start": os.getloadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="smartctx-switch-", dir=work.parent) as temp:
        store = IndexStore(work, Path(temp) / "live")
        indexer = Indexer(work, store, IndexConfig())
        results["cold"] = timed_reconcile(indexer)
        git(work, "checkout", "-q", args.target)
        results["switch"] = timed_reconcile(indexer)
        store.close()
        fresh = IndexStore(work, Path(temp) / "fresh")
        results["fresh"] = timed_reconcile(Indexer(work, fresh, IndexConfig()))
        fresh.close()
        shutil.rmtree(temp, ignore_errors=True)
    git(work, "checkout", "-q", "-f", args.source)
    results["load_at_end"] = os.getloadavg()
    return results


def table(results: dict[str, Any]) -> str:
    rows = [
        "| run | files parsed / deleted | wall s | writer CPU s | workers CPU s | stages (wall s) |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("cold", "switch", "fresh"):
        run_result = results[name]
        stages = ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in run_result["stages_s"].items())
        rows.append(
            f"| {name} | {run_result['files_parsed']:,} / {run_result['files_deleted']:,}"
            f" | {run_result['seconds']:.1f} | {run_result['writer_cpu_s']:.1f}"
            f" | {run_result['workers_cpu_s']:.1f} | {stages} |"
        )
    switch, fresh = results["switch"], results["fresh"]
    cpu_ratio = (switch["writer_cpu_s"] + switch["workers_cpu_s"]) / (
        fresh["writer_cpu_s"] + fresh["workers_cpu_s"]
    )
    rows.append(
        f"\nswitch / fresh: wall {switch['seconds'] / fresh['seconds']:.2f}x, CPU {cpu_ratio:.2f}x;"
        f" load average {results['load_at_start'][0]:.1f} at the start,"
        f" {results['load_at_end'][0]:.1f} at the end"
    )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("mirror", type=Path, help="the repository's git directory (never written)")
    parser.add_argument("work", type=Path, help="where the work tree goes")
    parser.add_argument("--from", dest="source", required=True)
    parser.add_argument("--to", dest="target", required=True)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "switch_perf.json")
    args = parser.parse_args()
    results = run(args)
    print(table(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
