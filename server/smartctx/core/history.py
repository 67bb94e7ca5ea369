"""What a pack says about history: the changes behind a body, and what depends on the top symbol.

Plain frozen values, filled by ``smartctx.history`` and rendered by retrieval and the wire layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass(frozen=True, slots=True)
class RecentChange:
    """One change whose diff shaped a body's current lines: a pull request, or else a commit.

    ``pr`` is the pull request number when the history names one (a squash title ending
    ``(#123)``, or the ``Merge pull request #123`` commit that brought the change in), else None.
    ``date`` is the ISO 8601 committer date: when the change entered the history.
    """

    pr: int | None
    title: str
    summary: str
    commit: str
    date: str
    author: str


@dataclass(frozen=True, slots=True)
class HistoryNote:
    """Something the history could not see; becomes a pack warning with this code."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class FileSpans:
    """Line spans (1-based, inclusive) of one workspace file, and the file's content as packed."""

    path: str
    content: bytes
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class HistoryAnswer:
    """Changes per (path, start line, end line), newest first, and what the history could not see."""

    changes: dict[tuple[str, int, int], tuple[RecentChange, ...]]
    notes: tuple[HistoryNote, ...] = ()


@dataclass(frozen=True, slots=True)
class ImpactEntry:
    """A definition that depends on the impact target, ``depth`` edges away.

    ``via`` is the id of the definition it depends on (the target itself at depth 1).
    """

    id: str
    kind: str
    qualified_name: str
    file_path: str
    start_line: int
    end_line: int
    citation: str
    depth: int
    via: str
    confidence: float


@dataclass(frozen=True, slots=True)
class ImpactSection:
    """Reverse dependencies of the highest-scoring body, grouped by how they depend on it.

    ``groups`` holds (group name, entries) in the fixed order of ``IMPACT_GROUPS``, empty groups
    left out. ``found`` counts every dependent reached before the caps, so ``found`` larger than
    the entries shown means the list was capped.
    """

    target_id: str
    target_citation: str
    depth: int
    groups: tuple[tuple[str, tuple[ImpactEntry, ...]], ...]
    found: int
    truncated: bool
    # The workspace folder the target and its dependents lie in; set only when a pack spans several.
    workspace_folder: str | None = None


# How a dependent uses the target, in the order a pack shows them.
IMPACT_GROUPS = ("callers", "subclasses", "typeUsers", "importers", "references")


def parse_cutoff(text: str) -> datetime:
    """An ISO 8601 date or date-time as an aware time. A bare date means the end of that day (UTC):
    "changes after 2024-05-01" starts on May 2nd. A time without an offset is UTC. Raises
    ValueError for anything else."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return datetime.fromisoformat(text).replace(hour=23, minute=59, second=59, tzinfo=timezone.utc)
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?", text):
        raise ValueError(text)
    # Normalised to the forms Python 3.10's fromisoformat reads: "+hh:mm" offsets, whole seconds.
    normal = re.sub(r"[Zz]$", "+00:00", re.sub(r"\.\d+", "", text))
    normal = re.sub(r"([+-]\d{2})(\d{2})$", r"\1:\2", normal)
    moment = datetime.fromisoformat(normal)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
