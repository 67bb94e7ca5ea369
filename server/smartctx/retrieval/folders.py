"""One pack over several workspace folders, each with its own index (a multi-root workspace).

Each folder is ranked on its own snapshot (search, expand, score); the ranked lists are merged into
one, and that list is diversified and packed once, so ``maxBodies``, ``maxSummaries`` and the token
budget apply to the whole pack.

Node ids are per-index integers and paths are relative to their folder, so both collide across
folders. While merging, every node is given a globally unique id (its folder's position times
``FOLDER_ID_STRIDE``, plus its own id) and a path prefixed with the folder's name,
``<name>/<path>``, the way an editor shows paths in a multi-root workspace. Diversify and pack then
work unchanged: no two folders share a file, the wire ids (``<name>/<path>::<qualified name>``)
are unique, and every citation header in the pack text names its folder. The items that come out
get their folder-relative ``file_path`` and ``citation`` back, and the folder's label in
``workspace_folder``.

Scores: each folder normalises its lexical signals (BM25 and whole-file evidence) by its own best
match, so every folder's best match would score alike however weakly it matches the task. Those
two parts are therefore rescaled by how strong the folder's best raw BM25 is against the strongest
folder's. The other parts are comparable as they stand: named mentions, frames and focus are
constants, and PageRank and usage say how central a definition is within its own folder. Ties are
broken by folder order, then as within one folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

from smartctx.core.context import (
    BodyItem,
    ContextPack,
    ContextRequest,
    Focus,
    Freshness,
    SummaryItem,
)
from smartctx.core.history import FileSpans, HistoryAnswer, HistoryNote, ImpactSection, RecentChange
from smartctx.core.tokens import TokenCounter
from smartctx.retrieval.diversify import Selection
from smartctx.retrieval.files import RankedFile
from smartctx.retrieval.history_lookup import impact_of
from smartctx.retrieval.pack import citation
from smartctx.retrieval.pipeline import (
    Candidates,
    Ranking,
    StageClock,
    check_tokenizer,
    rank,
    select_and_pack,
)
from smartctx.retrieval.score import KIND_PART, ScoredNode, factor_of
from smartctx.retrieval.sources import ChangeHistory, SourceReader
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import EdgeRow, NodeRow

_Item = TypeVar("_Item", BodyItem, SummaryItem)

# Node ids of one index stay far below this, so ``folder position * stride + id`` never collides.
FOLDER_ID_STRIDE = 1 << 40
FOLDER_SEPARATOR = "/"
# The score parts each folder normalises by its own best lexical match (see the module doc).
LEXICAL_PART = "bm25"
FILE_PART = "file"
# How much a folder's lexical parts were scaled down against the best-matching folder.
FOLDER_LEXICAL_PART = "folderLexical"


@dataclass(frozen=True)
class FolderIndex:
    """One workspace folder of a request: its name (unique, no ``/``; it prefixes ids and the
    citations in the pack text), its label (what items carry as ``workspace_folder``; the language
    server sends the folder's URI), its index and its files, and the editor focus inside it."""

    name: str
    label: str
    snapshot: IndexReader
    sources: SourceReader
    focus: Focus = field(default_factory=Focus)
    history: ChangeHistory | None = None
    pending_files: int = 0


def build_context_multi(
    request: ContextRequest,
    folders: Sequence[FolderIndex],
    counter: TokenCounter,
    *,
    should_cancel: Callable[[], bool] | None = None,
) -> ContextPack:
    """One pack, within one budget, from every folder; ``request.focus`` is ignored in favour of
    each folder's own ``focus`` (its paths are relative to that folder)."""
    _check_names(folders)
    options = request.options
    check_tokenizer(options, counter)
    stage = StageClock(should_cancel)
    rankings = [
        rank(request.task, folder.snapshot, options, folder.focus, folder.sources, stage)
        for folder in folders
    ]
    renamed = [_Renamed(position, folder) for position, folder in enumerate(folders)]
    strongest = max((_top(ranking.found.lexical.values()) for ranking in rankings), default=0.0)
    strongest_file = max((_top(ranking.found.file_evidence.values()) for ranking in rankings), default=0.0)
    ranked: list[tuple[ScoredNode, int]] = []
    files: list[tuple[RankedFile, int]] = []
    named: set[int] = set()
    folded: list[tuple[str, int, NodeRow]] = []
    nodes: list[NodeRow] = []
    edges: list[EdgeRow] = []
    for ranking, folder in zip(rankings, renamed, strict=True):
        lexical = _share(_top(ranking.found.lexical.values()), strongest)
        file = _share(_top(ranking.found.file_evidence.values()), strongest_file)
        ranked.extend(
            (_rescaled(folder.scored(item), lexical, file), folder.position) for item in ranking.ranked
        )
        files.extend(
            (folder.ranked_file(ranked_file, lexical, file), folder.position) for ranked_file in ranking.files
        )
        named.update(folder.node_id(node) for node in ranking.found.named)
        folded.extend((name, line, folder.node(holder)) for name, line, holder in ranking.found.folded)
        nodes.extend(folder.node(node) for node in ranking.expansion.nodes.values())
        edges.extend(
            edge._replace(src_id=folder.node_id(edge.src_id), dst_id=folder.node_id(edge.dst_id))
            for edge in ranking.expansion.edges
        )
    ranked.sort(
        key=lambda entry: (
            -entry[0].score,
            entry[1],
            entry[0].node.path,
            entry[0].node.start_line,
            entry[0].node.id,
        )
    )
    files.sort(key=lambda entry: (-entry[0].score, entry[1], entry[0].path))
    stage("merge")
    candidates = Candidates(
        ranked=[item for item, _ in ranked],
        files=[file for file, _ in files],
        named=frozenset(named),
        nodes=nodes,
        edges=edges,
        sources=_FolderSources(folders),
        history=_FolderHistory(folders),
        impact=lambda selection: _impact(selection, rankings, renamed, options.impact_depth),
        freshness=_freshness(folders),
        folded=folded,
        words=frozenset().union(*(ranking.found.words for ranking in rankings)),
    )
    packed = select_and_pack(request, candidates, counter, stage)
    return _with_folders(packed, folders)


def split_path(path: str) -> tuple[str, str]:
    """``<folder name>/<path>`` → (folder name, folder-relative path)."""
    name, _, relative = path.partition(FOLDER_SEPARATOR)
    return name, relative


class _Renamed:
    """Maps one folder's nodes into the merged pack: unique ids, paths prefixed with its name."""

    def __init__(self, position: int, folder: FolderIndex) -> None:
        self.position = position
        self.folder = folder
        self._offset = position * FOLDER_ID_STRIDE
        self._prefix = folder.name + FOLDER_SEPARATOR

    def node_id(self, node_id: int) -> int:
        return self._offset + node_id

    def node(self, node: NodeRow) -> NodeRow:
        parent = None if node.parent_id is None else self.node_id(node.parent_id)
        return node._replace(id=self.node_id(node.id), path=self._prefix + node.path, parent_id=parent)

    def original(self, node: NodeRow) -> NodeRow:
        parent = None if node.parent_id is None else node.parent_id - self._offset
        return node._replace(id=node.id - self._offset, path=split_path(node.path)[1], parent_id=parent)

    def scored(self, item: ScoredNode) -> ScoredNode:
        return item._replace(node=self.node(item.node))

    def ranked_file(self, file: RankedFile, lexical: float, text: float) -> RankedFile:
        """The file under its prefixed path, its lexical parts on the strongest folder's scale."""
        parts = dict(file.parts)
        factor = parts.get(KIND_PART, 1.0)
        lost = 0.0
        for name, share in (("text", text), ("definitions", lexical), ("furtherDefinitions", lexical)):
            if name in parts:
                lost += parts[name] * (1.0 - share) * factor
                parts[name] *= share
        return replace(
            file,
            path=self._prefix + file.path,
            score=file.score - lost,
            parts=parts,
            symbols=tuple(self.node(node) for node in file.symbols),
        )


def _check_names(folders: Sequence[FolderIndex]) -> None:
    names = [folder.name for folder in folders]
    if len(set(names)) != len(names) or any(not name or FOLDER_SEPARATOR in name for name in names):
        raise ValueError(f"workspace folder names must be unique, non-empty and without '/': {names}")


def _top(values: Iterable[float]) -> float:
    return max(values, default=0.0)


def _share(value: float, strongest: float) -> float:
    return value / strongest if strongest > 0 else 1.0


def _rescaled(item: ScoredNode, lexical: float, file: float) -> ScoredNode:
    """The item with its folder-normalised lexical parts put on the scale of the strongest folder."""
    if lexical == 1.0 and file == 1.0:
        return item
    parts = dict(item.parts)
    factor = factor_of(parts)
    lost = 0.0
    for name, share in ((LEXICAL_PART, lexical), (FILE_PART, file)):
        if name in parts:
            lost += parts[name] * (1.0 - share) * factor
            parts[name] *= share
    parts[FOLDER_LEXICAL_PART] = lexical
    return item._replace(score=item.score - lost, parts=parts)


class _FolderSources:
    """Reads ``<folder name>/<path>`` from that folder's own reader."""

    def __init__(self, folders: Sequence[FolderIndex]) -> None:
        self._readers = {folder.name: folder.sources for folder in folders}

    def read(self, path: str) -> bytes | None:
        name, relative = split_path(path)
        reader = self._readers.get(name)
        return None if reader is None else reader.read(relative)

    def locate(self, path: str, kind: str, qualified_name: str) -> tuple[int, int] | None:
        name, relative = split_path(path)
        reader = self._readers.get(name)
        return None if reader is None else reader.locate(relative, kind, qualified_name)


class _FolderHistory:
    """Asks each folder's own git history about its files; a folder without one says so."""

    def __init__(self, folders: Sequence[FolderIndex]) -> None:
        self._histories = {folder.name: folder.history for folder in folders}

    def recent_changes(
        self, files: Sequence[FileSpans], cutoff: datetime | None, limit: int
    ) -> HistoryAnswer:
        by_folder: dict[str, list[FileSpans]] = {}
        for spans in files:
            name, relative = split_path(spans.path)
            by_folder.setdefault(name, []).append(replace(spans, path=relative))
        changes: dict[tuple[str, int, int], tuple[RecentChange, ...]] = {}
        notes: list[HistoryNote] = []
        for name, asked in by_folder.items():
            history = self._histories.get(name)
            if history is None:
                notes.append(HistoryNote("history-unavailable", f"folder {name} has no git history to read"))
                continue
            answer = history.recent_changes(asked, cutoff, limit)
            prefix = name + FOLDER_SEPARATOR
            changes.update(
                ((prefix + path, start, end), found) for (path, start, end), found in answer.changes.items()
            )
            notes.extend(answer.notes)
        return HistoryAnswer(changes, tuple(notes))


def _impact(
    selection: Selection, rankings: Sequence[Ranking], renamed: Sequence[_Renamed], depth: int
) -> ImpactSection | None:
    """Impact of the top item, walked in its own folder's index; its ids name that folder."""
    top = next(iter([*selection.bodies, *selection.summaries]), None)
    if top is None:
        return None
    folder = renamed[top.node.id // FOLDER_ID_STRIDE]
    original = top._replace(node=folder.original(top.node))
    section = impact_of(folder.folder.snapshot, Selection((original,), ()), depth)
    if section is None:
        return None
    prefix = folder.folder.name + FOLDER_SEPARATOR
    groups = tuple(
        (
            group,
            tuple(
                replace(
                    entry,
                    id=prefix + entry.id,
                    via=prefix + entry.via,
                    file_path=prefix + entry.file_path,
                    citation=prefix + entry.citation,
                )
                for entry in entries
            ),
        )
        for group, entries in section.groups
    )
    return replace(
        section,
        target_id=prefix + section.target_id,
        target_citation=prefix + section.target_citation,
        groups=groups,
        workspace_folder=folder.folder.label,
    )


def _freshness(folders: Sequence[FolderIndex]) -> Freshness:
    """Counts add up; the last update is the latest; a git head only when every folder shares it."""
    updates = [update for folder in folders if (update := folder.snapshot.meta("last_indexed"))]
    heads = {folder.snapshot.meta("git_head") or None for folder in folders}
    return Freshness(
        indexed_files=sum(folder.snapshot.stats_files() for folder in folders),
        pending_files=sum(folder.pending_files for folder in folders),
        last_update=max(updates, default=None),
        git_head=heads.pop() if len(heads) == 1 else None,
        dirty=None,
    )


def _with_folders(pack: ContextPack, folders: Sequence[FolderIndex]) -> ContextPack:
    """Items get their folder-relative path and citation back, and their folder's label."""
    labels = {folder.name: folder.label for folder in folders}

    def relative(item: _Item) -> _Item:
        name, path = split_path(item.file_path)
        return replace(
            item,
            file_path=path,
            citation=citation(path, item.start_line, item.end_line),
            workspace_folder=labels[name],
        )

    impact = pack.impact
    if impact is not None:
        impact = replace(
            impact,
            target_citation=split_path(impact.target_citation)[1],
            groups=tuple(
                (
                    group,
                    tuple(
                        replace(
                            entry,
                            file_path=split_path(entry.file_path)[1],
                            citation=split_path(entry.citation)[1],
                        )
                        for entry in entries
                    ),
                )
                for group, entries in impact.groups
            ),
        )
    return replace(
        pack,
        bodies=tuple(relative(item) for item in pack.bodies),
        summaries=tuple(relative(item) for item in pack.summaries),
        impact=impact,
        file_map=tuple(
            replace(
                entry,
                file_path=split_path(entry.file_path)[1],
                workspace_folder=labels[split_path(entry.file_path)[0]],
            )
            for entry in pack.file_map
        ),
    )
