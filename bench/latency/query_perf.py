"""Latency of build_context on a real index, per stage, over real task texts.

Indexes the repository (or reuses an up-to-date index), then runs every SWE-bench Lite problem
statement of that repository through the pipeline at the given budget. The first query is reported
apart (it loads the tokenizer and warms SQLite's cache); p50/p95 are over the warm ones.

    .venv/bin/python -m bench.latency.query_perf /path/to/django --repo django/django

With ``--history N`` the first N tasks are also packed with includePRs and with includeImpact, and
the extra time over the same request without them is reported, cold (a new history cache, the
first request for those files) and warm (the same request again). The tree must be a git work tree.

With ``--focus N`` the first N tasks are also packed with an editor focus (an active file with its
cursor, 5 more visible and 10 open files, 10 recent edits, all drawn at random from the index with a
fixed seed), side by side with the same request without it: the extra time end to end (best of
two each), the focus stage as timed inside the request, and the extra CPU time of the request's
thread end to end, which waiting for a core on a busy machine does not inflate.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.repository import indexed_store
from bench.stats import median_and_p95, percentile
from smartctx.core.context import ContextOptions, ContextRequest, Focus, RecentEdit
from smartctx.core.tokens import TokenCounter
from smartctx.history.changes import GitHistory
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.index_store import IndexStore

# The reference the issue gives for Aider's repo map on the same tree and budget (not re-measured).
AIDER_REPO_MAP_SECONDS = (5.0, 6.0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path)
    parser.add_argument("--repo", default="django/django", help="which instances' problem statements to use")
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--index-dir", type=Path)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "query_perf.json")
    parser.add_argument(
        "--history", type=int, default=0, metavar="N", help="measure includePRs/includeImpact on N tasks"
    )
    parser.add_argument("--focus", type=int, default=0, metavar="N", help="measure editor focus on N tasks")
    args = parser.parse_args()
    tasks = problem_statements(args.repo, args.data)
    root = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="smartctx-query-") as temp:
        began = time.perf_counter()
        store = indexed_store(root, args.index_dir or Path(temp) / "index")
        reconcile_s = time.perf_counter() - began
        sources = WorkspaceSources(root)
        started = time.perf_counter()
        counter = TokenCounter()
        rows: list[dict[str, Any]] = []
        for task in tasks:
            began = time.perf_counter()
            with store.snapshot() as snapshot:
                pack = build_context(
                    ContextRequest(task, ContextOptions(budget_tokens=args.budget)),
                    snapshot,
                    counter,
                    sources,
                )
            rows.append(
                {
                    "total_ms": (time.perf_counter() - began) * 1000,
                    "stages_ms": pack.timings_ms,
                    "tokens": pack.tokens_used,
                    "task_chars": len(task),
                }
            )
        first_ms = (time.perf_counter() - started) * 1000 - sum(row["total_ms"] for row in rows[1:])
        overheads = history_overheads(root, store, sources, counter, tasks[: args.history], args.budget)
        overheads.update(focus_overheads(store, sources, counter, tasks[: args.focus], args.budget))
        store.close()
    warm = rows[1:]
    totals = [row["total_ms"] for row in warm]
    stages = sorted(
        {stage for row in warm for stage in row["stages_ms"]}, key=list(warm[0]["stages_ms"]).index
    )
    table = ["| measure | p50 ms | p95 ms |", "|---|---|---|"]
    p50, p95 = median_and_p95(totals)
    table.append(f"| contextForTask (warm, n={len(warm)}) | {p50:.1f} | {p95:.1f} |")
    for stage in stages:
        values = [row["stages_ms"].get(stage, 0.0) for row in warm]
        table.append(f"| · {stage} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f} |")
    table.append(f"| first query (tokenizer load, cold cache) | {first_ms:.0f} | |")
    low, high = AIDER_REPO_MAP_SECONDS
    print("\n".join(table))
    print(
        f"\nindex reconcile before the run: {reconcile_s:.1f} s;"
        f" mean tokens {statistics.mean(r['tokens'] for r in warm):,.0f}"
        f"\nvs Aider's repo map ({low:.0f}-{high:.0f} s per map on this tree, issue figure): "
        f"{low * 1000 / p95:.0f}-{high * 1000 / p95:.0f}x faster at p95"
    )
    if overheads:
        print("\nextra time over the same request without the option, ms (n tasks each)")
        print("| option | cache | n | p50 | p95 |\n|---|---|---|---|---|")
        for (option, cache), values in overheads.items():
            print(
                f"| {option} | {cache} | {len(values)} | {statistics.median(values):.1f}"
                f" | {percentile(values, 0.95):.1f} |"
            )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d"),
                "repo": args.repo,
                "rows": rows,
                "history_overhead_ms": {f"{o}/{c}": v for (o, c), v in overheads.items()},
            },
            indent=2,
        )
    )
    print(f"written: {args.json}")


# The editor state of --focus: how many files of each kind, and the seed they are drawn with.
FOCUS_VISIBLE = 5
FOCUS_OPEN = 10
FOCUS_RECENT = 10
FOCUS_SEED = 14


def focus_overheads(
    store: IndexStore, sources: WorkspaceSources, counter: TokenCounter, tasks: list[str], budget: int
) -> dict[tuple[str, str], list[float]]:
    """Per task: the plain request and the request with a random editor focus, interleaved, best of
    two each; the extra time end to end, and the focus stage inside the focused request."""
    overheads: dict[tuple[str, str], list[float]] = {}
    drawn = random.Random(FOCUS_SEED)
    with store.snapshot() as snapshot:
        paths = snapshot.file_paths()
    options = ContextOptions(budget_tokens=budget)

    def timed(task: str, focus: Focus) -> tuple[float, float, float]:
        began, began_cpu = time.perf_counter(), time.thread_time()
        with store.snapshot() as snapshot:
            pack = build_context(ContextRequest(task, options, focus), snapshot, counter, sources)
        cpu_ms = (time.thread_time() - began_cpu) * 1000
        return (time.perf_counter() - began) * 1000, pack.timings_ms.get("focus", 0.0), cpu_ms

    for task in tasks:
        chosen = drawn.sample(paths, 1 + FOCUS_VISIBLE + FOCUS_OPEN + FOCUS_RECENT)
        focus = Focus(
            active_path=chosen[0],
            cursor_line=drawn.randint(1, 200),
            visible_paths=tuple(chosen[1 : 1 + FOCUS_VISIBLE]),
            open_paths=tuple(chosen[1 + FOCUS_VISIBLE : 1 + FOCUS_VISIBLE + FOCUS_OPEN]),
            recent_edits=tuple(
                RecentEdit(path, drawn.uniform(0, 86_400))
                for path in chosen[1 + FOCUS_VISIBLE + FOCUS_OPEN :]
            ),
        )
        plain: list[tuple[float, float, float]] = []
        focused: list[tuple[float, float, float]] = []
        for _ in range(2):
            plain.append(timed(task, Focus()))
            focused.append(timed(task, focus))
        total, stage, _ = min(focused)
        overheads.setdefault(("editor focus", "end to end"), []).append(total - min(plain)[0])
        overheads.setdefault(("editor focus", "own stage"), []).append(stage)
        cpu = min(run[2] for run in focused) - min(run[2] for run in plain)
        overheads.setdefault(("editor focus", "CPU, end to end"), []).append(cpu)
    return overheads


def history_overheads(
    root: Path,
    store: IndexStore,
    sources: WorkspaceSources,
    counter: TokenCounter,
    tasks: list[str],
    budget: int,
) -> dict[tuple[str, str], list[float]]:
    """Per task: a plain request (best of two), then includePRs on a fresh history (cold) and on the
    same history again (warm, best of two), and the same for includeImpact. Reported: the extra
    end-to-end time over the plain request, and the option's own stage as timed inside the request
    (free of the noise between two requests on a shared machine)."""
    overheads: dict[tuple[str, str], list[float]] = {}

    def timed(task: str, options: ContextOptions, history: GitHistory | None) -> tuple[float, float]:
        began = time.perf_counter()
        with store.snapshot() as snapshot:
            pack = build_context(ContextRequest(task, options), snapshot, counter, sources, history=history)
        stage = pack.timings_ms.get("history" if options.include_prs else "impact", 0.0)
        return (time.perf_counter() - began) * 1000, stage

    for task in tasks:
        plain = min(timed(task, ContextOptions(budget_tokens=budget), None)[0] for _ in range(2))
        with_prs = ContextOptions(budget_tokens=budget, include_prs=True)
        with_impact = ContextOptions(budget_tokens=budget, include_impact=True)
        for option, options, history in (
            ("includePRs", with_prs, GitHistory(root)),
            ("includeImpact", with_impact, None),
        ):
            cold = timed(task, options, history)
            warm = min(timed(task, options, history) for _ in range(2))
            for cache, (total, stage) in (("cold", cold), ("warm", warm)):
                overheads.setdefault((option, f"{cache}, end to end"), []).append(total - plain)
                overheads.setdefault((option, f"{cache}, own stage"), []).append(stage)
    return overheads


if __name__ == "__main__":
    main()
