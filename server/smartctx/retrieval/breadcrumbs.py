"""The history sections of a pack as text: each body's recent changes and the top body's impact.

Each section is fitted into the tokens packing leaves it, counted exactly, so the pack's budget
holds with both sections on; what the wire reports is exactly what the text shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from smartctx.core.history import IMPACT_GROUPS, ImpactEntry, ImpactSection, RecentChange
from smartctx.core.tokens import TokenCounter
from smartctx.secrets.redaction import redact

# The most of the budget one body's recent changes may take, on top of the body itself: the code
# matters more than its story.
MAX_HISTORY_SHARE_PER_BODY = 0.06
# The share of the budget kept for the impact section while bodies are packed, and its ceiling.
IMPACT_SHARE = 0.12
SHORT_SHA_CHARS = 10

_GROUP_TITLES = {
    "callers": "Callers",
    "subclasses": "Subclasses and implementers",
    "typeUsers": "Type users",
    "importers": "Importers",
    "references": "Other references",
}


@dataclass(frozen=True)
class Fitted:
    """A rendered section and exactly what it shows."""

    text: str
    changes: tuple[RecentChange, ...] = ()
    impact: ImpactSection | None = None


def fit_changes(
    name: str, changes: Sequence[RecentChange], room: int, counter: TokenCounter
) -> tuple[Fitted, int]:
    """A body's changes (newest first) in at most ``room`` tokens, with the exact count: first as
    many titles as fit, then each one's summary, in order, where it still fits."""
    # Commit titles and messages are text people paste tokens into, like code: redacted before
    # they are counted, so the budget holds for the text as sent.
    changes = [
        replace(
            change,
            title=redact(change.title)[0],
            summary=redact(change.summary)[0],
            author=redact(change.author)[0],
        )
        for change in changes
    ]
    kept: list[RecentChange] = []
    text, tokens = "", 0
    for change in changes:
        attempt = _changes_text(name, [*kept, replace(change, summary="")])
        attempt_tokens = counter.count(attempt)
        if attempt_tokens > room:
            break
        kept.append(replace(change, summary=""))
        text, tokens = attempt, attempt_tokens
    for index, change in enumerate(changes[: len(kept)]):
        if not change.summary:
            continue
        candidate = [*kept[:index], change, *kept[index + 1 :]]
        attempt = _changes_text(name, candidate)
        attempt_tokens = counter.count(attempt)
        if attempt_tokens <= room:
            kept, text, tokens = candidate, attempt, attempt_tokens
    return Fitted(text, tuple(kept)), tokens


def _changes_text(name: str, changes: Sequence[RecentChange]) -> str:
    if not changes:
        return ""
    lines = [f"Recent changes to `{name}` (newest first; commit messages quoted as data):\n"]
    for change in changes:
        label = f"PR #{change.pr}" if change.pr is not None else "commit"
        title = change.title.replace("`", "'")
        lines.append(
            f'- {label} "{title}" — {change.commit[:SHORT_SHA_CHARS]}, {change.date[:10]}, {change.author}\n'
        )
        lines.extend(f"  > {line}".rstrip() + "\n" for line in change.summary.splitlines())
    return "".join(lines) + "\n"


def fit_impact(section: ImpactSection, room: int, counter: TokenCounter) -> tuple[Fitted, int]:
    """The impact section with as many dependents (nearest first) as fit in ``room`` tokens."""
    ordered = sorted(
        ((group, entry) for group, entries in section.groups for entry in entries),
        key=lambda pair: (pair[1].depth, IMPACT_GROUPS.index(pair[0])),
    )
    kept: list[tuple[str, ImpactEntry]] = []
    best = replace(section, groups=(), truncated=section.truncated or bool(ordered))
    text = _impact_text(best)
    tokens = counter.count(text)
    if tokens > room:
        return Fitted(""), 0
    for pair in ordered:
        candidate = [*kept, pair]
        shown = replace(
            section,
            groups=grouped(candidate),
            truncated=section.truncated or len(candidate) < len(ordered),
        )
        attempt = _impact_text(shown)
        attempt_tokens = counter.count(attempt)
        if attempt_tokens > room:
            break
        kept, best, text, tokens = candidate, shown, attempt, attempt_tokens
    return Fitted(text, impact=best), tokens


def grouped(pairs: Sequence[tuple[str, ImpactEntry]]) -> tuple[tuple[str, tuple[ImpactEntry, ...]], ...]:
    by_group: Mapping[str, list[ImpactEntry]] = {group: [] for group in IMPACT_GROUPS}
    for group, entry in pairs:
        by_group[group].append(entry)
    return tuple(
        (
            group,
            tuple(sorted(entries, key=_entry_order)),
        )
        for group, entries in by_group.items()
        if entries
    )


def _entry_order(entry: ImpactEntry) -> tuple[int, str, int, str, str]:
    return (entry.depth, entry.file_path, entry.start_line, entry.qualified_name, entry.id)


def _impact_text(section: ImpactSection) -> str:
    shown = sum(len(entries) for _, entries in section.groups)
    lines = [
        f"## Impact: what depends on `{section.target_id}` — {section.target_citation}"
        f" (depth {section.depth})\n\n"
    ]
    for group, entries in section.groups:
        lines.append(f"{_GROUP_TITLES[group]}:\n")
        for entry in entries:
            via = f" via `{entry.via}`" if entry.depth > 1 else ""
            lines.append(
                f"- {entry.citation} {entry.kind} `{entry.qualified_name}`{via} (depth {entry.depth})\n"
            )
    if not section.groups:
        lines.append("Nothing in the index depends on it.\n" if not section.truncated else "")
    if section.truncated:
        lines.append(f"(showing {shown} of {section.found}+ dependents; the rest were capped)\n")
    return "".join(lines) + "\n"
