"""A soak of the language server: requests and file churn for many minutes, and what it costs over time.

    .venv/bin/python -m bench.reliability.soak_lsp [--minutes 30] [--out bench/out/soak_lsp.json]

The workspace is a copy of this repository's ``server/`` tree at HEAD. Each round writes, rewrites or
deletes a probe file (the server's watcher picks it up), asks contextForTask with one of a rotating set
of tasks, and expands the top body. Once a minute it samples the server's RSS, open file descriptors
and threads. It prints one table and writes JSON; the verdict is the RSS slope after a two-minute
warm-up (least squares, MB per minute) and whether fd and thread counts stay bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.datasets import CHECKOUT, OUT_DIR
from bench.lsp_server import Server
from bench.procfs import rss_mb
from bench.stats import percentile
from smartctx.lsp.protocol import EXPAND

SAMPLE_EVERY_S = 60.0
WARM_UP_S = 120.0
TASKS = [
    "how is a context pack trimmed to the token budget",
    "where are secrets redacted before a pack leaves the server",
    "watcher debounce of file events and full reconcile on overflow",
    "PageRank scores recomputed after a batch of changes",
    "hover markdown with uses and the latest git change",
    "parse a file with tree-sitter and extract definitions and references",
    "multi-root workspace folders each with their own index",
    "cancel a contextForTask request between pipeline stages",
]


def proc_counts(pid: int) -> tuple[int, int]:
    """Open file descriptors and threads of a process."""
    fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    threads = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("Threads:")
    )
    return fds, threads


def sample(pid: int, at_s: float) -> dict[str, float]:
    fds, threads = proc_counts(pid)
    return {"s": round(at_s, 1), "rssMb": rss_mb(pid), "fds": fds, "threads": threads}


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) points, per minute."""
    if len(points) < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / len(points)
    mean_v = sum(v for _, v in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return 0.0
    return 60 * sum((t - mean_t) * (v - mean_v) for t, v in points) / spread


def churn(probe: Path, round_number: int) -> None:
    """Create, rewrite or delete the probe file, in turn."""
    step = round_number % 3
    if step == 2:
        probe.unlink(missing_ok=True)
    else:
        probe.write_text(
            f'def soak_probe_{round_number}(value):\n    """Round {round_number}."""\n    return value\n',
            encoding="utf-8",
        )


async def soak(root: Path, index_dir: Path, minutes: float) -> dict[str, Any]:
    server = Server(root, index_dir)
    # The server's log is read as it comes by Server itself: a second reader of the pipe would fail.
    first_index_s = await server.start()
    started = time.monotonic()
    samples: list[dict[str, float]] = []
    rounds = 0
    latencies: list[float] = []
    next_sample = started
    probe = root / "smartctx" / "soak_probe.py"
    try:
        while time.monotonic() - started < minutes * 60:
            now = time.monotonic()
            if now >= next_sample:
                samples.append(sample(server.pid, now - started))
                next_sample += SAMPLE_EVERY_S
            churn(probe, rounds)
            asked = time.perf_counter()
            pack = await server.context(TASKS[rounds % len(TASKS)])
            if pack["bodies"]:
                await server.client.protocol.send_request_async(EXPAND, {"id": pack["bodies"][0]["id"]})
            latencies.append((time.perf_counter() - asked) * 1000)
            rounds += 1
            await asyncio.sleep(0.2)
        samples.append(sample(server.pid, time.monotonic() - started))
    finally:
        await server.stop()
    settled = [(sample["s"], sample["rssMb"]) for sample in samples if sample["s"] >= WARM_UP_S]
    return {
        "minutes": minutes,
        "rounds": rounds,
        "firstIndexS": round(first_index_s, 2),
        "requestP50Ms": round(percentile(latencies, 0.5), 1) if latencies else None,
        "requestP95Ms": round(percentile(latencies, 0.95), 1) if latencies else None,
        "rssStartMb": round(samples[0]["rssMb"], 1),
        "rssEndMb": round(samples[-1]["rssMb"], 1),
        "rssSlopeMbPerMin": round(slope_per_minute(settled), 3),
        "fds": [min(s["fds"] for s in samples), max(s["fds"] for s in samples)],
        "threads": [min(s["threads"] for s in samples), max(s["threads"] for s in samples)],
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--out", type=Path, default=OUT_DIR / "soak_lsp.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="smartctx-soak-") as tmp:
        root = Path(tmp) / "server"
        root.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(CHECKOUT), "archive", "HEAD", "server"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "--strip-components=1", "-C", str(root)], input=archive, check=True)
        result = asyncio.run(soak(root, Path(tmp) / "index", args.minutes))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print("| minutes | rounds | RSS start, end MB | RSS slope MB/min | fds | threads | p50 / p95 ms |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {result['minutes']:g} | {result['rounds']} | {result['rssStartMb']}, {result['rssEndMb']} "
        f"| {result['rssSlopeMbPerMin']} | {result['fds'][0]} to {result['fds'][1]} "
        f"| {result['threads'][0]} to {result['threads'][1]} "
        f"| {result['requestP50Ms']} / {result['requestP95Ms']} |"
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
