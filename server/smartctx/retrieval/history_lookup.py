"""The history stage, between diversify and pack: recent changes of the bodies about to be packed,
and the impact of the highest-scoring one (issue #5).

Git is asked through the ``ChangeHistory`` protocol the front end passes in, one question for all
bodies, so retrieval itself never starts a process; impact is a pure walk of the snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from smartctx.core.context import Warning
from smartctx.core.history import FileSpans, ImpactEntry, ImpactSection, RecentChange
from smartctx.history.impact import impact
from smartctx.retrieval.breadcrumbs import grouped
from smartctx.retrieval.diversify import Selection
from smartctx.retrieval.pack import citation, current_source, node_id
from smartctx.retrieval.score import ScoredNode
from smartctx.retrieval.sources import ChangeHistory, SourceReader
from smartctx.store.reader import IndexReader


def recent_changes(
    bodies: Sequence[ScoredNode],
    sources: SourceReader,
    history: ChangeHistory,
    cutoff: datetime | None,
    limit: int,
) -> tuple[dict[str, tuple[RecentChange, ...]], list[Warning]]:
    """Recent changes per body (by wire id) for the lines each body covers now."""
    spans: dict[str, tuple[str, int, int]] = {}
    contents: dict[str, bytes] = {}
    for item in bodies:
        # Packing reports a body that moved or vanished; here it only decides which lines to ask about.
        located = current_source(item.node, sources, [])
        content = sources.read(item.node.path)
        if located is not None and content is not None:
            spans[node_id(item.node)] = (item.node.path, located[0], located[1])
            contents[item.node.path] = content
    by_file: dict[str, set[tuple[int, int]]] = {}
    for path, start, end in spans.values():
        by_file.setdefault(path, set()).add((start, end))
    if not by_file:
        return {}, []
    answer = history.recent_changes(
        [FileSpans(path, contents[path], tuple(sorted(found))) for path, found in sorted(by_file.items())],
        cutoff,
        limit,
    )
    warnings = [Warning(note.code, note.message) for note in answer.notes]
    return {key: answer.changes.get(span, ()) for key, span in spans.items()}, warnings


def impact_of(snapshot: IndexReader, selection: Selection, depth: int) -> ImpactSection | None:
    """Reverse dependencies of the highest-scoring body (the top summary when there are no
    bodies), or None when nothing was found."""
    top = next(iter([*selection.bodies, *selection.summaries]), None)
    if top is None:
        return None
    found = impact(snapshot, top.node, depth)
    entries = [
        (
            dependent.group,
            ImpactEntry(
                id=node_id(dependent.node),
                kind=dependent.node.kind.value,
                qualified_name=dependent.node.qualified_name,
                file_path=dependent.node.path,
                start_line=dependent.node.start_line,
                end_line=dependent.node.end_line,
                citation=citation(dependent.node.path, dependent.node.start_line, dependent.node.end_line),
                depth=dependent.depth,
                via=node_id(dependent.via),
                confidence=dependent.confidence,
            ),
        )
        for dependent in found.dependents
    ]
    target = found.target
    return ImpactSection(
        target_id=node_id(target),
        target_citation=citation(target.path, target.start_line, target.end_line),
        depth=depth,
        groups=grouped(entries),
        found=found.found,
        truncated=found.truncated,
    )
