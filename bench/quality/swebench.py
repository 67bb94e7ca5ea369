"""Context quality on SWE-bench Lite: smartctx and two baselines, at several token budgets.

For each instance, in repository then base-commit-date order, the repository's one work tree is
switched to the base commit (as a user's branch switch would), its persistent index is brought up
to date with ``Indexer.reconcile``, and each system packs context for the problem statement at each
budget. The packs are scored against the merged fix (file, function and body hit, changed-line
coverage; test files never count as gold) and where the gold first appears in each pack (file and
function Acc@k and MRR; ``swebench_scoring.py`` defines them). Prints the table of every system, the
rank figures of smartctx per repository, and writes per-instance rows as JSON.

    .venv/bin/python -m bench.quality.swebench --subset stratified --repo flask,requests
    .venv/bin/python -m bench.quality.swebench --subset all            # the figures to report
    .venv/bin/python -m bench.quality.swebench --repo flask --history  # also smartctx+history (includePRs)

The systems: ``smartctx`` (``retrieval.pipeline.build_context``), ``baseline-a`` (whole files by
BM25) and ``baseline-b`` (the seed recipe), described in ``swebench_baselines.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sqlite3
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import Any

from bench.datasets import MIRRORS, OUT_DIR, SWE_LITE
from bench.quality.swebench_baselines import WholeFileBaseline, seed_recipe
from bench.quality.swebench_repos import RepositoryError, checkout, prepare_work_tree, short_name
from bench.quality.swebench_scoring import (
    MODULE_NAME,
    Gold,
    GoldRanks,
    PackItem,
    first_gold_rank,
    is_test_path,
    rank_figures,
    score_pack,
    share_within,
)
from bench.stats import mean, nearest_rank
from smartctx.core.context import ContextOptions, ContextPack, ContextRequest, Focus
from smartctx.core.model import SymbolKind
from smartctx.core.tokens import TokenCounter
from smartctx.history.changes import GitHistory
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context, rank
from smartctx.retrieval.rank_model import RankModel
from smartctx.retrieval.sources import SourceReader
from smartctx.store import lexical
from smartctx.store.database import SEARCH_GENERATION_KEY
from smartctx.store.index_store import IndexStore
from smartctx.store.snapshot import IndexSnapshot

DEFAULT_OUT = OUT_DIR / "swebench.json"
DEFAULT_BUDGETS = (8000, 16000, 32000)
STRATIFIED_STEP = 5
# Candidates kept per instance with --dump-ranking: every ranked item a default pack could use.
RANKING_DUMP_SIZE = 200
SYSTEMS = ("smartctx", "baseline-a", "baseline-b")
# SWE-bench Lite's twelve projects are all Python; a commit task names its own language.
DEFAULT_LANGUAGE = "python"
# smartctx with includePRs, the cutoff at the instance's base_commit_date (--history).
HISTORY_SYSTEM = "smartctx+history"
ACC_KS = (1, 3, 5, 10, 20)


@dataclass(frozen=True)
class Result:
    """One system's pack at one budget, scored."""

    file_hit: bool
    function_hit: bool
    body_hit: bool
    line_hit: bool
    line_coverage: float
    file_rank: int | None
    tokens: int
    latency_ms: float
    stages_ms: dict[str, float]
    bodies: list[str]
    summaries: list[str]
    tokens_reported: int | None = None
    error: str | None = None
    # With includePRs: changes listed over all bodies, and how many were dated after the cutoff
    # (always 0, or the cutoff is broken).
    recent_prs: int = 0
    after_cutoff: int = 0
    # smartctx's file map lists further files by path: they count for file hit (the path is in the
    # pack), never for function or body hit. This is file hit from bodies and summaries alone.
    file_hit_without_map: bool | None = None
    file_map: tuple[str, ...] = ()
    # Each gold file's and gold function's rank in the pack (``swebench_scoring.GoldRanks``), None
    # where the pack lacks it.
    file_ranks: tuple[int | None, ...] = ()
    function_ranks: tuple[int | None, ...] = ()
    # The same for the gold functions that are definitions (``<module>`` left out, as LocAgent's gold).
    definition_ranks: tuple[int | None, ...] = ()
    # The sha256 of the pack's text and warnings: two replays whose digests agree packed the same
    # bytes, which a change meant only for speed must show.
    digest: str = ""


def _scored(
    items: Sequence[PackItem],
    gold: Gold,
    tokens: int,
    latency_ms: float,
    stages_ms: dict[str, float] | None = None,
    file_map: Sequence[str] = (),
) -> Result:
    score = score_pack(items, gold, file_map)
    return Result(
        file_hit=score.file_hit,
        function_hit=score.function_hit,
        body_hit=score.body_hit,
        line_hit=score.line_hit,
        line_coverage=score.line_coverage,
        file_rank=score.file_rank,
        tokens=tokens,
        latency_ms=latency_ms,
        stages_ms=stages_ms or {},
        bodies=[item.function_id for item in items if item.body],
        summaries=[item.function_id for item in items if not item.body],
        file_map=tuple(file_map),
        file_ranks=score.file_ranks.positions,
        function_ranks=score.function_ranks.positions,
        definition_ranks=score.definition_ranks.positions,
    )


def _scoring_name(kind: str, qualified_name: str) -> str:
    return MODULE_NAME if kind == SymbolKind.MODULE.value else qualified_name


def pack_items(pack: ContextPack) -> list[PackItem]:
    """A pack's bodies, then its summaries, as the scorer sees them."""
    shown = [(body, True, body.left_out) for body in pack.bodies]
    shown += [(summary, False, ()) for summary in pack.summaries]
    return [
        PackItem(
            item.file_path,
            _scoring_name(item.kind, item.qualified_name),
            item.start_line,
            item.end_line,
            body=body,
            left_out=left_out,
        )
        for item, body, left_out in shown
    ]


def run_smartctx(
    task: str,
    snapshot: IndexSnapshot,
    sources: SourceReader,
    budget: int,
    counter: TokenCounter,
    gold: Gold,
    history: GitHistory | None = None,
    cutoff: str | None = None,
    model: RankModel | None = None,
) -> Result:
    options = ContextOptions(budget_tokens=budget, include_prs=history is not None, pr_cutoff=cutoff)
    request = ContextRequest(task=task, options=options)
    started = time.perf_counter()
    pack = build_context(request, snapshot, counter, sources, history=history, model=model)
    latency_ms = (time.perf_counter() - started) * 1000
    items = pack_items(pack)
    file_map = [entry.file_path for entry in pack.file_map]
    # The pack's text is counted again here, so a pack that misreports its own size shows up as
    # "tokens_reported" differing from "tokens" (and "over budget" is judged on the recount).
    result = _scored(items, gold, counter.count(pack.text), latency_ms, dict(pack.timings_ms), file_map)
    result = replace(result, file_hit_without_map=score_pack(items, gold).file_hit)
    changes = [change for body in pack.bodies for change in body.recent_prs]
    limit = options.cutoff_time()
    late = sum(1 for change in changes if limit is not None and datetime.fromisoformat(change.date) > limit)
    digest = hashlib.sha256(json.dumps([pack.text, [asdict(warning) for warning in pack.warnings]]).encode())
    return replace(
        result,
        tokens_reported=pack.tokens_used,
        recent_prs=len(changes),
        after_cutoff=late,
        digest=digest.hexdigest(),
    )


def run_smartctx_or_miss(
    task: str,
    snapshot: IndexSnapshot,
    sources: SourceReader,
    budget: int,
    counter: TokenCounter,
    gold: Gold,
    history: GitHistory | None = None,
    cutoff: str | None = None,
    model: RankModel | None = None,
) -> Result:
    """``run_smartctx``, with a pipeline failure scored as an empty pack (a miss on every count) and
    its traceback printed, so one bad instance neither ends a long run nor drops out of the mean."""
    started = time.perf_counter()
    try:
        return run_smartctx(task, snapshot, sources, budget, counter, gold, history, cutoff, model)
    except Exception as error:
        traceback.print_exc()
        missed = _scored([], gold, 0, (time.perf_counter() - started) * 1000)
        return replace(missed, error=f"{type(error).__name__}: {error}")


def dump_ranking(task: str, snapshot: IndexSnapshot, sources: SourceReader) -> list[dict[str, Any]]:
    """The scored candidates before diversify, best first, with each score's parts: enough to replay
    other weights (each part is its weight times a normalised signal) and other body choices offline."""
    ranking = rank(task, snapshot, ContextOptions(), Focus(), sources)
    named = ranking.found.named
    return [
        {
            "id": f"{item.node.path}::{_scoring_name(item.node.kind.value, item.node.qualified_name)}",
            "kind": item.node.kind.value,
            "lines": [item.node.start_line, item.node.end_line],
            "score": round(item.score, 5),
            "parts": {name: round(value, 5) for name, value in item.parts.items()},
            "reservedName": item.node.id in named,
        }
        for item in ranking.ranked[:RANKING_DUMP_SIZE]
    ]


def gold_spans(snapshot: IndexSnapshot, gold: Gold) -> tuple[tuple[str, int, int], ...]:
    """Each gold function the index holds under the gold's name, with its lines in the base commit."""
    spans: dict[str, tuple[int, int]] = {}
    for path in sorted({function.split("::", 1)[0] for function in gold.functions}):
        for node in snapshot.nodes_in_file(path):
            name = f"{path}::{_scoring_name(node.kind.value, node.qualified_name)}"
            if name in gold.functions and name not in spans:
                spans[name] = (node.start_line, node.end_line)
    return tuple((name, start, end) for name, (start, end) in sorted(spans.items()))


def gold_in_index(gold: Gold) -> float:
    """The share of gold functions that exist in the index under the gold's name: the ceiling of
    function hit for any system that packs index nodes."""
    found = {name for name, _, _ in gold.spans}
    return len(found) / len(gold.functions) if gold.functions else math.nan


@dataclass(frozen=True)
class Workspace:
    """One repository's work tree and everything kept across its instances."""

    tree: Path
    store: IndexStore
    indexer: Indexer
    sources: WorkspaceSources
    baseline_a: WholeFileBaseline
    history: GitHistory


class Bench:
    """Runs every selected instance and keeps the rows."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.budgets: tuple[int, ...] = args.budgets
        self.counter = TokenCounter("o200k_base")
        self.rows: list[dict[str, Any]] = []
        self.skipped: list[dict[str, str]] = []
        self.repos: dict[str, dict[str, Any]] = {}
        self.systems = (*SYSTEMS, HISTORY_SYSTEM) if args.history else SYSTEMS
        # Which files the "test files not ranked" BM25 figures leave out; the commit dev set, which
        # has Go, Java, Ruby and TypeScript tests, passes its own rule.
        self.is_test: Callable[[str], bool] = is_test_path

    def run(self, instances: list[dict[str, Any]]) -> None:
        for repo, group in groupby(instances, key=lambda row: str(row["repo"])):
            self.run_repo(repo, list(group))
            self.write()

    def run_repo(self, repo: str, instances: list[dict[str, Any]]) -> None:
        try:
            tree = prepare_work_tree(repo, self.args.repos_dir, self.args.mirrors_dir)
        except RepositoryError as error:
            print(f"skipping {len(instances)} instance(s): {error}", flush=True)
            self.skipped.extend(
                {"instance_id": row["instance_id"], "reason": str(error)} for row in instances
            )
            return
        index_dir = self.args.index_root / short_name(repo)
        store = IndexStore(tree, index_dir)
        workspace = Workspace(
            tree,
            store,
            Indexer(tree, store, IndexConfig()),
            WorkspaceSources(tree),
            WholeFileBaseline(self.counter.count),
            GitHistory(tree),
        )
        try:
            for instance in instances:
                try:
                    self.rows.append(self.run_instance(instance, workspace))
                except Exception as error:
                    # A checkout or index update that fails is reported and the run goes on; the
                    # traceback shows whether the bench or the indexer is at fault.
                    traceback.print_exc()
                    reason = f"{type(error).__name__}: {error}"
                    print(f"{instance['instance_id']}: skipped: {reason}", flush=True)
                    self.skipped.append({"instance_id": instance["instance_id"], "reason": reason})
            self.repos[short_name(repo)] = {
                "work_tree": str(tree),
                "index_dir": str(index_dir),
                "index_mb": store.size_bytes() / 1e6,
            }
        finally:
            store.close()

    def run_instance(self, instance: dict[str, Any], workspace: Workspace) -> dict[str, Any]:
        tree, store, baseline_a = workspace.tree, workspace.store, workspace.baseline_a
        started = time.perf_counter()
        excluded = checkout(tree, instance["base_commit"])
        checkout_s = time.perf_counter() - started
        report = workspace.indexer.reconcile()
        if self.args.keep_indexes is not None:
            keep_index(store, self.args.keep_indexes / f"{instance['instance_id']}.sqlite")
        gold = Gold.from_instance(instance)
        task = str(instance["problem_statement"])
        results: dict[str, Result] = {}
        with store.snapshot() as snapshot:
            gold = replace(gold, spans=gold_spans(snapshot, gold))
            started = time.perf_counter()
            baseline_a.refresh(tree, snapshot.file_paths())
            corpus_s = time.perf_counter() - started
            started = time.perf_counter()
            ranked = baseline_a.rank(task)
            rank_ms = (time.perf_counter() - started) * 1000
            for budget in self.budgets:
                results[f"smartctx@{budget}"] = run_smartctx_or_miss(
                    task, snapshot, workspace.sources, budget, self.counter, gold
                )
                if self.args.history:
                    results[f"{HISTORY_SYSTEM}@{budget}"] = run_smartctx_or_miss(
                        *(task, snapshot, workspace.sources, budget, self.counter, gold),
                        workspace.history,
                        str(instance["base_commit_date"]),
                    )
                started = time.perf_counter()
                pack = baseline_a.pack(ranked, budget)
                pack_ms = (time.perf_counter() - started) * 1000
                results[f"baseline-a@{budget}"] = _scored(
                    pack.items, gold, pack.tokens, rank_ms + pack_ms, {"rank": rank_ms, "pack": pack_ms}
                )
                started = time.perf_counter()
                pack = seed_recipe(task, snapshot, tree, budget, self.counter.count)
                results[f"baseline-b@{budget}"] = _scored(
                    pack.items, gold, pack.tokens, (time.perf_counter() - started) * 1000
                )
            in_index = gold_in_index(gold)
            ranking = dump_ranking(task, snapshot, workspace.sources) if self.args.dump_ranking else None
        non_test = [path for path in ranked if not self.is_test(path)]
        row = {
            "instance_id": instance["instance_id"],
            "repo": instance["repo"],
            "language": instance.get("language", DEFAULT_LANGUAGE),
            "base_commit": instance["base_commit"],
            "checkout_s": checkout_s,
            "index_s": report.seconds,
            "files_parsed": report.files_parsed,
            "files_indexed": report.files_total,
            "index_stages_s": dict(report.stage_seconds),
            "baseline_a_corpus_s": corpus_s,
            "excluded_from_checkout": list(excluded),
            "gold": {
                "files": list(gold.files),
                "functions": list(gold.functions),
                "spans": [list(span) for span in gold.spans],
                "changed_lines": len(gold.changed_lines()),
                "functions_in_index": in_index,
            },
            "bm25_file_rank": {
                "all": first_gold_rank(ranked, gold.files),
                "non_test": first_gold_rank(non_test, gold.files),
            },
            "results": {name: asdict(result) for name, result in results.items()},
        }
        if ranking is not None:
            row["ranking"] = ranking
        self.progress(row)
        return row

    def progress(self, row: dict[str, Any]) -> None:
        """One line per instance: index update, then file/function/body hit (F f B) per system at
        the smallest budget."""
        budget = min(self.budgets)
        marks = []
        for system in self.systems:
            result = row["results"][f"{system}@{budget}"]
            hits = "".join(
                mark if result[field] else "."
                for mark, field in (("F", "file_hit"), ("f", "function_hit"), ("B", "body_hit"))
            )
            marks.append(f"{system} {hits}")
        print(
            f"{row['instance_id']:<34} index {row['index_s']:6.1f}s {row['files_parsed']:>5} parsed  "
            + "  ".join(marks),
            flush=True,
        )

    def summary(self) -> dict[str, dict[str, Any]]:
        summary: dict[str, dict[str, Any]] = {}
        for system in self.systems:
            for budget in self.budgets:
                name = f"{system}@{budget}"
                results = [row["results"][name] for row in self.rows]
                summary[name] = summarise(results, budget)
        return summary

    def write(self) -> None:
        out: Path = self.args.out
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(_finite(self.document()), indent=1) + "\n", encoding="utf-8")

    def document(self) -> dict[str, Any]:
        """Everything the JSON holds: the configuration, the summary and every instance's row."""
        ranks_all = [row["bm25_file_rank"]["all"] for row in self.rows]
        ranks_non_test = [row["bm25_file_rank"]["non_test"] for row in self.rows]
        return {
            "config": {
                "data": str(self.args.data),
                "subset": self.args.subset,
                "limit": self.args.limit,
                "repos": self.args.repo,
                "budgets": list(self.budgets),
                "systems": list(self.systems),
            },
            "summary": self.summary(),
            "bm25_file_acc": {
                "all_files": {f"acc@{k}": share_within(ranks_all, k) for k in ACC_KS},
                "non_test_files": {f"acc@{k}": share_within(ranks_non_test, k) for k in ACC_KS},
            },
            "index": {
                "update_s_p50": nearest_rank([row["index_s"] for row in self.rows], 50),
                "update_s_p95": nearest_rank([row["index_s"] for row in self.rows], 95),
                "repos": self.repos,
            },
            "skipped": self.skipped,
            "instances": self.rows,
        }


def keep_index(store: IndexStore, target: Path) -> None:
    """A consistent copy of the index as it is now (SQLite's online backup), for offline replays of
    this instance with ``swebench_replay.py``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    lexical.remove(target)
    source = sqlite3.connect(f"{store.path.as_uri()}?mode=ro", uri=True)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
        # The copy's lexical index, built from the copy's own rows (store/lexical.py), since a
        # snapshot reads one beside its SQLite file.
        lexical.build(copy, target, SEARCH_GENERATION_KEY)
    finally:
        copy.close()
        source.close()


def _finite(value: Any) -> Any:
    """``value`` with NaN (a mean over nothing) as null, so the JSON stays standard."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def summarise(results: Sequence[dict[str, Any]], budget: int) -> dict[str, Any]:
    """Means, Acc@k of the pack's file order, and latency percentiles over one system's results."""
    stages = list(dict.fromkeys(stage for result in results for stage in result["stages_ms"]))
    return {
        "instances": len(results),
        **{
            field: mean([float(result[field]) for result in results])
            for field in ("file_hit", "function_hit", "body_hit", "line_hit", "line_coverage", "tokens")
        },
        "file_hit_without_map": mean(
            [
                float(
                    result["file_hit"]
                    if result.get("file_hit_without_map") is None
                    else result["file_hit_without_map"]
                )
                for result in results
            ]
        ),
        "errors": sum(1 for result in results if result["error"]),
        "recent_prs": mean([float(result.get("recent_prs", 0)) for result in results]),
        "after_cutoff": sum(int(result.get("after_cutoff", 0)) for result in results),
        "over_budget": mean([float(result["tokens"] > budget) for result in results]),
        **rank_figures(
            [GoldRanks(tuple(result["file_ranks"])) for result in results],
            [GoldRanks(tuple(result["function_ranks"])) for result in results],
            [
                GoldRanks(tuple(result["definition_ranks"]))
                for result in results
                if "definition_ranks" in result
            ],
        ),
        "latency_ms_p50": nearest_rank([result["latency_ms"] for result in results], 50),
        "latency_ms_p95": nearest_rank([result["latency_ms"] for result in results], 95),
        "stages_ms": {
            stage: {
                "p50": nearest_rank([r["stages_ms"][stage] for r in results if stage in r["stages_ms"]], 50),
                "p95": nearest_rank([r["stages_ms"][stage] for r in results if stage in r["stages_ms"]], 95),
            }
            for stage in stages
        },
    }


TABLE_COLUMNS = (
    ("file hit", "file_hit", "{:.1%}"),
    ("w/o map", "file_hit_without_map", "{:.1%}"),
    ("func hit", "function_hit", "{:.1%}"),
    ("body hit", "body_hit", "{:.1%}"),
    ("line in body", "line_hit", "{:.1%}"),
    ("line cov", "line_coverage", "{:.1%}"),
    ("file acc@1", "file_acc@1", "{:.1%}"),
    ("tokens", "tokens", "{:,.0f}"),
    ("PRs/pack", "recent_prs", "{:.1f}"),
    ("after cutoff", "after_cutoff", "{:d}"),
    ("over budget", "over_budget", "{:.1%}"),
    ("p50 ms", "latency_ms_p50", "{:,.0f}"),
    ("p95 ms", "latency_ms_p95", "{:,.0f}"),
)


# The rank figures of issue #23 and the in-pack hits beside them, one row per group of packs.
RANK_COLUMNS = (
    ("file@1", "file_acc@1", "{:.1%}"),
    ("file@3", "file_acc@3", "{:.1%}"),
    ("file@5", "file_acc@5", "{:.1%}"),
    ("file@10", "file_acc@10", "{:.1%}"),
    ("file MRR", "file_mrr", "{:.3f}"),
    ("func@1", "function_acc@1", "{:.1%}"),
    ("func@5", "function_acc@5", "{:.1%}"),
    ("func@10", "function_acc@10", "{:.1%}"),
    ("func MRR", "function_mrr", "{:.3f}"),
    # Function Acc@10 over the gold as LocAgent builds it (no ``<module>``): the anchors' figure.
    ("def@10", "definition_acc@10", "{:.1%}"),
    # The lenient reading at the other two cut-offs (Acc@1 is Any@1).
    ("file any@5", "file_any@5", "{:.1%}"),
    ("func any@10", "function_any@10", "{:.1%}"),
    ("file hit", "file_hit", "{:.1%}"),
    ("func hit", "function_hit", "{:.1%}"),
    ("body hit", "body_hit", "{:.1%}"),
    ("line cov", "line_coverage", "{:.1%}"),
)
# The group of every row in a rank table.
ALL = "all"


def grouped(rows: Sequence[dict[str, Any]], field: str, system: str) -> dict[str, list[dict[str, Any]]]:
    """The results of ``system`` (``smartctx@8000``) by the value of each row's ``field`` (``repo``,
    ``language``), groups in first-seen order, then ``ALL``."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row[field]), []).append(row["results"][system])
    return {**groups, ALL: [row["results"][system] for row in rows]}


def rank_table(
    groups: Mapping[str, Sequence[dict[str, Any]]], budget: int, title: str, markdown: bool = False
) -> str:
    """One row per group of results at ``budget``: the rank figures and the in-pack hits."""
    rows = [
        [name, str(len(results)), *(_cell(t, summarise(results, budget)[key]) for _, key, t in RANK_COLUMNS)]
        for name, results in groups.items()
    ]
    header = [title, "n", *(column for column, _, _ in RANK_COLUMNS)]
    return markdown_table(header, rows) if markdown else format_table(header, rows)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table as GitHub Markdown, for bench/RESULTS.md."""
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [header, ["-" * width for width in widths], *rows]
    return "\n".join(
        "  ".join(
            cell.ljust(width) if index == 0 else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    )


def _label(name: str) -> str:
    """``smartctx@8000`` -> ``smartctx@8k``."""
    system, budget = name.rsplit("@", 1)
    return f"{system}@{int(budget) // 1000}k" if int(budget) % 1000 == 0 else name


def _cell(template: str, value: float) -> str:
    return "-" if math.isnan(value) else template.format(value)


def print_report(bench: Bench) -> None:
    summary = bench.summary()
    print(f"\nSWE-bench Lite, {len(bench.rows)} instance(s); gold excludes test files")
    rows = [
        [_label(name), str(figures["instances"])]
        + [_cell(template, figures[key]) for _, key, template in TABLE_COLUMNS]
        for name, figures in summary.items()
    ]
    print(format_table(["system", "n", *(title for title, _, _ in TABLE_COLUMNS)], rows))
    for name, figures in summary.items():
        if figures["errors"]:
            print(f"{_label(name)}: {figures['errors']} pipeline error(s), scored as misses (see the JSON)")
    smallest = min(bench.budgets)
    print(f"\nWhere the gold first appears in the pack at {smallest // 1000}k, every system (Acc@k, MRR)")
    systems = {
        system: [row["results"][f"{system}@{smallest}"] for row in bench.rows] for system in bench.systems
    }
    print(rank_table(systems, smallest, "system"))
    for budget in bench.budgets:
        print(f"\nsmartctx at {budget // 1000}k, per repository")
        print(rank_table(grouped(bench.rows, "repo", f"smartctx@{budget}"), budget, "repo"))
    ranks = {
        "all files": [row["bm25_file_rank"]["all"] for row in bench.rows],
        "test files not ranked": [row["bm25_file_rank"]["non_test"] for row in bench.rows],
    }
    print(
        "\nBM25 over whole files, gold file rank (README reference, all 300: 34.3/56.3/65.3/73.0/81.7"
        " and 42.0/63.3/73.3/81.7/87.0)"
    )
    print(
        format_table(
            ["ranking", *(f"acc@{k}" for k in ACC_KS)],
            [
                [label, *(_cell("{:.1%}", share_within(values, k)) for k in ACC_KS)]
                for label, values in ranks.items()
            ],
        )
    )
    smartctx = {name: figures for name, figures in summary.items() if name.startswith("smartctx@")}
    stages = list(dict.fromkeys(stage for figures in smartctx.values() for stage in figures["stages_ms"]))
    if stages:
        print("\nsmartctx latency per stage, p50 / p95 ms")
        print(
            format_table(
                ["pack", *stages],
                [
                    [
                        _label(name),
                        *(
                            f"{_cell('{:,.1f}', times['p50'])} / {_cell('{:,.1f}', times['p95'])}"
                            for times in (figures["stages_ms"][stage] for stage in stages)
                        ),
                    ]
                    for name, figures in smartctx.items()
                ],
            )
        )
    updates = [row["index_s"] for row in bench.rows]
    if updates:
        p50, p95 = nearest_rank(updates, 50), nearest_rank(updates, 95)
        print(f"\nindex update per checkout: p50 {p50:.1f} s, p95 {p95:.1f} s")
    for name, repo in bench.repos.items():
        print(f"index {name}: {repo['index_mb']:.0f} MB at {repo['index_dir']}")
    if bench.skipped:
        print(f"\n{len(bench.skipped)} instance(s) skipped; reasons in the JSON")
    print(f"\nper-instance rows: {bench.args.out}")


def select(rows: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """The instances to run, in repository then base-commit-date order."""
    chosen = rows[::STRATIFIED_STEP] if args.subset == "stratified" else rows
    if args.repo:
        wanted = set(args.repo)
        chosen = [row for row in chosen if row["repo"] in wanted or short_name(row["repo"]) in wanted]
    chosen = sorted(
        chosen,
        key=lambda row: (row["repo"], datetime.fromisoformat(row["base_commit_date"]), row["instance_id"]),
    )
    return chosen[: args.limit] if args.limit else chosen


def _budgets(text: str) -> tuple[int, ...]:
    try:
        budgets = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"budgets must be whole numbers separated by commas, got {text!r}"
        ) from None
    if not budgets or min(budgets) <= 0:
        raise argparse.ArgumentTypeError(f"budgets must be positive, got {text!r}")
    return budgets


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SWE_LITE, help="swe_lite.jsonl")
    parser.add_argument(
        "--subset",
        choices=("stratified", "all"),
        default="stratified",
        help="stratified: every fifth instance of the file (60), fixed; all: 300",
    )
    parser.add_argument("--limit", type=int, default=0, help="run only the first N selected instances")
    parser.add_argument(
        "--repo",
        type=lambda text: [part for part in text.split(",") if part],
        default=[],
        help="only these repositories, by short or full name (django,flask or pallets/flask)",
    )
    parser.add_argument(
        "--budgets", type=_budgets, default=DEFAULT_BUDGETS, help="token budgets, e.g. 8000,16000"
    )
    parser.add_argument(
        "--repos-dir",
        type=Path,
        default=Path("/work/benchrepos/swe"),
        help="one work tree per repository (cloned from --mirrors-dir when missing)",
    )
    parser.add_argument(
        "--mirrors-dir",
        type=Path,
        default=MIRRORS,
        help="the fetched repositories, as <owner>+<name>/repo git directories",
    )
    parser.add_argument(
        "--index-root",
        type=Path,
        default=Path("/work/benchrepos/swe-index"),
        help="one persistent index folder per repository",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the JSON goes")
    parser.add_argument(
        "--dump-ranking",
        action="store_true",
        help=f"keep each instance's top {RANKING_DUMP_SIZE} scored candidates in the JSON (for tuning)",
    )
    parser.add_argument(
        "--keep-indexes",
        type=Path,
        default=None,
        help="copy each instance's index, as ranked, to DIR/<instance_id>.sqlite (for swebench_replay.py)",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help=f"also run {HISTORY_SYSTEM}: includePRs with the cutoff at each base_commit_date",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    instances = select(rows, args)
    if not instances:
        print("no instance selected: check --repo and --limit", file=sys.stderr)
        return 2
    bench = Bench(args)
    started = time.perf_counter()
    try:
        bench.run(instances)
    finally:
        bench.write()
    print_report(bench)
    print(f"{time.perf_counter() - started:.0f} s for {len(bench.rows)} instance(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
