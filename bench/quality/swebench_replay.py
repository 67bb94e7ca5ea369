"""Replay smartctx on SWE-bench Lite instances from the indexes ``swebench.py --keep-indexes`` kept.

No checkout and no indexing: each instance's index copy is opened read-only, and packed code is read
from git objects at the instance's base commit, so a ranking change (search and term handling
included, which ``--dump-ranking`` replays cannot show) is measured on the stratified 60 in a few
minutes instead of a quarter of an hour. Prints the table of ``swebench.py`` for smartctx, the rank
figures (file and function Acc@k, MRR) and hits per repository and per language, and, given
``--against`` (an earlier replay's JSON), the instances whose file, function or body hit or file
rank changed. The commit dev set replays the same way, its task file as ``--data``.

    PYTHONPATH=server .venv/bin/python -m bench.quality.swebench_replay \\
        --indexes /work/benchrepos/rank-snap --repos-dir /work/benchrepos/rank-swe --out /tmp/replay.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import IO, Any

from bench.datasets import SWE_LITE
from bench.quality.swebench import (
    DEFAULT_BUDGETS,
    DEFAULT_LANGUAGE,
    TABLE_COLUMNS,
    _budgets,
    _cell,
    _label,
    format_table,
    gold_spans,
    grouped,
    rank_table,
    run_smartctx_or_miss,
    summarise,
)
from bench.quality.swebench_repos import short_name
from bench.quality.swebench_scoring import Gold, GoldRanks
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.past_commits import read_past_commits, window_stamp
from smartctx.retrieval.rank_model import RankModel
from smartctx.store.database import connect, upgrade_schema
from smartctx.store.past_commits import PAST_COMMITS_KEY
from smartctx.store.snapshot import IndexSnapshot
from smartctx.store.writer import IndexWriter

HITS = ("file_hit", "function_hit", "body_hit")
# How many of a pack's first files --worst shows, to say what ranked above the gold.
FIRST_FILES_SHOWN = 3


class GitCommitSources:
    """Reads files as they are in one commit, from the work tree's git objects (``git cat-file``).

    The kept index was built from exactly that commit's files, so definitions never need to be found
    again: ``locate`` answers None.
    """

    def __init__(self, tree: Path, commit: str) -> None:
        self._commit = commit
        self._process = subprocess.Popen(
            ["git", "-C", str(tree), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._cache: dict[str, bytes | None] = {}

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            self._cache[path] = self._blob(f"{self._commit}:{path}")
        return self._cache[path]

    def _blob(self, name: str) -> bytes | None:
        stdin: IO[bytes] | None = self._process.stdin
        stdout: IO[bytes] | None = self._process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3:
            return None
        data = stdout.read(int(header[2]) + 1)[:-1]
        return data if header[1] == b"blob" else None

    def locate(self, path: str, kind: str, qualified_name: str) -> tuple[int, int] | None:
        return None

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait()


def kept_instances(data: Path, indexes: Path, repos: Sequence[str]) -> list[dict[str, Any]]:
    """The task rows of ``data`` whose index ``indexes`` keeps, of the repositories named in ``repos``
    by full or short name (all when none)."""
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    wanted = set(repos)
    return [
        row
        for row in rows
        if (indexes / f"{row['instance_id']}.sqlite").exists()
        and (not wanted or row["repo"] in wanted or short_name(row["repo"]) in wanted)
    ]


def with_past_commits(index_path: Path, tree: Path, revision: str) -> None:
    """Give a kept index the window of past commits ending at its task's base commit, as the indexer
    gives a live index at that commit (an index kept before the window existed has none); once, as
    the index records the commit its window ends at."""
    connection = connect(index_path, read_only=False)
    try:
        upgrade_schema(connection)
        writer = IndexWriter(connection, index_path)
        if writer.meta(PAST_COMMITS_KEY) == window_stamp(revision):
            return
        commits = read_past_commits(tree, revision)
        if commits is None:
            print(f"{index_path.name}: git could not list the commits before {revision}", file=sys.stderr)
            return
        writer.replace_past_commits(window_stamp(revision), commits)
    finally:
        connection.close()


def replay(args: argparse.Namespace) -> list[dict[str, Any]]:
    instances = kept_instances(args.data, args.indexes, args.repo)
    counter = TokenCounter("o200k_base")
    model = RankModel.from_json(json.loads(args.model.read_text(encoding="utf-8"))) if args.model else None
    out: list[dict[str, Any]] = []
    for instance in instances:
        tree = args.repos_dir / short_name(instance["repo"])
        sources = GitCommitSources(tree, instance["base_commit"])
        gold = Gold.from_instance(instance)
        task = str(instance["problem_statement"])
        results = {}
        index_path = args.indexes / f"{instance['instance_id']}.sqlite"
        with_past_commits(index_path, tree, instance["base_commit"])
        with IndexSnapshot(index_path) as snapshot:
            gold = replace(gold, spans=gold_spans(snapshot, gold))
            for budget in args.budgets:
                result = run_smartctx_or_miss(task, snapshot, sources, budget, counter, gold, model=model)
                results[f"smartctx@{budget}"] = asdict(result)
        sources.close()
        row = {
            "instance_id": instance["instance_id"],
            "repo": instance["repo"],
            "language": instance.get("language", DEFAULT_LANGUAGE),
            "results": results,
        }
        out.append(row)
        first = results[f"smartctx@{min(args.budgets)}"]
        marks = "".join(m if first[f] else "." for m, f in zip("FfB", HITS, strict=True))
        print(
            f"{instance['instance_id']:<34} {marks} file rank {first['file_rank'] or '-':>3}"
            f" {first['tokens']:>6} tokens",
            flush=True,
        )
    return out


def worst_ranked(rows: Sequence[dict[str, Any]], system: str, count: int) -> list[dict[str, Any]]:
    """The ``count`` rows whose best gold file ranks lowest in ``system``'s pack: packs without any
    gold file first (in ``rows``' order), then by falling rank."""

    def lowness(row: dict[str, Any]) -> tuple[bool, int]:
        rank = row["results"][system]["file_rank"]
        return rank is not None, -(rank or 0)

    return sorted(rows, key=lowness)[:count]


def pack_files(result: dict[str, Any]) -> list[str]:
    """The files of a pack in rank order (bodies, summaries, file map), each once."""
    ids = [*result["bodies"], *result["summaries"]]
    return list(dict.fromkeys([*(name.split("::", 1)[0] for name in ids), *result["file_map"]]))


def print_worst(rows: Sequence[dict[str, Any]], system: str, count: int) -> None:
    print(f"\n{_label(system)}: the {count} tasks whose gold file ranks lowest (file rank, function rank)")
    for row in worst_ranked(rows, system, count):
        result = row["results"][system]
        _, file_rank, function_rank = _changes(result)
        first = ", ".join(pack_files(result)[:FIRST_FILES_SHOWN])
        print(f"  {row['instance_id']:<34} file {file_rank:>3}  function {function_rank:>3}  first: {first}")


def report(
    rows: Sequence[dict[str, Any]],
    budgets: Sequence[int],
    against: Path | None,
    markdown: bool = False,
    worst: int = 0,
) -> None:
    names = [f"smartctx@{budget}" for budget in budgets]
    summary = {
        name: summarise([row["results"][name] for row in rows], int(name.split("@")[1])) for name in names
    }
    table = [
        [_label(name), str(figures["instances"])]
        + [_cell(template, figures[key]) for _, key, template in TABLE_COLUMNS]
        for name, figures in summary.items()
    ]
    print(f"\nreplay of {len(rows)} instance(s)")
    print(format_table(["system", "n", *(title for title, _, _ in TABLE_COLUMNS)], table))
    for name in names:
        budget = int(name.split("@")[1])
        for field in ("repo", "language"):
            groups = grouped(rows, field, name)
            if field == "language" and len(groups) <= 2:
                continue  # one language: its row is the "all" row of the repositories' table
            print(f"\n{_label(name)} per {field}: where the gold first appears (Acc@k, MRR) and hits")
            print(rank_table(groups, budget, field, markdown))
    if worst:
        print_worst(rows, names[0], worst)
    if against is None:
        return
    before = {row["instance_id"]: row for row in json.loads(against.read_text(encoding="utf-8"))["instances"]}
    print(
        f"\nchanged against {against} at {budgets[0] // 1000}k"
        " (before -> after: F f B, best gold file rank, best gold function rank)"
    )
    repacked = []
    for row in rows:
        old = before.get(row["instance_id"])
        if old is None or names[0] not in old["results"]:
            continue
        was, now = old["results"][names[0]], row["results"][names[0]]
        if _packed(was) != _packed(now):
            repacked.append(row["instance_id"])
        if _changes(was) != _changes(now):
            (hits, file_rank, function_rank), (hits_now, file_now, function_now) = (
                _changes(was),
                _changes(now),
            )
            print(
                f"  {row['instance_id']:<34} {hits} -> {hits_now}  file {file_rank} -> {file_now}"
                f"  function {function_rank} -> {function_now}"
            )
    print(f"packs that differ (bodies, summaries, file map, ranks, tokens or text): {len(repacked)}")
    for instance_id in repacked:
        print(f"  {instance_id}")


def _packed(result: dict[str, Any]) -> str:
    """What two replays of one pack must agree on to have packed the same: its items in order, the
    gold's ranks in it, its tokens and (in replays that record it) the digest of its text and
    warnings; as JSON, since a replay's own rows hold tuples where the earlier one read lists."""
    fields = ("bodies", "summaries", "file_map", "file_ranks", "function_ranks", "tokens", "digest")
    return json.dumps([result.get(field) for field in fields])


def _changes(result: dict[str, Any]) -> tuple[str, str, str]:
    """What ``--against`` compares: the hits as ``FfB`` marks and the best gold file and function ranks
    (``-`` for none; a replay from before the function ranks has none)."""
    marks = "".join(mark if result[field] else "." for mark, field in zip("FfB", HITS, strict=True))
    function_rank = GoldRanks(tuple(result.get("function_ranks", ()))).best
    return marks, str(result["file_rank"] or "-"), str(function_rank or "-")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--indexes", type=Path, required=True, help="the --keep-indexes folder of swebench.py"
    )
    parser.add_argument("--repos-dir", type=Path, required=True, help="the --repos-dir of that run")
    parser.add_argument("--data", type=Path, default=SWE_LITE, help="swe_lite.jsonl")
    parser.add_argument("--repo", type=lambda text: [p for p in text.split(",") if p], default=[])
    parser.add_argument("--budgets", type=_budgets, default=DEFAULT_BUDGETS)
    parser.add_argument("--against", type=Path, help="an earlier replay's JSON, to list what changed")
    parser.add_argument(
        "--model", type=Path, help="ranking weights to use instead of the shipped rank_model.json"
    )
    parser.add_argument("--out", type=Path, required=True, help="where the JSON goes")
    parser.add_argument(
        "--markdown", action="store_true", help="print the rank tables as Markdown, for bench/RESULTS.md"
    )
    parser.add_argument(
        "--worst",
        type=int,
        default=0,
        help="list the N tasks whose gold file ranks lowest at the first budget, with the pack's first files",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    rows = replay(args)
    if not rows:
        print(f"no kept index under {args.indexes} for the selected instances", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"budgets": list(args.budgets), "instances": rows}, indent=1) + "\n")
    report(rows, args.budgets, args.against, args.markdown, args.worst)
    print(f"\n{time.perf_counter() - started:.0f} s for {len(rows)} instance(s); rows: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
