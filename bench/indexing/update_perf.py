"""One saved file → queryable, in process, for two (or more) versions of smartctx side by side.

Each version runs in a worker process of its own, importing smartctx from the server folder it is
given (a frozen worktree of a commit), on its own copy of the repository and its own index, built
cold by the worker before the run. An update appends a definition (bench/indexing/probes.py) to one file,
as a save does, applies it through the path the language server takes for a save
(``Indexer.update_paths``) and then searches the index for the definition's name, again every
millisecond, until the lexical search finds it: the update is timed from the write to that answer,
in wall time and in CPU time of the whole process (every thread, so work an update leaves to a
thread of its own is counted while it runs). Work still running after the answer (segment merges)
falls into the next update's CPU time; ``cpu_total`` is each version's CPU over the whole run,
divided by the updates, which counts all of it.

Updates are sent to the versions in blocks, in turn, the order alternating from one block to the
next, so that the load of a shared machine falls on every version alike: the ratio of their
percentiles is the figure to read, more than the milliseconds. The files edited are the same, in the
same order, for every version.

    .venv/bin/python -m bench.indexing.update_perf /work/benchrepos/django \\
        --work /work/benchrepos/update3-run --version main=/work/frozen-main/server --version new=server
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bench import side_by_side
from bench.datasets import OUT_DIR
from bench.indexing.index_perf import edited_files
from bench.indexing.probes import with_probe
from bench.repository import indexed_store
from bench.stats import median_and_p95

UPDATES = 60
BLOCK = 5
# A change not found within this long is a failure, not a slow update.
FOUND_WITHIN_S = 30.0
FOUND_POLL_S = 0.001
FIGURES = ("wall p50", "wall p95", "cpu p50", "cpu p95", "cpu total")


def probe_name(number: int) -> str:
    """A definition name of letters only, so that it is one search word that no file holds."""
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters += chr(ord("a") + digit)
        if number == 0:
            return f"zzupdateprobe{letters}"


def worker(root: Path, index_dir: Path, updates: int) -> None:
    """Index ``root`` cold, answer with the files it will edit, then run the updates asked for
    (``[first, count]``), answering each with their timings."""
    from smartctx.indexing.indexer import IndexConfig, Indexer
    from smartctx.parsing.languages import language_for_path

    store = indexed_store(root, index_dir)
    indexer = Indexer(root, store, IndexConfig(workers=0))
    candidates = edited_files(store.path)
    chosen = candidates[:: max(1, len(candidates) // updates)][:updates]
    side_by_side.answer(chosen)
    started_cpu = time.process_time()
    for first, count in side_by_side.asked():
        rows = []
        for number in range(first, first + count):
            path, name = chosen[number], probe_name(number)
            original = (root / path).read_bytes()
            (root / path).write_bytes(with_probe(language_for_path(path) or "", original, name))
            began, began_cpu = time.perf_counter(), time.process_time()
            indexer.update_paths([path], recompute_scores=False)
            while not found(store, name):
                if time.perf_counter() - began > FOUND_WITHIN_S:
                    raise SystemExit(f"{name} in {path} not found {FOUND_WITHIN_S} s after its update")
                time.sleep(FOUND_POLL_S)
            rows.append(
                {
                    "path": path,
                    "wall_ms": (time.perf_counter() - began) * 1000,
                    "cpu_ms": (time.process_time() - began_cpu) * 1000,
                }
            )
        side_by_side.answer({"rows": rows, "cpu_s": time.process_time() - started_cpu})
    store.close()


def found(store: Any, name: str) -> bool:
    """Whether a search for ``name`` finds its definition in what is committed now."""
    with store.snapshot() as snapshot:
        hits = snapshot.search({name: 1}, 5)
        return any(node.name == name for node in snapshot.nodes(hit.node_id for hit in hits))


def start_worker(spec: side_by_side.VersionSpec, args: argparse.Namespace) -> side_by_side.Worker:
    """A version's worker on its own copy of the repository and its own index."""
    root = args.work / f"{spec.name}-repo"
    index_dir = args.work / f"{spec.name}-index"
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(index_dir, ignore_errors=True)
    shutil.copytree(args.root, root, symlinks=True)
    arguments = (str(root), str(index_dir), str(args.updates))
    return side_by_side.Worker(spec.name, spec.server, __file__, "--worker", *arguments)


def main() -> int:
    if sys.argv[1:2] == ["--worker"]:
        worker(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--work", type=Path, required=True, help="where the copies and indexes go")
    parser.add_argument("--updates", type=int, default=UPDATES)
    parser.add_argument("--block", type=int, default=BLOCK, help="updates a version runs in one turn")
    side_by_side.add_version_argument(parser)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "update_perf.json")
    args = parser.parse_args()
    if len(args.version) < 2:
        parser.error("compare at least two versions")
    args.root, args.work = args.root.resolve(), args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    versions = [start_worker(spec, args) for spec in args.version]
    edited = [version.read() for version in versions]
    if any(paths != edited[0] for paths in edited):
        raise SystemExit("the versions chose different files to edit")
    updates = len(edited[0])
    # Each version's CPU seconds over the whole run, as its last answer gives them.
    cpu_s: dict[str, float] = {}
    load = os.getloadavg()
    for block, first in enumerate(range(0, updates, args.block)):
        for version in side_by_side.in_turns(versions, block):
            answer = version.ask([first, min(args.block, updates - first)])
            version.rows.extend(answer["rows"])
            cpu_s[version.name] = answer["cpu_s"]
    end_load = os.getloadavg()
    for version in versions:
        version.close()
    print(
        f"{updates} one-file updates per version; load average (1/5/15 min) {load[0]:.2f}/{load[1]:.2f}/"
        f"{load[2]:.2f} at the start, {end_load[0]:.2f}/{end_load[1]:.2f}/{end_load[2]:.2f} at the end"
    )
    print("| version | n | wall p50 ms | wall p95 ms | cpu p50 ms | cpu p95 ms | cpu total / update ms |")
    print("|---|---|---|---|---|---|---|")
    figures = {}
    for version in versions:
        wall = [row["wall_ms"] for row in version.rows]
        cpu = [row["cpu_ms"] for row in version.rows]
        figures[version.name] = (
            *median_and_p95(wall),
            *median_and_p95(cpu),
            cpu_s[version.name] * 1000 / len(version.rows),
        )
        cells = " | ".join(f"{value:.1f}" for value in figures[version.name])
        print(f"| {version.name} | {len(wall)} | {cells} |")
    base = figures[versions[0].name]
    for version in versions[1:]:
        ratios = ", ".join(
            f"{label} x{value / reference:.2f}"
            for label, value, reference in zip(FIGURES, figures[version.name], base, strict=True)
        )
        print(f"{version.name} / {versions[0].name}: {ratios}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {"load": [load, end_load], **{version.name: version.rows for version in versions}}, indent=1
        )
        + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
