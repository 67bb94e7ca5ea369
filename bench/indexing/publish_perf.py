"""Publishing a commit to PostgreSQL in one process against in N shards and a finish (issue 26).

Every publish runs as a CI job runs it, a ``smartctx index --publish`` process, into a database of
its own on a throw-away server (Debian's PostgreSQL, as the tests start it). For each way of
publishing: the wall time, the peak memory of each process (the publisher and its parser workers,
sampled from /proc every 50 ms), and the database's size.

* ``whole``: ``--publish``, one process.
* ``1 shard``: ``--shard 1/1`` then ``--finish``: the sharded path's own cost.
* ``N shards, one after another``: each ``--shard I/N`` alone, then ``--finish``. On N machines (a CI
  matrix) the shards run at once, each as fast as alone here, so the publish takes the slowest
  shard's time plus the finish's: the figure reported as the sharded publish's time.
* ``N shards side by side``: the N jobs at once on this machine, then the finish: what one machine
  with as many cores as it has gains.

```sh
PYTHONPATH=/work/frozen-X/server .venv/bin/python -m bench.indexing.publish_perf CLEAN_GIT_TREE --shards 2
```
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import psycopg
from tests.postgres_server import PostgresServer, start

from bench.datasets import OUT_DIR
from bench.latency.pg_search import uptime
from bench.procfs import children, rss_mb

# How often a running publisher's memory is sampled.
SAMPLE_S = 0.05


@dataclass(frozen=True)
class Run:
    """One ``smartctx index`` process: what it was, its wall time and the peak memory of it and of
    its largest child (a parser worker)."""

    what: str
    seconds: float
    peak_mb: float
    worker_peak_mb: float


def run(what: str, command: list[str]) -> Run:
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak, worker_peak = 0.0, 0.0
    while process.poll() is None:
        try:
            peak = max(peak, rss_mb(process.pid))
            worker_peak = max([worker_peak, *(rss_mb(child) for child in children(process.pid))])
        except (FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(SAMPLE_S)
    seconds = time.monotonic() - started
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{what} failed ({process.returncode}): {err.strip()}")
    print(f"  {what}: {seconds:.1f} s, peak {peak:.0f} MB (worker {worker_peak:.0f} MB); {out.strip()}")
    return Run(what, seconds, peak, worker_peak)


def started(what: str, command: list[str]) -> tuple[str, float, subprocess.Popen[str]]:
    return (
        what,
        time.monotonic(),
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
    )


def index_command(root: Path, url: str, *args: str) -> list[str]:
    return [
        sys.executable, "-m", "smartctx", "index", str(root), "--quiet", "--publish", url,
        "--repository", "bench.invalid/publish", *args,
    ]  # fmt: skip


def new_database(server: PostgresServer, name: str) -> str:
    with psycopg.connect(server.url(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}".encode())
    return server.url(name)


def database_mb(url: str) -> float:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return int(row[0]) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a clean git checkout")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "publish_perf.json")
    args = parser.parse_args()
    root = args.root.resolve()
    count = args.shards
    load_before = uptime()
    server = start()
    results: dict[str, list[Run]] = {}
    sizes: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="smartctx-publishperf-") as temp:
            print("whole")
            url = new_database(server, "whole")
            results["whole"] = [run("whole", index_command(root, url, "--index-dir", f"{temp}/whole"))]
            sizes["whole"] = database_mb(url)
            print("1 shard")
            url = new_database(server, "one_shard")
            results["1 shard"] = [
                run("shard 1/1", index_command(root, url, "--shard", "1/1")),
                run("finish", index_command(root, url, "--finish")),
            ]
            sizes["1 shard"] = database_mb(url)
            print(f"{count} shards, one after another")
            url = new_database(server, "in_turn")
            results[f"{count} shards in turn"] = [
                *(
                    run(f"shard {i}/{count}", index_command(root, url, "--shard", f"{i}/{count}"))
                    for i in range(1, count + 1)
                ),
                run("finish", index_command(root, url, "--finish")),
            ]
            sizes[f"{count} shards in turn"] = database_mb(url)
            print(f"{count} shards side by side")
            url = new_database(server, "side_by_side")
            jobs = [
                started(f"shard {i}/{count}", index_command(root, url, "--shard", f"{i}/{count}"))
                for i in range(1, count + 1)
            ]
            side: list[Run] = []
            for what, began, job in jobs:
                out, err = job.communicate()
                if job.returncode != 0:
                    raise SystemExit(f"{what} failed: {err.strip()}")
                side.append(Run(what, time.monotonic() - began, 0.0, 0.0))
                print(f"  {what}: {side[-1].seconds:.1f} s (side by side); {out.strip()}")
            side.append(run("finish", index_command(root, url, "--finish")))
            results[f"{count} shards side by side"] = side
            sizes[f"{count} shards side by side"] = database_mb(url)
    finally:
        server.stop()
    whole_s = results["whole"][0].seconds
    one_shard_s = sum(r.seconds for r in results["1 shard"])
    in_turn = results[f"{count} shards in turn"]
    matrix_s = max(r.seconds for r in in_turn[:-1]) + in_turn[-1].seconds
    side_s = max(r.seconds for r in side[:-1]) + side[-1].seconds
    print()
    print("| way | seconds | ratio to whole | ratio to 1 shard | peak MB of a process | database MB |")
    print("|---|---|---|---|---|---|")
    rows = [
        ("whole (one process)", whole_s, results["whole"], sizes["whole"]),
        ("1 shard + finish", one_shard_s, results["1 shard"], sizes["1 shard"]),
        (
            f"{count} shards on {count} machines (slowest shard + finish)",
            matrix_s,
            in_turn,
            sizes[f"{count} shards in turn"],
        ),
        (
            f"{count} shards side by side on this machine + finish",
            side_s,
            side,
            sizes[f"{count} shards side by side"],
        ),
    ]
    for name, seconds, runs, size in rows:
        peak = max(max(r.peak_mb, r.worker_peak_mb) for r in runs)
        print(
            f"| {name} | {seconds:.1f} | {seconds / whole_s:.2f} | {seconds / one_shard_s:.2f}"
            f" | {peak:.0f} | {size:.0f} |"
        )
    report = {
        "root": str(root),
        "commit": subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "load_before": load_before,
        "load_after": uptime(),
        "runs": {name: [asdict(r) for r in runs] for name, runs in results.items()},
        "database_mb": sizes,
        "seconds": {"whole": whole_s, "1 shard": one_shard_s, "matrix": matrix_s, "side by side": side_s},
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2))
    print(f"\nwritten {args.json}; load before: {load_before}; after: {report['load_after']}")


if __name__ == "__main__":
    main()
