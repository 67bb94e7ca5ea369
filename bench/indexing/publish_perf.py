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


def drop_database(server: PostgresServer, name: str) -> None:
    with psycopg.connect(server.url(), autocommit=True) as connection:
        connection.execute(f"DROP DATABASE {name}".encode())


def database_mb(url: str) -> float:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return int(row[0]) / 2**20


WAYS = ("whole", "one", "turn", "side")


def publish_whole(root: Path, url: str, temp: str, count: int) -> list[Run]:
    return [run("whole", index_command(root, url, "--index-dir", f"{temp}/whole"))]


def publish_one_shard(root: Path, url: str, temp: str, count: int) -> list[Run]:
    return [
        run("shard 1/1", index_command(root, url, "--shard", "1/1")),
        run("finish", index_command(root, url, "--finish")),
    ]


def publish_in_turn(root: Path, url: str, temp: str, count: int) -> list[Run]:
    shards = [
        run(f"shard {i}/{count}", index_command(root, url, "--shard", f"{i}/{count}"))
        for i in range(1, count + 1)
    ]
    return [*shards, run("finish", index_command(root, url, "--finish"))]


def publish_side_by_side(root: Path, url: str, temp: str, count: int) -> list[Run]:
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
    return [*side, run("finish", index_command(root, url, "--finish"))]


def elapsed(way: str, runs: list[Run]) -> float:
    """The publish's time: its one process's, or the slowest shard's plus the finish's (as on as many
    machines as shards, or side by side here)."""
    if way == "one":
        return sum(r.seconds for r in runs)
    if way in ("turn", "side"):
        return max(r.seconds for r in runs[:-1]) + runs[-1].seconds
    return runs[0].seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a clean git checkout")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument(
        "--ways",
        default=",".join(WAYS),
        help="which publishes, of whole (one process), one (--shard 1/1 + --finish), turn (N shards one"
        " after another + --finish), side (N shards side by side + --finish)",
    )
    parser.add_argument("--json", type=Path, default=OUT_DIR / "publish_perf.json")
    args = parser.parse_args()
    root = args.root.resolve()
    count = args.shards
    ways = [way for way in args.ways.split(",") if way]
    if set(ways) - set(WAYS):
        raise SystemExit(f"--ways takes {', '.join(WAYS)}")
    names = {
        "whole": "whole (one process)",
        "one": "1 shard + finish",
        "turn": f"{count} shards on {count} machines (slowest shard + finish)",
        "side": f"{count} shards side by side on this machine + finish",
    }
    publishers = {
        "whole": publish_whole,
        "one": publish_one_shard,
        "turn": publish_in_turn,
        "side": publish_side_by_side,
    }
    load_before = uptime()
    server = start()
    results: dict[str, list[Run]] = {}
    sizes: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="smartctx-publishperf-") as temp:
            for way in ways:
                print(names[way])
                url = new_database(server, way)
                results[way] = publishers[way](root, url, temp, count)
                sizes[way] = database_mb(url)
                # A large repository's commit takes gigabytes: one database at a time.
                drop_database(server, way)
    finally:
        server.stop()
    seconds = {way: elapsed(way, runs) for way, runs in results.items()}
    print()
    print("| way | seconds | ratio to whole | ratio to 1 shard | peak MB of a process | database MB |")
    print("|---|---|---|---|---|---|")
    for way, runs in results.items():
        peak = max(max(r.peak_mb, r.worker_peak_mb) for r in runs)
        to_whole = f"{seconds[way] / seconds['whole']:.2f}" if "whole" in seconds else "-"
        to_one = f"{seconds[way] / seconds['one']:.2f}" if "one" in seconds else "-"
        print(
            f"| {names[way]} | {seconds[way]:.1f} | {to_whole} | {to_one} | {peak:.0f} | {sizes[way]:.0f} |"
        )
    report = {
        "root": str(root),
        "commit": subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "load_before": load_before,
        "load_after": uptime(),
        "shards": count,
        "runs": {names[way]: [asdict(r) for r in runs] for way, runs in results.items()},
        "database_mb": {names[way]: size for way, size in sizes.items()},
        "seconds": {names[way]: value for way, value in seconds.items()},
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2))
    print(f"\nwritten {args.json}; load before: {load_before}; after: {report['load_after']}")


if __name__ == "__main__":
    main()
