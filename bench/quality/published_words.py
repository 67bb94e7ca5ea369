"""How much publishing's redaction alone changes packs: packs from the local index against packs
whose lexical index is tantivy over the words a publish writes (team/redacted.py), with nothing else
different — no PostgreSQL, the same snapshot, the same term choice (bench/latency/pg_search.py's
``published_words_index`` and ``SearchSnapshot``).

A base's packs can equal a local index's only where these two agree: when they differ, the base
differs for the redaction, not for its scoring.

    PYTHONPATH=server:. .venv/bin/python -m bench.quality.published_words /work/benchrepos/mono/tree \\
        --index-dir /work/benchrepos/mono/index \\
        --commit-tasks /work/benchrepos/train-out/train_tasks.jsonl --tasks 60
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.datasets import OUT_DIR, SWE_LITE, task_statements
from bench.latency.pg_search import (
    agreement,
    local_reader,
    pack_key,
    published_words_index,
    record_and_pack,
    replay,
    search_packs,
    tantivy_engine,
    uptime,
)
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.store.database import INDEX_FILE_NAME


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="the indexed tree")
    parser.add_argument("--index-dir", type=Path, required=True, help="its settled index (only read)")
    parser.add_argument(
        "--repo", default="django/django", help="whose SWE-bench Lite statements are the tasks"
    )
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--commit-tasks", type=Path, help="commit tasks of the tree's repositories instead")
    parser.add_argument("--tasks", type=int, help="only the first N tasks")
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "published_words.json")
    args = parser.parse_args()
    root = args.root.resolve()
    tasks = task_statements(root, args.repo, args.data, args.commit_tasks)[: args.tasks]
    index_path = args.index_dir / INDEX_FILE_NAME
    load_before = uptime()
    counter, sources = TokenCounter(), WorkspaceSources(root)
    with tempfile.TemporaryDirectory(prefix="smartctx-published-words-") as temp:
        began = time.perf_counter()
        published = published_words_index(index_path, root, Path(temp) / "published-words")
        indexed_s = time.perf_counter() - began
        recorded, local_packs, _ = record_and_pack(index_path, tasks, args.budget, sources, counter)
        redacted_packs, _ = search_packs(index_path, published, tasks, args.budget, sources, counter)
        answers = agreement(
            replay(tantivy_engine("published words", published), recorded),
            replay(tantivy_engine("local", local_reader(index_path)), recorded),
        )
    differ = [
        number
        for number, (local, redacted) in enumerate(zip(local_packs, redacted_packs, strict=True))
        if pack_key(local) != pack_key(redacted)
    ]
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "root": str(root),
        "tasks": len(tasks),
        "published_words_indexed_s": indexed_s,
        "packs_differing": differ,
        "answers": answers,
        "load_before": load_before,
        "load_after": uptime(),
    }
    print(f"published words indexed in {indexed_s:.0f} s; load {load_before}")
    print(f"packs differing from the local index's, the redaction alone: {len(differ)} of {len(tasks)}")
    for kind, found in answers.items():
        print(
            f"{kind}: identical answers {found['identical']:.3f}, top 10 {found['top10']:.3f},"
            f" top 50 {found['top50']:.3f},"
            f" largest relative score change {found['max_relative_score_difference']:.3f}"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1))
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
