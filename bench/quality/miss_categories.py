"""Why a replay's tasks miss function Acc@10: each gold function not among a pack's first 10, by reason.

Reads a replay's JSON (``swebench_replay.py --out``) and the same tasks' ``rank_features.py`` dump
(every candidate, in rank order, with its gold label), and prints, for the tasks that miss function
Acc@10 (LocAgent's rule, ``swebench_scoring.GoldRanks.within``), how many have a gold function missed
for each reason, and how many for that reason alone:

- ``module``: the gold is ``<module>``, code outside every definition, which no pack holds;
- ``long container``: packed at 11 or later, a class, struct, enum, interface or trait of
  ``LONG_CONTAINER_LINES`` lines or more;
- ``packed late``: packed at 11 or later, anything else;
- ``candidate``: ranked, but not packed;
- ``no candidate``: not among the ranked candidates at all;
- ``over 10 gold``: the task has more gold functions than Acc@10 can place.

With ``--without-module`` it also prints function Acc@10 with ``<module>`` left out of the gold (and
the tasks left with no gold function left out), as LocAgent builds its gold:

    PYTHONPATH=server .venv/bin/python -m bench.quality.miss_categories \\
        --replay /tmp/dev.json --features /tmp/dev-features.jsonl --without-module
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.quality.swebench_scoring import GoldRanks, is_module

# The cut-off the reasons are about.
K = 10
# As retrieval/diversify.py's MAX_CONTAINER_BODY_LINES: a container this long is not a whole body.
LONG_CONTAINER_LINES = 200
_CONTAINER_KINDS = frozenset({"class", "struct", "enum", "interface", "trait"})
REASONS = ("module", "long container", "packed late", "candidate", "no candidate", "over 10 gold")


def _result(instance: dict[str, Any]) -> dict[str, Any]:
    """The replay's one result of an instance (a replay at one budget has one system and budget)."""
    results: dict[str, dict[str, Any]] = instance["results"]
    return next(iter(results.values()))


def reasons(ranks: Sequence[int | None], gold: Sequence[str], ranked: dict[str, dict[str, Any]]) -> set[str]:
    """Why the gold functions ``gold`` (ranked ``ranks`` in the pack) are not all among the first K."""
    found: set[str] = set()
    for function, rank in zip(gold, ranks, strict=True):
        if rank is not None and rank <= K:
            continue
        if is_module(function):
            found.add("module")
        elif rank is None:
            found.add("candidate" if function in ranked else "no candidate")
        else:
            candidate = ranked.get(function)
            start, end = candidate["lines"] if candidate else (0, 0)
            long = candidate is not None and candidate["kind"] in _CONTAINER_KINDS
            found.add("long container" if long and end - start >= LONG_CONTAINER_LINES else "packed late")
    if len(gold) > K:
        found.add("over 10 gold")
    return found


def study(
    replay: dict[str, Any], features: dict[str, dict[str, Any]]
) -> tuple[int, int, Counter[str], Counter[str]]:
    """Tasks with gold functions, tasks missing Acc@K, and per reason the tasks it has a part in and
    the tasks it alone explains."""
    tasks = misses = 0
    involved: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    for instance in replay["instances"]:
        ranks = tuple(_result(instance).get("function_ranks") or ())
        if not ranks:
            continue
        tasks += 1
        if GoldRanks(ranks).within(K):
            continue
        misses += 1
        feature = features[instance["instance_id"]]
        gold = list(dict.fromkeys(feature["goldFunctions"]))
        ranked = {definition["id"]: definition for definition in feature["definitions"]}
        found = reasons(ranks, gold, ranked)
        involved.update(found)
        if len(found) == 1:
            alone.update(found)
    return tasks, misses, involved, alone


def without_module(replay: dict[str, Any], features: dict[str, dict[str, Any]]) -> tuple[int, int]:
    """Tasks with a gold function that is not ``<module>``, and how many of them Acc@K counts when
    ``<module>`` is left out of the gold."""
    tasks = hits = 0
    for instance in replay["instances"]:
        ranks = _result(instance).get("function_ranks") or ()
        if not ranks:
            continue
        gold = list(dict.fromkeys(features[instance["instance_id"]]["goldFunctions"]))
        kept = tuple(rank for function, rank in zip(gold, ranks, strict=True) if not is_module(function))
        if not kept:
            continue
        tasks += 1
        hits += GoldRanks(kept).within(K)
    return tasks, hits


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replay", type=Path, required=True, help="a swebench_replay.py --out JSON")
    parser.add_argument(
        "--features", type=Path, required=True, help="rank_features.py --out of the same tasks"
    )
    parser.add_argument("--without-module", action="store_true", help="also Acc@10 without <module> gold")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    replay = json.loads(args.replay.read_text())
    with args.features.open() as lines:
        features = {row["instance_id"]: row for row in map(json.loads, lines)}
    tasks, misses, involved, alone = study(replay, features)
    print(f"{tasks} tasks with gold functions, {misses} miss function Acc@{K}")
    print(f"{'reason':<16} {'tasks':>6} {'alone':>6}")
    for reason in REASONS:
        print(f"{reason:<16} {involved[reason]:>6} {alone[reason]:>6}")
    if args.without_module:
        kept, hits = without_module(replay, features)
        print(f"function Acc@{K} without <module> gold: {100 * hits / max(kept, 1):.1f} % of {kept}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
