"""Editor focus as a personalised PageRank: where the editor is, and what the graph holds near it.

The walk restarts at the files the editor names (architecture.md, *The pipeline*): the active file, with the
definition under the cursor taking a share of its weight, the visible and the other open files,
and the recently edited ones, weighted by how recent the edit is. A file is its module node; the
walk spreads along calls, references, imports and inheritance both ways, and along containment up
only (from a definition to its class or file). Down, from a file, it would spread over every
definition in it: instead a file keeps ``FILE_KEEP`` of what passes through it, which its share
stands for, and passes the rest along its imports and references. What it returns is how much of
the walk ends at each definition and in each file.

Computed at query time with a bounded push (Andersen, Chung and Lang's approximate PPR): each round
takes the nodes holding the most residual mass, keeps ``RESTART`` of each one's residual as its own
and passes the rest to its neighbours in proportion to the edge's kind and confidence, reading at
most ``MAX_EDGES_PER_NODE`` edges each way per node (a hub's thousand callers are never all read).
After ``PUSH_ROUNDS`` rounds the residual still held counts where it is. Bounded in rounds, nodes
per round, edges per node and seed files, so its cost does not grow with the repository: a full PPR
on the seeds' 2-hop neighbourhood took 12 to 22 ms here (architecture.md, *Measured on these
machines*), and reading every edge of 30 files' definitions took 230 ms on curl.

Two score parts come out (score.py adds them): ``focusFile``, the share of the walk in the
definition's file, given to the few best candidates of each file, and ``focusNear``, the
definition's own share (the cursor's definition and what it calls or is called by). Both are
scaled by the definition's own relevance to the task, so focus reorders what the task found but
cannot lift what the task is not about above it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from smartctx.core.context import Focus
from smartctx.core.model import SymbolKind
from smartctx.retrieval.expand import EDGE_KIND_FACTORS, Expansion, Reach
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import NodeRow

# The walk's restart probability: high, so the mass stays within a few hops of the editor.
RESTART = 0.3
PUSH_ROUNDS = 3
# Nodes pushed per round, those with the most residual mass first (two small queries each).
MAX_PUSHED_PER_ROUND = 24
# A node whose residual is below this share of the whole is not pushed.
MIN_PUSHED_SHARE = 0.01
# Edges of one node read at most, each way.
MAX_EDGES_PER_NODE = 40
# The share of what passes through a file's module node that stays in the file: the walk into the
# definitions it holds.
FILE_KEEP = 0.5

# How much restart weight each kind of focus gives a file, before normalising to 1.
ACTIVE_FILE_RESTART = 1.0
# The share of the active file's weight that restarts at the definition under the cursor.
CURSOR_SHARE = 0.5
VISIBLE_FILE_RESTART = 0.6
OPEN_FILE_RESTART = 0.3
RECENT_EDIT_RESTART = 0.6
# A recent edit's weight halves every ``RECENT_HALF_LIFE_S`` down to ``RECENT_FLOOR`` of it: being
# edited at all says something, being edited a minute ago says more.
RECENT_HALF_LIFE_S = 3600.0
RECENT_FLOOR = 0.3
MAX_SEED_FILES = 30

# Nodes whose file is looked up for the file shares, the most mass first (one query).
MAX_PLACED_NODES = 1500
# Definitions that join the candidates, so a focused file can be ranked even when the task's words
# miss its definitions: the ones the walk reaches most, and the most central (PageRank) few of each
# of the files with the largest shares.
FOCUS_CANDIDATES = 12
FOCUS_CANDIDATE_FILES = 8
CANDIDATES_PER_FOCUS_FILE = 2

# The parts' weights: each is this times the normalised mass times the definition's relevance
# (its score before focus over the best such score), plus ``FOCUS_FLOOR`` of it unscaled.
FOCUS_FILE_WEIGHT = 0.5
FOCUS_NEAR_WEIGHT = 0.3
FOCUS_FLOOR = 0.1
# The candidates of one file that get its ``focusFile`` part, the best for the task first.
FOCUS_FILE_MEMBERS = 3


@dataclass(frozen=True)
class FocusRank:
    """The walk's result: mass per definition and per file, each normalised to a maximum of 1."""

    node_share: Mapping[int, float] = field(default_factory=dict)
    file_share: Mapping[str, float] = field(default_factory=dict)
    # The definitions with the most mass, loaded, best first: candidates beside the task's.
    strongest: tuple[NodeRow, ...] = ()

    def is_focused(self) -> bool:
        """Whether the walk reached anything: without it, no candidate has a focus part."""
        return bool(self.node_share or self.file_share)

    def parts(self, task_scores: Sequence[tuple[NodeRow, float]]) -> dict[int, dict[str, float]]:
        """The focus parts of each candidate, given its score for the task before focus.

        Each part is scaled by the candidate's task score over the best one's. ``focusFile`` goes
        only to the ``FOCUS_FILE_MEMBERS`` best candidates of each file: it is there to bring a
        focused file into the pack, and a file with a hundred candidates would otherwise fill every
        place of the ranking with them.
        """
        top = max((task for _, task in task_scores), default=0.0) or 1.0
        by_file: dict[str, list[tuple[NodeRow, float]]] = defaultdict(list)
        for node, task in task_scores:
            by_file[node.path].append((node, task))
        parts: dict[int, dict[str, float]] = {}
        for path, members in by_file.items():
            members.sort(key=lambda member: (-member[1], member[0].start_line, member[0].id))
            in_file = self.file_share.get(path, 0.0)
            for place, (node, task) in enumerate(members):
                scale = FOCUS_FLOOR + (1.0 - FOCUS_FLOOR) * max(0.0, min(1.0, task / top))
                own: dict[str, float] = {}
                if in_file > 0.0 and place < FOCUS_FILE_MEMBERS:
                    own["focusFile"] = FOCUS_FILE_WEIGHT * in_file * scale
                near = self.node_share.get(node.id, 0.0)
                if near > 0.0:
                    own["focusNear"] = FOCUS_NEAR_WEIGHT * near * scale
                if own:
                    parts[node.id] = own
        return parts

    def with_candidates(self, expansion: Expansion) -> Expansion:
        """``expansion`` plus the strongest focused definitions it does not hold yet."""
        added = [node for node in self.strongest if node.id not in expansion.nodes]
        if not added:
            return expansion
        reached = dict(expansion.reached)
        nodes = dict(expansion.nodes)
        for node in added:
            reached[node.id] = Reach(node.id, 0, 0.0)
            nodes[node.id] = node
        return Expansion(reached, nodes, expansion.edges)


def focus_rank(snapshot: IndexReader, focus: Focus) -> FocusRank:
    """The personalised PageRank of ``focus`` over the index graph (empty when nothing is focused)."""
    file_weights = _file_weights(focus)
    if not file_weights:
        return FocusRank()
    modules = snapshot.module_ids(file_weights)
    # Where each node the walk reaches is: its file, and whether it is the file's module node.
    places: dict[int, tuple[str, bool]] = {node_id: (path, True) for path, node_id in modules.items()}
    restart: dict[int, float] = defaultdict(float)
    for path, weight in file_weights.items():
        if path in modules:
            restart[modules[path]] += weight
    if focus.active_path is not None and focus.cursor_line is not None and focus.active_path in modules:
        at_cursor = snapshot.innermost_node_at(focus.active_path, focus.cursor_line)
        if at_cursor is not None and at_cursor.kind is not SymbolKind.MODULE:
            share = file_weights[focus.active_path] * CURSOR_SHARE
            restart[modules[focus.active_path]] -= share
            restart[at_cursor.id] += share
            places[at_cursor.id] = (at_cursor.path, False)
    total = sum(restart.values())
    if total <= 0.0:
        return FocusRank()
    mass = _push({node_id: weight / total for node_id, weight in restart.items()}, places, snapshot)
    ranked = sorted(mass, key=lambda node_id: (-mass[node_id], node_id))[:MAX_PLACED_NODES]
    file_mass: dict[str, float] = defaultdict(float)
    # Summed in id order, so a file's share does not depend on the order the walk met its nodes.
    for node_id in sorted(ranked):
        if node_id in places:
            file_mass[places[node_id][0]] += mass[node_id]
    top_files = sorted(file_mass, key=lambda path: (-file_mass[path], path))[:FOCUS_CANDIDATE_FILES]
    definitions = [node_id for node_id in ranked if node_id in places and not places[node_id][1]]
    reached = snapshot.nodes(definitions[:FOCUS_CANDIDATES])
    central = [
        node
        for nodes in snapshot.top_definitions(top_files, CANDIDATES_PER_FOCUS_FILE).values()
        for node in nodes
    ]
    top_node = max((mass[node_id] for node_id in definitions), default=0.0) or 1.0
    top_file = max(file_mass.values(), default=0.0) or 1.0
    return FocusRank(
        node_share={node_id: mass[node_id] / top_node for node_id in definitions},
        file_share={path: value / top_file for path, value in file_mass.items()},
        strongest=tuple(
            {node.id: node for node in (*sorted(reached, key=lambda n: -mass[n.id]), *central)}.values()
        ),
    )


def _file_weights(focus: Focus) -> dict[str, float]:
    """Restart weight per focused file: the kinds of focus a file has add up."""
    weights: dict[str, float] = defaultdict(float)
    if focus.active_path is not None:
        weights[focus.active_path] += ACTIVE_FILE_RESTART
    for path in focus.visible_paths:
        weights[path] += VISIBLE_FILE_RESTART
    for path in focus.open_paths:
        weights[path] += OPEN_FILE_RESTART
    for edit in focus.recent_edits:
        decay = 0.5 ** (edit.age_s / RECENT_HALF_LIFE_S)
        weights[edit.path] += RECENT_EDIT_RESTART * (RECENT_FLOOR + (1.0 - RECENT_FLOOR) * decay)
    chosen = sorted(weights, key=lambda path: (-weights[path], path))[:MAX_SEED_FILES]
    return {path: weights[path] for path in chosen}


def _push(
    restart: Mapping[int, float], places: dict[int, tuple[str, bool]], snapshot: IndexReader
) -> dict[int, float]:
    """Approximate PPR by rounds of pushes; the residual left at the end counts where it is.
    ``places`` holds where the restart nodes are, and learns where each node the walk reaches is."""
    estimate: dict[int, float] = defaultdict(float)
    residual: dict[int, float] = defaultdict(float, restart)
    for _ in range(PUSH_ROUNDS):
        frontier = sorted(
            (node_id for node_id, value in residual.items() if value >= MIN_PUSHED_SHARE),
            key=lambda node_id: (-residual[node_id], node_id),
        )[:MAX_PUSHED_PER_ROUND]
        if not frontier:
            break
        for node_id in frontier:
            value = residual.pop(node_id)
            is_module = node_id in places and places[node_id][1]
            kept = RESTART + (1.0 - RESTART) * FILE_KEEP if is_module else RESTART
            estimate[node_id] += kept * value
            passed = (1.0 - kept) * value
            near: dict[int, float] = defaultdict(float)
            for neighbour in snapshot.neighbours(node_id, MAX_EDGES_PER_NODE):
                other = neighbour.node_id
                if other != node_id:
                    near[other] += neighbour.confidence * EDGE_KIND_FACTORS.get(neighbour.kind, 0.5)
                    if neighbour.path is not None:
                        places[other] = (neighbour.path, bool(neighbour.is_module))
            spread = sum(near.values())
            if spread <= 0.0:
                estimate[node_id] += passed
                continue
            for other, weight in near.items():
                residual[other] += passed * weight / spread
    for node_id, value in residual.items():
        estimate[node_id] += value
    return estimate
