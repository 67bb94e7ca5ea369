"""File-level ranking: which files the task is about, as a whole.

A pack that ranks definitions alone spends every slot on the first file that matches well. Ranking
files too (their whole text, the best definitions ranked in them) lets diversify spread bodies and
summaries over files, and lets the pack list further likely files in a file map at one line each.
Every part of a file's score is kept, so the map can say why a file is there. As for definitions,
the parts are signals times the weights of ``rank_model.py``: the file's whole text against the task
(its score and its place), its best ranked definition's own score (without the file's text part,
which the text signal already counts) and the next few's, how much of its name and its folder's name
the task's words cover, whether the task names the file by its path or as a module, and whether
the title's scope names a folder of its path or the file itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from smartctx.retrieval.file_kinds import FileKind
from smartctx.retrieval.name_match import TaskNames
from smartctx.retrieval.rank_model import LinearWeights
from smartctx.retrieval.score import KIND_FACTORS, KIND_PART, ScoredNode
from smartctx.retrieval.search import SearchResult
from smartctx.retrieval.signal_table import NO_VALUES, SignalTable
from smartctx.store.snapshot import NodeRow

# Every signal a file can have, the names ``rank_model.json`` weighs.
FILE_SIGNALS = (
    "text",
    "textPlace",
    "definitions",
    "furtherDefinitions",
    "fileName",
    "folderName",
    "mentionedFile",
    "moduleNamed",
    "titleScope",
)
# After the best definition, the next ones count as one signal (their scores summed): a file with
# three good matches beats one with a single match.
FURTHER_DEFINITIONS = 2
# Definitions named on a file's map line: its best one. A line of the path and one definition is half
# as long as one of the path, why it ranks and three definitions, so the map's tokens reach twice as
# many files (SWE-bench Lite at 8k: a median of 48 map lines, not 24; the fix's file in the pack in
# 96.3 % of tasks, not 94.3 %), while the second and third definitions named the function to change
# in only one of the 300.
SYMBOLS_PER_FILE = 1


@dataclass(frozen=True)
class RankedFile:
    path: str
    score: float
    parts: Mapping[str, float]
    # The file's best-ranked definitions, best first (the most central ones when none ranked).
    symbols: tuple[NodeRow, ...]
    # The signals behind the parts, unweighted (what the weights were learned over).
    signals: Mapping[str, float] = field(default_factory=dict)
    # The parts of its best-ranked definition (None when none ranked) and its kind, if it is not own
    # code: what its reason is told from.
    best: Mapping[str, float] | None = None
    kind: FileKind | None = None

    @cached_property
    def reason(self) -> str:
        """Why it ranks, in a few words, for the file map (told only for the files a map shows)."""
        return _reason(self.parts, self.best, self.kind)


def rank_files(
    ranked: Sequence[ScoredNode],
    search: SearchResult,
    kinds: Mapping[str, FileKind],
    tests_wanted: bool,
    names: TaskNames,
    weights: LinearWeights,
) -> list[RankedFile]:
    """Every file with a ranked definition or a whole-text match, best first, ties by path.

    A file that is not own code has its score multiplied by its kind's factor, as its definitions
    were; test files are left out unless the task is about tests (they voted in score.py).
    """
    by_path: defaultdict[str, list[ScoredNode]] = defaultdict(list)
    for item in ranked:
        by_path[item.node.path].append(item)
    paths = [
        path
        for path in sorted(set(by_path) | set(search.file_evidence))
        if tests_wanted or kinds.get(path) is not FileKind.TEST
    ]
    top_text = max(search.file_evidence.values(), default=0.0) or 1.0
    rows = [_signals(path, by_path.get(path, []), search, top_text, names) for path in paths]
    signals = SignalTable.of_rows(FILE_SIGNALS, rows)
    parts = signals.weighed(weights)
    totals: list[float] = parts.total().tolist()
    files: list[RankedFile] = []
    for index, path in enumerate(paths):
        kind = kinds.get(path)
        factor = NO_VALUES
        if kind is not None and KIND_FACTORS[kind] != 1.0:
            factor = {KIND_PART: KIND_FACTORS[kind]}
            totals[index] *= KIND_FACTORS[kind]
        items = by_path.get(path, [])
        file_parts = parts.row(index, factor)
        symbols = tuple(item.node for item in items[:SYMBOLS_PER_FILE])
        best = items[0].parts if items else None
        files.append(RankedFile(path, totals[index], file_parts, symbols, signals.row(index), best, kind))
    files.sort(key=lambda file: (-file.score, file.path))
    return files


def _signals(
    path: str, items: Sequence[ScoredNode], search: SearchResult, top_text: float, names: TaskNames
) -> tuple[float, ...]:
    """A file's signals, in the order of ``FILE_SIGNALS``."""
    own = sorted((item.own for item in items), reverse=True)
    place = search.file_places.get(path)
    return (
        search.file_evidence.get(path, 0.0) / top_text,
        1.0 / place if place else 0.0,
        own[0] if own else 0.0,
        sum(own[1 : 1 + FURTHER_DEFINITIONS]),
        *names.path(path),
        float(path in search.mentioned_files),
        float(path in search.named_modules),
        names.scoped(path),
    )


# What a file's best definition was found by, in the file map's words, strongest evidence first.
_EVIDENCE = (
    ("innermostFrame", "where the stack trace fails"),
    ("frame", "in the stack trace"),
    ("named", "defines a name the task uses"),
    ("mentionedFile", "named in the task"),
    ("titleScope", "in the part the title's scope names"),
    ("testVotes", "used by a matching test"),
    ("focusNear", "near the code you are editing"),
    ("focusFile", "where the editor is"),
)


def _reason(parts: Mapping[str, float], best: Mapping[str, float] | None, kind: FileKind | None) -> str:
    """Why a file ranks: what its best definition was found by, then the lexical evidence."""
    reasons = [
        words
        for part, words in _EVIDENCE
        if best is not None and part in best and not (part == "frame" and "innermostFrame" in best)
    ]
    text, definitions = parts.get("text", 0.0), parts.get("definitions", 0.0)
    if text and text >= definitions:
        reasons.append("its text matches the task")
    elif best is not None and "hops" in best:
        reasons.append("linked to matching code")
    elif best is not None:
        reasons.append("its definitions match the task")
    reasons = reasons[:2]
    if KIND_PART in parts and kind is not None:
        reasons.append(f"{kind.value}, so ranked lower")
    return "; ".join(reasons)
