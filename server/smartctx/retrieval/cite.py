"""Stage 6: every packed item must be citable; those that are not are kept and reported."""

from __future__ import annotations

from collections.abc import Sequence

from smartctx.core.context import BodyItem, SummaryItem, Warning


def cite(bodies: Sequence[BodyItem], summaries: Sequence[SummaryItem]) -> list[Warning]:
    """A ``missing-citation`` warning for each item without a file path and a valid line span."""
    warnings: list[Warning] = []
    items: list[BodyItem | SummaryItem] = [*bodies, *summaries]
    for item in items:
        if not item.file_path or item.start_line < 1 or item.end_line < item.start_line:
            warnings.append(
                Warning(
                    "missing-citation", f"{item.qualified_name} has no file and line span to cite", item.id
                )
            )
    return warnings
