"""What editor focus costs a request, for two (or more) versions of smartctx side by side.

Each version runs in a worker process of its own, importing smartctx from the server folder it is
given (a frozen worktree of a commit), over the same index. Each task (a SWE-bench Lite problem
statement of the repository) gets one random editor state, drawn with a fixed seed as
``query_perf.py --focus`` draws it (an active file with its cursor, 5 more visible files, 10 open,
10 recent edits), and every version packs it with and without that state, interleaved, best of two
each. Versions take turns, the order alternating from one task to the next, so that the load of a
shared machine falls on each alike.

Reported per version: the extra CPU time of the request's thread (which waiting for a core does not
inflate) end to end, in the focus stage alone and per stage (a focused pack is a different pack:
its scoring and packing cost differs too), and whether the versions gave the same answers:
the focused pack (every body and summary with its score parts, the file map) and the walk's own
result must be identical, float for float.

    .venv/bin/python -m bench.latency.focus_perf /work/benchrepos/focus2-django \\
        --index-dir /work/benchrepos/focus2-django-index \\
        --version main=/work/frozen-main/server --version new=/work/frozen-new/server
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench import side_by_side
from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.repository import indexed_store
from bench.stats import median_and_p95

# The editor state: how many files of each kind, and the seed they are drawn with (query_perf.py's).
FOCUS_VISIBLE = 5
FOCUS_OPEN = 10
FOCUS_RECENT = 10
FOCUS_SEED = 14
MAX_CURSOR_LINE = 200
MAX_EDIT_AGE_S = 86_400.0


def worker(root: Path, index_dir: Path, budget: int) -> None:
    """Answer one {task, focus} per line of stdin with one JSON line (run with --worker).

    The stage clock is pointed at the thread's CPU time, so the focus stage is timed in CPU too.
    """
    from smartctx.core.context import ContextOptions, ContextPack, ContextRequest, Focus, RecentEdit
    from smartctx.core.tokens import TokenCounter
    from smartctx.indexing.sources import WorkspaceSources
    from smartctx.retrieval import focus as focus_module
    from smartctx.retrieval import pipeline
    from smartctx.store.index_store import IndexStore

    class _CpuClock:
        perf_counter = staticmethod(time.thread_time)

    pipeline.time = _CpuClock  # type: ignore[assignment]
    store = IndexStore(root, index_dir)
    sources = WorkspaceSources(root)
    counter = TokenCounter()
    options = ContextOptions(budget_tokens=budget)

    def digest(pack: ContextPack) -> str:
        parts = [
            [(b.id, b.citation, repr(b.score), sorted(b.score_parts.items())) for b in pack.bodies],
            [(s.id, s.citation, repr(s.score)) for s in pack.summaries],
            [repr(entry) for entry in pack.file_map],
        ]
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]

    def asked(task: str, focus: Focus) -> tuple[float, dict[str, float], str]:
        with store.snapshot() as snapshot:
            began = time.thread_time()
            pack = pipeline.build_context(ContextRequest(task, options, focus), snapshot, counter, sources)
            cpu_ms = (time.thread_time() - began) * 1000
        return cpu_ms, pack.timings_ms, digest(pack)

    for wire in side_by_side.asked():
        focus = Focus(
            active_path=wire["active"],
            cursor_line=wire["cursor"],
            visible_paths=tuple(wire["visible"]),
            open_paths=tuple(wire["open"]),
            recent_edits=tuple(RecentEdit(path, age) for path, age in wire["recent"]),
        )
        plain: list[tuple[float, dict[str, float], str]] = []
        focused: list[tuple[float, dict[str, float], str]] = []
        for _ in range(2):
            plain.append(asked(wire["task"], Focus()))
            focused.append(asked(wire["task"], focus))
        with store.snapshot() as snapshot:
            walked = focus_module.focus_rank(snapshot, focus)
        walk = repr(
            (
                sorted(walked.node_share.items()),
                sorted(walked.file_share.items()),
                [node.id for node in walked.strongest],
            )
        )
        # Per stage, the focused request's best run against the plain one's.
        best_plain, best_focused = min(plain, key=lambda run: run[0]), min(focused, key=lambda run: run[0])
        row = {
            "extra_cpu_ms": best_focused[0] - best_plain[0],
            "focus_cpu_ms": min(run[1].get("focus", 0.0) for run in focused),
            "extra_stage_cpu_ms": {
                stage: best_focused[1].get(stage, 0.0) - best_plain[1].get(stage, 0.0)
                for stage in {*best_plain[1], *best_focused[1]}
            },
            "pack": focused[0][2],
            "walk": hashlib.sha256(walk.encode()).hexdigest()[:16],
        }
        side_by_side.answer(row)
    store.close()


def questions(tasks: list[str], paths: list[str]) -> list[dict[str, Any]]:
    """Each task with its random editor state."""
    drawn = random.Random(FOCUS_SEED)
    asked = []
    for task in tasks:
        chosen = drawn.sample(paths, 1 + FOCUS_VISIBLE + FOCUS_OPEN + FOCUS_RECENT)
        opened = 1 + FOCUS_VISIBLE + FOCUS_OPEN
        asked.append(
            {
                "task": task,
                "active": chosen[0],
                "cursor": drawn.randint(1, MAX_CURSOR_LINE),
                "visible": chosen[1 : 1 + FOCUS_VISIBLE],
                "open": chosen[1 + FOCUS_VISIBLE : opened],
                "recent": [[path, drawn.uniform(0, MAX_EDIT_AGE_S)] for path in chosen[opened:]],
            }
        )
    return asked


def main() -> int:
    if sys.argv[1:2] == ["--worker"]:
        worker(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--repo", default="django/django", help="whose problem statements to use")
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--tasks", type=int, default=40, help="the first N problem statements")
    side_by_side.add_version_argument(parser)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "focus_perf.json")
    args = parser.parse_args()
    if len(args.version) < 2:
        parser.error("compare at least two versions")
    args.root, args.index_dir = args.root.resolve(), args.index_dir.resolve()
    tasks = problem_statements(args.repo, args.data)[: args.tasks]
    store = indexed_store(args.root, args.index_dir)
    with store.snapshot() as snapshot:
        paths = snapshot.file_paths()
    store.close()
    asked = questions(tasks, paths)
    arguments = (str(args.root), str(args.index_dir), str(args.budget))
    versions = [
        side_by_side.Worker(spec.name, spec.server, __file__, "--worker", *arguments) for spec in args.version
    ]
    # One warm-up each: the tokenizer's load and SQLite's cold cache are not what is compared.
    for version in versions:
        version.ask(asked[0])
    load = os.getloadavg()[0]
    for number, question in enumerate(asked):
        for version in side_by_side.in_turns(versions, number):
            version.rows.append(version.ask(question))
    for version in versions:
        version.close()
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {len(asked)} tasks")
    print("| version | n | extra CPU p50 ms | extra CPU p95 ms | focus stage CPU p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|")
    for version in versions:
        extra = [row["extra_cpu_ms"] for row in version.rows]
        stage = [row["focus_cpu_ms"] for row in version.rows]
        cells = [*median_and_p95(extra), *median_and_p95(stage)]
        print(f"| {version.name} | {len(extra)} | " + " | ".join(f"{cell:.1f}" for cell in cells) + " |")
    stages = sorted(
        {stage for version in versions for row in version.rows for stage in row["extra_stage_cpu_ms"]}
    )
    print("\nextra CPU per stage (the focused request's best run against the plain one's), p50 / p95 ms")
    print("| version | " + " | ".join(stages) + " |\n|---" + "|---" * len(stages) + "|")
    for version in versions:
        cells = []
        for stage in stages:
            values = [row["extra_stage_cpu_ms"].get(stage, 0.0) for row in version.rows]
            p50, p95 = median_and_p95(values)
            cells.append(f"{p50:.1f} / {p95:.1f}")
        print(f"| {version.name} | " + " | ".join(cells) + " |")
    first = versions[0]
    for version in versions[1:]:
        for what in ("pack", "walk"):
            differ = sum(a[what] != b[what] for a, b in zip(first.rows, version.rows, strict=True))
            print(f"{version.name} vs {first.name}: {what} differs in {differ} of {len(first.rows)}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"load": load, **{version.name: version.rows for version in versions}}, indent=1) + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
