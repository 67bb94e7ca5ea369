"""Dump every task's ranked candidates, files and definitions, with their score parts and gold labels.

Reads the indexes ``swebench.py``/``commits.py --keep-indexes`` kept, as ``swebench_replay.py`` does,
and runs the ranking stages only (search → expand → score → rank files). Each task becomes one JSON
line: its files and definitions in rank order, each with its parts and whether it is gold (a file the
change modifies; a definition the change edits, by name or by holding a gold function's lines). This
is what ``train_ranker.py`` learns from and what a study of the ranking reads:

    PYTHONPATH=server .venv/bin/python -m bench.quality.rank_features \\
        --indexes /work/benchrepos/devset-snap --repos-dir /work/benchrepos/devset-repos \\
        --data /work/benchrepos/devset-out/commit_tasks.jsonl --out /work/benchrepos/features/devset.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.datasets import SWE_LITE
from bench.quality.swebench import DEFAULT_LANGUAGE, _scoring_name, gold_spans
from bench.quality.swebench_replay import GitCommitSources, kept_instances, with_past_commits
from bench.quality.swebench_repos import short_name
from bench.quality.swebench_scoring import Gold
from smartctx.core.context import ContextOptions, Focus
from smartctx.retrieval.pipeline import rank
from smartctx.store.snapshot import IndexSnapshot

# Candidates kept per task: far more than a pack shows, so that a model can learn to lift a gold
# item from deep in today's order.
MAX_DEFINITIONS = 400
MAX_FILES = 100


def task_features(
    task: str, snapshot: IndexSnapshot, sources: GitCommitSources, gold: Gold
) -> dict[str, Any]:
    """One task's candidates in rank order, each with its parts and gold label."""
    ranking = rank(task, snapshot, ContextOptions(), Focus(), sources)
    spans = {name: (start, end) for name, start, end in gold.spans}
    gold_files = set(gold.files)
    definitions = []
    for item in ranking.ranked[:MAX_DEFINITIONS]:
        node = item.node
        name = f"{node.path}::{_scoring_name(node.kind.value, node.qualified_name)}"
        holds = name in gold.functions or any(
            function.split("::", 1)[0] == node.path and node.start_line <= start and end <= node.end_line
            for function, (start, end) in spans.items()
        )
        definitions.append(
            {
                "id": name,
                "kind": node.kind.value,
                "lines": [node.start_line, node.end_line],
                "score": round(item.score, 6),
                "parts": {part: round(value, 6) for part, value in item.parts.items()},
                "signals": {name: round(value, 6) for name, value in item.signals.items() if value},
                "named": node.id in ranking.found.named,
                "gold": name in gold.functions,
                "holdsGold": holds,
                "goldFile": node.path in gold_files,
            }
        )
    files = [
        {
            "path": file.path,
            "score": round(file.score, 6),
            "parts": {part: round(value, 6) for part, value in file.parts.items()},
            "signals": {name: round(value, 6) for name, value in file.signals.items() if value},
            "gold": file.path in gold_files,
        }
        for file in ranking.files[:MAX_FILES]
    ]
    return {"definitions": definitions, "files": files}


def dump(args: argparse.Namespace) -> int:
    instances = kept_instances(args.data, args.indexes, args.repo)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for instance in instances:
            sources = GitCommitSources(args.repos_dir / short_name(instance["repo"]), instance["base_commit"])
            gold = Gold.from_instance(instance)
            index_path = args.indexes / f"{instance['instance_id']}.sqlite"
            with_past_commits(
                index_path, args.repos_dir / short_name(instance["repo"]), instance["base_commit"]
            )
            with IndexSnapshot(index_path) as snapshot:
                gold = replace(gold, spans=gold_spans(snapshot, gold))
                features = task_features(str(instance["problem_statement"]), snapshot, sources, gold)
            sources.close()
            record = {
                "instance_id": instance["instance_id"],
                "repo": instance["repo"],
                "language": instance.get("language", DEFAULT_LANGUAGE),
                "goldFiles": list(gold.files),
                "goldFunctions": list(gold.functions),
                **features,
            }
            out.write(json.dumps(record) + "\n")
    return len(instances)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--indexes", type=Path, required=True, help="a --keep-indexes folder")
    parser.add_argument("--repos-dir", type=Path, required=True, help="the --repos-dir of that run")
    parser.add_argument("--data", type=Path, default=SWE_LITE, help="the task file (JSON lines)")
    parser.add_argument("--repo", type=lambda text: [p for p in text.split(",") if p], default=[])
    parser.add_argument("--out", type=Path, required=True, help="where the JSON lines go")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    count = dump(args)
    if not count:
        print(f"no kept index under {args.indexes} for the selected tasks", file=sys.stderr)
        return 2
    print(f"{count} task(s) in {time.perf_counter() - started:.0f} s: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
