"""A pack over the language server from a team's published base with a branch's files laid over it
(``baseIndex`` and ``baseIndexOnly``) against the same pack from a language server with a local index
of the branch, side by side (issue 26: query p95 over LSP with base + overlay at most twice the
local index's, packs equal).

One run, on a throw-away PostgreSQL (tests/postgres_server.py):

1. **Publish.** ROOT (a git checkout) is copied, its origin remote named ``REMOTE``, and published
   as CI publishes it: ``smartctx index --publish`` in a process of its own, over a copy of
   ``--index-dir`` when given (so that publishing does not index the tree again).
2. **Branch.** The copy gets a branch of ``--changed K`` files (``overlay_perf.make_branch``:
   renames, added functions, edited bodies, two files added and one deleted, in ``--package``),
   committed on top of the published commit.
3. **Two servers** (``smartctx serve`` over stdio, bench/lsp_server.py), both on the branch:
   *local*, which indexes the branch cold into an index folder of its own as it starts (a fresh
   index, what the base's answers should equal), and *base*, with ``baseIndex`` and
   ``baseIndexOnly`` (it indexes only the files that differ from the base, and answers from base +
   overlay). Each is waited for until it is ready with nothing pending; the seconds are reported,
   and each server's log is kept beside ``--json`` (``NAME.local.log``, ``NAME.base.log``).
4. **Queries.** Every task is asked of both in turn (the order alternating from one task to the
   next, so that a change of load falls on both), ``--rounds`` times, after one request each that
   loads the tokenizer and is not counted: the client's wall time from request to answer, and the
   server process's CPU time (``/proc``), p50 / p95 and their ratios.
5. **Packs**: the same text and the same items in the same order ("exact"), or the same items in
   any order; the JSON holds the packs that differ, each item with its score and the score's parts.

    PYTHONPATH=server:. .venv/bin/python -m bench.latency.base_lsp_perf /work/benchrepos/qp-django \\
        --index-dir /work/benchrepos/qp-index --changed 10
    PYTHONPATH=server:. .venv/bin/python -m bench.latency.base_lsp_perf /work/benchrepos/mono/tree \\
        --index-dir /work/benchrepos/mono/index --commit-tasks /work/benchrepos/train-out/train_tasks.jsonl \\
        --package networkx+networkx/networkx --tasks 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from tests.postgres_server import start

from bench.datasets import OUT_DIR, SWE_LITE, task_statements
from bench.latency.overlay_perf import BranchSite, make_branch
from bench.latency.pg_search import uptime
from bench.lsp_server import Server
from bench.repository import copy_index, git
from bench.stats import median_and_p95

# How the copy's origin remote is named: the published repository's identity, for publisher and editor.
REMOTE = "https://bench.invalid/base-lsp.git"
# How long the publish may take (the monorepo's took 25 minutes on a busy machine).
PUBLISH_TIMEOUT_S = 3600
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """The user and system CPU seconds a process has used (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def items(pack: dict[str, Any]) -> list[str]:
    """What a pack holds, in order: its bodies' and summaries' citations, then the file map's paths."""
    return [
        *(f"body {body['citation']}" for body in pack.get("bodies", [])),
        *(f"summary {summary['citation']}" for summary in pack.get("summaries", [])),
        *(f"file {entry['filePath']}" for entry in pack.get("fileMap", [])),
    ]


def scored_items(pack: dict[str, Any]) -> list[tuple[str, float, dict[str, float]]]:
    """The pack's bodies and summaries in order, each with its score and the score's parts."""
    return [
        (f"{kind} {item['citation']}", item["score"], item.get("scoreParts", {}))
        for kind, field in (("body", "bodies"), ("summary", "summaries"))
        for item in pack.get(field, [])
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a git checkout (copied: never changed)")
    parser.add_argument(
        "--index-dir", type=Path, help="an index of root to copy (else publishing builds one)"
    )
    parser.add_argument("--changed", type=int, default=10, help="existing files the branch changes")
    parser.add_argument("--package", default="django", help="the Python package the branch changes")
    parser.add_argument(
        "--repo", default="django/django", help="whose SWE-bench Lite statements are the tasks"
    )
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--commit-tasks", type=Path, help="commit tasks of the tree's repositories instead")
    parser.add_argument("--tasks", type=int, help="only the first N tasks")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()), help="where the copies go")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "base_lsp_perf.json")
    args = parser.parse_args()
    root = args.root.resolve()
    tasks = task_statements(root, args.repo, args.data, args.commit_tasks)[: args.tasks]
    load_before = uptime()
    args.work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="smartctx-base-lsp-", dir=args.work) as temp:
        result = run(root, Path(temp), tasks, args)
    result.update(
        {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "root": str(root),
            "tasks": len(tasks),
            "load_before": load_before,
            "load_after": uptime(),
        }
    )
    report(result)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1))
    print(f"written: {args.json}")


def run(root: Path, temp: Path, tasks: list[str], args: argparse.Namespace) -> dict[str, Any]:
    tree = temp / "tree"
    shutil.copytree(root, tree, symlinks=True)
    if "origin" in git(tree, "remote").split():
        git(tree, "remote", "remove", "origin")
    git(tree, "remote", "add", "origin", REMOTE)
    base_index = temp / "base-index"
    if args.index_dir is not None:
        copy_index(args.index_dir, base_index, tree)
    server = start()
    try:
        began = time.perf_counter()
        command = [sys.executable, "-m", "smartctx", "index", str(tree), "--quiet", "--index-dir"]
        published = subprocess.run(
            [*command, str(base_index), "--publish", server.url()],
            capture_output=True,
            text=True,
            timeout=PUBLISH_TIMEOUT_S,
            check=False,
        )
        if published.returncode != 0:
            raise SystemExit(f"publishing failed:\n{published.stderr}")
        publish_s = time.perf_counter() - began
        with psycopg.connect(server.url()) as connection:
            sizes = {
                str(name): int(size)
                for name, size in connection.execute(
                    "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c"
                    " JOIN pg_namespace n ON n.oid = c.relnamespace"
                    " WHERE n.nspname = 'smartctx' AND c.relkind = 'r'"
                ).fetchall()
            }
        print(f"published in {publish_s:.1f} s: {sum(sizes.values()) / 1e6:,.0f} MB in the database")
        branch = make_branch(tree, BranchSite.of(args.package), args.changed, args.seed)
        git(tree, "checkout", "-q", "-b", f"branch-{args.changed}")
        git(tree, "add", "-A")
        git(tree, "-c", "user.name=bench", "-c", "user.email=bench@invalid", "commit", "-qm", "branch")
        print(
            f"branch: {branch.edited} files edited, {len(branch.added)} added, {len(branch.deleted)} deleted"
        )
        result = asyncio.run(
            ask(tree, temp / "local-index", temp / "base-server-index", server.url(), tasks, args)
        )
        result["publish_s"] = publish_s
        result["table_bytes"] = sizes
        return result
    finally:
        server.stop()


async def ask(
    tree: Path, local_index: Path, base_index: Path, url: str, tasks: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    # The servers' logs are kept beside the JSON: they say where a server's seconds to ready went.
    logs = args.json.with_suffix("")
    servers = {
        "local": Server(tree, local_index, logs.with_name(logs.name + ".local.log")),
        "base": Server(
            tree,
            base_index,
            logs.with_name(logs.name + ".base.log"),
            {"baseIndex": url, "baseIndexOnly": True},
        ),
    }
    ready_s: dict[str, float] = {}
    try:
        for name, server in servers.items():
            began = time.perf_counter()
            await server.launch()
            await server.initialize()
            status = await server.until(
                lambda found: found["state"] == "ready" and found["pendingFiles"] == 0
            )
            ready_s[name] = time.perf_counter() - began
            print(f"{name}: ready in {ready_s[name]:.1f} s ({status.get('base') or 'its own index'})")
        for server in servers.values():
            await server.context(tasks[0])
        wall: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, list[float]] = {name: [] for name in servers}
        packs: dict[str, list[dict[str, Any]]] = {name: [] for name in servers}
        for round_number in range(args.rounds):
            for number, task in enumerate(tasks):
                order = list(servers) if (number + round_number) % 2 == 0 else list(reversed(servers))
                for name in order:
                    server = servers[name]
                    cpu_before, began = cpu_s(server.pid), time.perf_counter()
                    pack = await server.context(task)
                    wall[name].append((time.perf_counter() - began) * 1000)
                    cpu[name].append((cpu_s(server.pid) - cpu_before) * 1000)
                    if round_number == 0:
                        packs[name].append(pack)
    finally:
        for server in servers.values():
            await server.stop()
    exact = sum(
        local["text"] == base["text"] and items(local) == items(base)
        for local, base in zip(packs["local"], packs["base"], strict=True)
    )
    any_order = sum(
        sorted(items(local)) == sorted(items(base))
        for local, base in zip(packs["local"], packs["base"], strict=True)
    )
    # Where two packs differ, what each held (with scores): ties, estimated PageRank or words.
    differences = [
        {"task": number, "local": scored_items(local), "base": scored_items(base)}
        for number, (local, base) in enumerate(zip(packs["local"], packs["base"], strict=True))
        if local["text"] != base["text"] or items(local) != items(base)
    ]
    return {
        "changed": args.changed,
        "rounds": args.rounds,
        "ready_s": ready_s,
        "wall_ms": wall,
        "cpu_ms": cpu,
        "packs_exact": exact,
        "packs_same_items": any_order,
        "pack_differences": differences,
    }


def report(result: dict[str, Any]) -> None:
    print(
        f"\n## A pack over LSP: base + overlay ({result['changed']} files changed) against a local index,"
        f" {result['tasks']} tasks x {result['rounds']} rounds\n"
    )
    print(f"load: before {result['load_before']}; after {result['load_after']}\n")
    print("| measure | local p50 | local p95 | base + overlay p50 | base + overlay p95 | ÷ p50 | ÷ p95 |")
    print("|---|---|---|---|---|---|---|")
    for label, key in (("wall, ms (client)", "wall_ms"), ("server CPU, ms", "cpu_ms")):
        local = median_and_p95(result[key]["local"])
        base = median_and_p95(result[key]["base"])
        cells = [f"{value:.1f}" for value in (*local, *base)]
        ratios = [f"x{base[i] / local[i]:.2f}" if local[i] else "-" for i in range(2)]
        print(f"| {label} | {' | '.join(cells)} | {' | '.join(ratios)} |")
    tasks = result["tasks"]
    print(
        f"\npacks: exact {result['packs_exact']} of {tasks}; the same items in any order"
        f" {result['packs_same_items']} of {tasks}; ready: local {result['ready_s']['local']:.1f} s,"
        f" base {result['ready_s']['base']:.1f} s; published in {result['publish_s']:.1f} s"
    )
    print(
        "tables (MB): "
        + ", ".join(f"{name} {size / 1e6:,.1f}" for name, size in result["table_bytes"].items())
    )


if __name__ == "__main__":
    main()
