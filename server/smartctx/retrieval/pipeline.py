"""``build_context``: search → expand → score → diversify → [history, impact] → pack → cite, each
stage timed.

Pure composition over a read-only snapshot: the same index, history and request give a
byte-identical pack. ``should_cancel`` is checked between stages, so a cancelled request stops at
the next stage boundary.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from smartctx.core.context import (
    ContextOptions,
    ContextPack,
    ContextRequest,
    Focus,
    Freshness,
    InvalidRequestError,
    SubgraphEdge,
    Warning,
)
from smartctx.core.history import ImpactSection, RecentChange
from smartctx.core.model import SymbolKind
from smartctx.core.tokens import TokenCounter
from smartctx.retrieval.cite import cite
from smartctx.retrieval.diversify import Selection, diversify, limits_for
from smartctx.retrieval.expand import Expansion, expand
from smartctx.retrieval.file_kinds import file_kinds, read_attributes
from smartctx.retrieval.files import SYMBOLS_PER_FILE, RankedFile, rank_files
from smartctx.retrieval.focus import focus_rank
from smartctx.retrieval.history_lookup import impact_of, recent_changes
from smartctx.retrieval.name_match import TaskNames
from smartctx.retrieval.pack import citation, node_id, pack
from smartctx.retrieval.query import bound_task, parse_task
from smartctx.retrieval.rank_model import RankModel, shipped_model
from smartctx.retrieval.score import ScoredNode, score
from smartctx.retrieval.search import SearchResult, search
from smartctx.retrieval.sources import ChangeHistory, SourceReader
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import EdgeRow, NodeRow

# Files whose folders are searched for ``.gitattributes`` linguist marks (besides the root's): the
# best whole-text matches, which are the files a mark could move.
FILES_CHECKED_FOR_ATTRIBUTES = 40
# Ranked files that get their most central definitions looked up when none of theirs ranked: the
# first ones, which an 8k pack's map reaches (up to 80 lines after the files its code shows; the
# lookup is one query, its cost grows with them).
FILES_GIVEN_SYMBOLS = 100


class CancelledError(Exception):
    """The caller cancelled the request; raised at the next stage boundary."""


@dataclass(frozen=True)
class Ranking:
    """The first three stages' answer: every reachable candidate scored, best first, and the files
    they and the whole-file search point at, best first."""

    found: SearchResult
    expansion: Expansion
    ranked: list[ScoredNode]
    files: list[RankedFile]


def rank(
    task_text: str,
    snapshot: IndexReader,
    options: ContextOptions,
    focus: Focus,
    sources: SourceReader,
    stage: Callable[[str], None] = lambda name: None,
    model: RankModel | None = None,
) -> Ranking:
    """Search, expand and score; ``stage`` is called after each (timing, cancellation). ``sources``
    gives the ``.gitattributes`` files whose linguist marks say which files are vendored; ``model``
    the weights (the shipped ones unless given: benchmarks compare others)."""
    weights = model or shipped_model()
    task = parse_task(bound_task(task_text).text)
    found = search(snapshot, task, options.candidates())
    stage("search")
    strongest = max(found.lexical.values(), default=1.0)
    seeds = dict(found.lexical)
    for forced in found.named | found.framed:
        seeds[forced] = max(seeds.get(forced, 0.0), strongest)
    expansion = expand(snapshot, seeds, found.nodes, options.hop_depth, options.hop_frontier_cap)
    stage("expand")
    # Editor focus (retrieval/focus.py): a personalised PageRank from the editor's files, which
    # adds its strongest definitions as candidates and a focus part to every score.
    walked = focus_rank(snapshot, focus)
    expansion = walked.with_candidates(expansion)
    stage("focus")
    best_matches = sorted(found.file_evidence, key=lambda path: (-found.file_evidence[path], path))
    attributes = read_attributes(sources.read, best_matches[:FILES_CHECKED_FOR_ATTRIBUTES])
    kinds = file_kinds(
        {node.path for node in expansion.nodes.values()} | set(found.file_evidence), attributes
    )
    names = TaskNames(task)
    ranked = score(found, expansion, walked, kinds, found.tests_wanted, names, weights.definitions)
    files = rank_files(ranked, found, kinds, found.tests_wanted, names, weights.files)
    stage("score")
    return Ranking(found, expansion, ranked, _with_symbols(snapshot, files))


def _with_symbols(snapshot: IndexReader, files: list[RankedFile]) -> list[RankedFile]:
    """The ranked files, those among the first ``FILES_GIVEN_SYMBOLS`` with no ranked definition
    given their most central ones."""
    bare = [file.path for file in files[:FILES_GIVEN_SYMBOLS] if not file.symbols]
    if not bare:
        return files
    central = snapshot.top_definitions(bare, SYMBOLS_PER_FILE)
    return [
        replace(file, symbols=tuple(central[file.path])) if file.path in central else file for file in files
    ]


class StageClock:
    """Times the stages of one request and stops it at a stage boundary once it is cancelled.

    A stage that runs more than once (once per workspace folder) adds up to one figure.
    """

    def __init__(self, should_cancel: Callable[[], bool] | None = None) -> None:
        self.timings: dict[str, float] = {}
        self._should_cancel = should_cancel
        self._clock = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round(self.timings.get(name, 0.0) + (now - self._clock) * 1000, 3)
        self._clock = now
        if self._should_cancel is not None and self._should_cancel():
            raise CancelledError(f"cancelled after {name}")


@dataclass(frozen=True)
class Candidates:
    """Everything ranked for a request, ready to select and pack, with what packing needs to read it.

    ``nodes`` and ``edges`` are what expansion reached (for the subgraph); ``impact`` answers
    includeImpact for a selection.
    """

    ranked: Sequence[ScoredNode]
    files: Sequence[RankedFile]
    named: frozenset[int]
    nodes: Iterable[NodeRow]
    edges: Iterable[EdgeRow]
    sources: SourceReader
    history: ChangeHistory | None
    impact: Callable[[Selection], ImpactSection | None]
    freshness: Freshness
    # Named definitions folded into an ancestor (search.py): (name, line, the node holding it).
    folded: Sequence[tuple[str, int, NodeRow]] = ()
    # The task's search words, which a long body is shown near (long_bodies.py).
    words: frozenset[str] = frozenset()


def build_context(
    request: ContextRequest,
    snapshot: IndexReader,
    counter: TokenCounter,
    sources: SourceReader,
    *,
    history: ChangeHistory | None = None,
    pending_files: int = 0,
    should_cancel: Callable[[], bool] | None = None,
    model: RankModel | None = None,
) -> ContextPack:
    """``history`` answers includePRs; without it such a request gets a history-unavailable warning.
    ``model`` is the ranking's weights, the shipped ones unless given."""
    options = request.options
    check_tokenizer(options, counter)
    stage = StageClock(should_cancel)
    ranking = rank(request.task, snapshot, options, request.focus, sources, stage, model)
    candidates = Candidates(
        ranked=ranking.ranked,
        files=ranking.files,
        named=ranking.found.named,
        nodes=ranking.expansion.nodes.values(),
        edges=ranking.expansion.edges,
        sources=sources,
        history=history,
        impact=lambda selection: impact_of(snapshot, selection, options.impact_depth),
        freshness=Freshness(
            indexed_files=snapshot.stats_files(),
            pending_files=pending_files,
            last_update=snapshot.meta("last_indexed"),
            git_head=snapshot.meta("git_head") or None,
            dirty=None,
        ),
        folded=ranking.found.folded,
        words=ranking.found.words,
    )
    return select_and_pack(request, candidates, counter, stage)


def _folded_warning(name: str, line: int, holder: NodeRow) -> Warning:
    """Where a definition the task names lives, when it is nested too deep to be indexed itself."""
    where = (
        f"the module {holder.path}"
        if holder.kind is SymbolKind.MODULE
        else f"{holder.qualified_name} ({citation(holder.path, holder.start_line, holder.end_line)})"
    )
    return Warning(
        "folded-definition",
        f"{name} (line {line} of {holder.path}) is defined too deep inside other definitions to be"
        f" indexed on its own; its text is indexed as part of {where}",
        node_id(holder),
    )


def check_tokenizer(options: ContextOptions, counter: TokenCounter) -> None:
    if counter.name != options.tokenizer:
        raise InvalidRequestError(
            f"this request asks for tokenizer {options.tokenizer}, the counter is {counter.name}"
        )


def select_and_pack(
    request: ContextRequest, candidates: Candidates, counter: TokenCounter, stage: StageClock
) -> ContextPack:
    """Diversify → [history, impact] → pack → cite over ranked candidates, within one budget."""
    options = request.options
    task = bound_task(request.task)
    ranked = candidates.ranked
    selection = diversify(ranked, candidates.files, limits_for(options), candidates.named)
    stage("diversify")
    sources, history = candidates.sources, candidates.history
    changes: dict[str, tuple[RecentChange, ...]] = {}
    history_warnings: list[Warning] = []
    if options.include_prs and options.include_blobs:
        if history is None:
            history_warnings.append(Warning("history-unavailable", "this caller has no git history to read"))
        else:
            changes, history_warnings = recent_changes(
                selection.bodies, sources, history, options.cutoff_time(), options.prs_per_node
            )
        stage("history")
    impact = candidates.impact(selection) if options.include_impact else None
    if options.include_impact:
        stage("impact")
    packed = pack(
        selection,
        task.text,
        options.budget_tokens,
        counter,
        sources,
        options.include_blobs,
        changes=changes,
        impact=impact,
        words=candidates.words,
    )
    stage("pack")
    task_warnings = [task.warning] if task.warning is not None else []
    task_warnings += [_folded_warning(name, line, holder) for name, line, holder in candidates.folded]
    warnings = [*task_warnings, *history_warnings, *packed.warnings, *cite(packed.bodies, packed.summaries)]
    stage("cite")
    packed_ids = {item.id for item in packed.bodies} | {item.id for item in packed.summaries}
    # A module shares its id with a definition named like its file; only packed definitions count.
    internal = {
        node.id: node_id(node)
        for node in candidates.nodes
        if node.kind is not SymbolKind.MODULE and node_id(node) in packed_ids
    }
    return ContextPack(
        task_description=task.description,
        bodies=tuple(packed.bodies),
        summaries=tuple(packed.summaries),
        subgraph_nodes=tuple(sorted(set(internal.values()))),
        subgraph_edges=tuple(
            sorted(
                {
                    SubgraphEdge(internal[e.src_id], internal[e.dst_id], e.kind)
                    for e in candidates.edges
                    if e.src_id in internal and e.dst_id in internal and e.src_id != e.dst_id
                },
                key=lambda e: (e.source, e.target, e.kind),
            )
        ),
        tokens_used=packed.tokens_used,
        budget_tokens=options.budget_tokens,
        trimmed=packed.trimmed,
        not_found=not ranked,
        tokenizer=counter.name,
        timings_ms=stage.timings,
        freshness=candidates.freshness,
        warnings=tuple(warnings),
        text=packed.text,
        impact=packed.impact,
        file_map=tuple(packed.file_map),
        token_scale=options.token_scale,
        token_model=options.token_model,
    )
