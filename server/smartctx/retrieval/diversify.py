"""Stage 4: choose which ranked items become bodies and which summaries, and which further files
the file map lists.

The ranked list is capped; no single file may take every body slot; a symbol the task names
verbatim gets a body slot even when it ranks lower, and so does the best definition of the file the
file ranking puts first; an item inside a chosen body is not repeated; a
long class is shown by signature, a long struct, enum or interface by its head (its first lines).
Limits the caller leaves unset are chosen from the budget (``limits_for``): the 5 bodies and
25 summaries at about 4k tokens, proportionally more above, bodies only while their score stays
near the best one's; the pack stage then fills the budget in that order and ends with the file map.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from heapq import heapify, heappop, heappush

from smartctx.core.context import ContextOptions
from smartctx.core.model import SymbolKind
from smartctx.retrieval.files import RankedFile
from smartctx.retrieval.score import ScoredNode
from smartctx.store.snapshot import NodeRow

# The limits a caller leaves unset, as architecture.md (*The pipeline*) sets them for a budget of
# about 4k tokens. Above it they grow faster than the budget (up to twice as fast), so that they
# are bounds and the budget's shares (pack.py) decide: packs of small definitions would otherwise
# stop at the counts with half their budget unused.
REFERENCE_BUDGET_TOKENS = 4000
DEFAULT_BODIES = 5
DEFAULT_SUMMARIES = 25
DEFAULT_RANKED_CAP = 50
MAX_LIMIT_GROWTH = 2.0
# Further files the file map may list per 1,000 tokens of budget (a line costs about 16 tokens).
FILE_MAP_FILES_PER_1K_TOKENS = 10
# Bodies chosen from the budget: the design's first 5 always, then more only while they score at
# least this share of the 5th (the best body's score is no yardstick: a stack frame or a named
# symbol lifts it far above the rest). Past that, a signature says what a body would, for a tenth
# of the tokens. Bodies come before every summary, so a weak body of a lower file also came before
# the best file's next definitions: at 0.5 bodies scoring half the 5th's (the 22nd to 56th ranked)
# held the 6th to 12th places. At 0.65 a pack has about 0.7 fewer bodies; on the commit training set
# function Acc@10 rises 31.7 -> 32.8 % and body hit moves 72.2 -> 72.0 % (one task), where 0.7-0.8
# cost 0.7-1.3 points of body hit (bench/HISTORY.md); the dev set and SWE-bench Lite confirmed it.
# Since long docstrings are shortened (docstrings.py), bodies cost less and more of the weak ones
# fit: at 0.7, with the first file's cap below, SWE-bench Lite's function Acc@10 rises 47.7 -> 49.3 %
# and body hit 64.3 -> 65.7 %, and the changelog entries no rule was tuned on gain at every k.
BODY_SCORE_FLOOR = 0.7

# The file that matches best usually holds the fix, often in its third-best definition: at the
# reference budget one file takes at most this many bodies, and one more for each doubling of the
# budget above it (at 8k the fourth-best definition of the top file is a body; on SWE-bench Lite's
# stratified 60 that is 3 points of body hit and no file hit lost, bench/RESULTS.md). The cap is
# always one below maxBodies, so another file keeps at least one body slot.
MAX_BODIES_PER_FILE = 3
# The file the file ranking puts first may take this many times that cap, its definitions chosen in
# score order like any: after its best ones, its next ones are more often the code to change than a
# lower file's weaker bodies (which become summaries). Those past the usual cap come after every
# other file's bodies, so they never push another file's best body down the pack, and the budget
# cuts them first. At 2, on SWE-bench Lite body hit 59.7 -> 61.3 % and function Acc@10 46.0 ->
# 47.7 %, on the commit dev set 77.5 -> 78.6 % and 37.9 -> 38.6 %, no Acc@1 or @5 lost; on the
# traceback set body hit rises and function Acc@10 loses two tasks; with only the slots the other
# files leave, half the gains (bench/HISTORY.md). Since long docstrings are shortened, 3 (twelve
# bodies at 8k) gains body hit on SWE-bench Lite and the changelog entries again.
FIRST_FILE_CAP_FACTOR = 3
# A class (or struct, interface …) longer than this is not shown whole: its whole text would be cut
# to fit anyway, and the methods that matter can take the body slots. A shorter one is worth its
# slot, since every method in it comes in full.
MAX_CONTAINER_BODY_LINES = 200
# A longer struct, enum or interface that ranks among the bodies is shown by its head, its first
# lines: the declaration, its doc and its first fields, variants or members. Such a declaration
# holds no method bodies (Rust, Go and C define them elsewhere; an interface only declares them), so
# the rule above, that its methods take the slots, cannot apply, and a change to a field is a change
# to the declaration itself, which often ranks first. Shown only as a summary, it came after every
# body (the commit dev set's fd `Opts`: bench/RESULTS.md). A class keeps the rule above: its head is
# seldom what changes (of the long classes among the first 20 candidates, 2 % were gold in Java and
# 0.7 % on SWE-bench Lite, against 21 % of Rust's long structs).
CONTAINER_HEAD_LINES = 40
_DECLARATIONS_OF_FIELDS = frozenset({SymbolKind.STRUCT, SymbolKind.ENUM, SymbolKind.INTERFACE})
_CONTAINERS = frozenset(
    {
        SymbolKind.CLASS,
        SymbolKind.STRUCT,
        SymbolKind.INTERFACE,
        SymbolKind.TRAIT,
        SymbolKind.ENUM,
        SymbolKind.MODULE,
    }
)
# Each further summary from a file already shown counts this much less, so summaries spread over
# files (a pack that names the right file at all beats one that lists ten of the wrong file's tests).
# Gentle, because the file map gives breadth at a line per file: summaries go deeper into the top
# files, where the fix usually is (0.6 → 0.8: +3 points of function hit and no file hit lost on
# SWE-bench Lite's stratified 60; 0.9 and 1.0 lose file hit, bench/RESULTS.md).
SAME_FILE_SUMMARY_DECAY = 0.8


@dataclass(frozen=True)
class Limits:
    ranked_cap: int
    max_bodies: int
    max_summaries: int
    max_files: int
    max_bodies_per_file: int
    # Bodies after the design's default count must score at least this share of the last of those
    # (0 when the caller set maxBodies).
    body_score_floor: float


def limits_for(options: ContextOptions) -> Limits:
    """The caller's limits, and for each one left unset, the budget's."""
    budget_share = options.budget_tokens / REFERENCE_BUDGET_TOKENS
    scale = budget_share * min(max(budget_share, 1.0), MAX_LIMIT_GROWTH)
    bodies = options.max_bodies if options.max_bodies is not None else max(1, round(DEFAULT_BODIES * scale))
    summaries = (
        options.max_summaries if options.max_summaries is not None else round(DEFAULT_SUMMARIES * scale)
    )
    ranked_cap = (
        options.ranked_cap
        if options.ranked_cap is not None
        else max(DEFAULT_RANKED_CAP, round(DEFAULT_RANKED_CAP * scale))
    )
    doublings = int(math.log2(budget_share)) if budget_share >= 1.0 else 0
    return Limits(
        ranked_cap=ranked_cap,
        max_bodies=bodies,
        max_summaries=summaries,
        max_files=options.budget_tokens * FILE_MAP_FILES_PER_1K_TOKENS // 1000,
        max_bodies_per_file=max(1, min(MAX_BODIES_PER_FILE + doublings, bodies - 1)),
        body_score_floor=BODY_SCORE_FLOOR if options.max_bodies is None else 0.0,
    )


@dataclass(frozen=True)
class Selection:
    bodies: tuple[ScoredNode, ...]
    summaries: tuple[ScoredNode, ...]
    # Further likely files that no body comes from, best first: the file map lists those of them
    # that the packed summaries do not show either, at most ``max_files``.
    files: tuple[RankedFile, ...] = ()
    # How many summaries the pack may show: a body that does not fit the budget is shown as a
    # summary instead, within this limit (None: no limit beyond the budget).
    max_summaries: int | None = None
    max_files: int | None = None


def diversify(
    ranked: Sequence[ScoredNode],
    files: Sequence[RankedFile],
    limits: Limits,
    named: frozenset[int],
) -> Selection:
    max_bodies, max_summaries = limits.max_bodies, limits.max_summaries
    capped = list(ranked[: limits.ranked_cap])
    declarations = _declarations_defined_elsewhere(ranked)

    def can_be_body(item: ScoredNode) -> bool:
        return _body_worthy(item) and item.node.id not in declarations

    best_named = next((item for item in ranked if item.node.id in named and can_be_body(item)), None)
    # The file the file ranking puts first leads the pack, so it has a body even when its best
    # definition's own score is below other files' (a rare name in a long task: its file matches
    # as a whole, its one definition weakly).
    top_file = files[0].path if files else None
    best_of_first_file = next(
        (item for item in ranked if item.node.path == top_file and can_be_body(item)), None
    )
    # The named symbol's body first, then the first file's best definition's, when it is another.
    reserved = [best_named] if best_named is not None else []
    if best_of_first_file is not None and best_of_first_file is not best_named:
        reserved.append(best_of_first_file)
    capped += [item for item in reserved if item not in capped]
    bodies: list[ScoredNode] = []
    # Chosen bodies by file: overlap and containment are only possible within one file.
    bodies_in: defaultdict[str, list[ScoredNode]] = defaultdict(list)

    def take_body(item: ScoredNode) -> None:
        bodies.append(item)
        bodies_in[item.node.path].append(item)

    for item in reserved[:max_bodies]:
        take_body(item)
    floor = 0.0
    per_file_cap = limits.max_bodies_per_file
    first_file_cap = min(per_file_cap * FIRST_FILE_CAP_FACTOR, max(1, max_bodies - 1))
    for item in capped:
        if len(bodies) >= max_bodies or item.score < floor:
            break
        same_file = bodies_in[item.node.path]
        cap = first_file_cap if item.node.path == top_file else per_file_cap
        if len(same_file) >= cap or not can_be_body(item):
            continue
        # Overlapping includes being the same item as a chosen body.
        if any(_overlaps(item, body) for body in same_file):
            continue
        take_body(item)
        if len(bodies) == DEFAULT_BODIES:
            floor = limits.body_score_floor * item.score
    of_first_file = sorted(
        bodies_in[top_file] if top_file else [], key=lambda item: (-item.score, item.node.id)
    )
    later = {item.node.id for item in of_first_file[per_file_cap:]}
    # The file the file ranking puts first leads with its bodies, best first: it weighs the file's
    # whole text and all its matches, where one definition's score sees one of them. The other
    # files' bodies follow, each file's together and best first, the files in the order of their
    # best body. (Measured against plain score order and the file ranking's order throughout on the
    # commit training set: bench/RESULTS.md.) The first file's bodies past the usual cap come last.
    with_bodies = {item.node.path for item in bodies}
    first_file = next((file.path for file in files if file.path in with_bodies), None)
    best_in_file: dict[str, float] = {}
    for item in bodies:
        best_in_file[item.node.path] = max(best_in_file.get(item.node.path, item.score), item.score)
    bodies.sort(
        key=lambda item: (
            item.node.id in later,
            item.node.path != first_file,
            -best_in_file[item.node.path],
            item.node.path,
            -item.score,
            item.node.id,
        )
    )
    # Inside a body includes being that body. A second definition of a name already summarised
    # (a property's setter, an overload) would repeat its signature, so it gives way to the next.
    named_in_file = {(item.node.path, item.node.qualified_name) for item in bodies}
    rest = [item for item in capped if not any(_inside(item, body) for body in bodies_in[item.node.path])]
    summaries: list[ScoredNode] = []
    shown: Counter[str] = Counter(item.node.path for item in bodies)
    # The best discounted score first, ties to the higher-ranked item. The heap keeps each item's
    # discount from when it was pushed; discounts only grow, so an item whose file has been shown
    # since is pushed back with its current value when it comes up, and the first current one wins.
    heap = [(-_discounted(item, shown), index, shown[item.node.path]) for index, item in enumerate(rest)]
    heapify(heap)
    while heap and len(summaries) < max_summaries:
        _, index, seen = heappop(heap)
        chosen = rest[index]
        if seen != shown[chosen.node.path]:
            heappush(heap, (-_discounted(chosen, shown), index, shown[chosen.node.path]))
            continue
        key = (chosen.node.path, chosen.node.qualified_name)
        if key in named_in_file:
            continue
        named_in_file.add(key)
        summaries.append(chosen)
        shown[chosen.node.path] += 1
    summaries.sort(key=lambda item: (-item.score, item.node.id))
    # Files shown by summaries alone stay listed: the budget may cut all of their summaries, and the
    # pack then names them in the map instead (it skips the files it did show).
    body_files = {item.node.path for item in bodies}
    summary_files = {item.node.path for item in summaries} - body_files
    further = tuple(file for file in files if file.path not in body_files)
    further = further[: limits.max_files + len(summary_files)]
    return Selection(tuple(bodies), tuple(summaries), further, max_summaries, limits.max_files)


def _discounted(item: ScoredNode, shown: Counter[str]) -> float:
    return item.score * SAME_FILE_SUMMARY_DECAY ** shown[item.node.path]


def head_lines(node: NodeRow) -> int | None:
    """How many first lines of ``node`` its body shows: ``CONTAINER_HEAD_LINES`` for a struct, enum
    or interface too long to show whole, None (all of them) for any other definition."""
    if node.kind in _DECLARATIONS_OF_FIELDS and _too_long(node):
        return CONTAINER_HEAD_LINES
    return None


def _body_worthy(item: ScoredNode) -> bool:
    """A class too long to show whole is no body: its methods take the slots."""
    return item.node.kind not in _CONTAINERS or not _too_long(item.node) or head_lines(item.node) is not None


def _too_long(node: NodeRow) -> bool:
    return node.end_line - node.start_line >= MAX_CONTAINER_BODY_LINES


def _shown_end(node: NodeRow) -> int:
    """The last line a body of ``node`` shows."""
    head = head_lines(node)
    return node.end_line if head is None else node.start_line + head - 1


def _declarations_defined_elsewhere(ranked: Sequence[ScoredNode]) -> frozenset[int]:
    """The candidates that are only a signature (a C prototype in a header, an overload signature,
    a stub) whose name a longer candidate of the same kind also defines: as a body such a
    declaration repeats what the definition's first line says, so it can be a summary, never a body.
    """
    longest: dict[tuple[SymbolKind, str], int] = {}
    for item in ranked:
        key = (item.node.kind, item.node.qualified_name)
        longest[key] = max(longest.get(key, 0), _span(item))
    return frozenset(
        item.node.id
        for item in ranked
        if _span(item) <= item.node.signature.count("\n") + 1
        and longest[(item.node.kind, item.node.qualified_name)] > _span(item)
    )


def _span(item: ScoredNode) -> int:
    return item.node.end_line - item.node.start_line + 1


def _inside(item: ScoredNode, outer: ScoredNode) -> bool:
    a, b = item.node, outer.node
    return a.path == b.path and b.start_line <= a.start_line and a.end_line <= _shown_end(b)


def _overlaps(item: ScoredNode, other: ScoredNode) -> bool:
    a, b = item.node, other.node
    return a.path == b.path and a.start_line <= _shown_end(b) and b.start_line <= _shown_end(a)
