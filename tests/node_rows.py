"""Made-up index rows for tests of the ranking's pure stages (score, files, diversify)."""

from __future__ import annotations

from smartctx.core.model import SymbolKind
from smartctx.store.snapshot import NodeRow


def function_row(node_id: int, path: str, name: str, start_line: int, end_line: int) -> NodeRow:
    """A Python function at those lines, with a little PageRank and usage and no doc."""
    return NodeRow(
        id=node_id,
        path=path,
        language="python",
        kind=SymbolKind.FUNCTION,
        name=name,
        qualified_name=name,
        start_line=start_line,
        end_line=end_line,
        signature=f"def {name}():",
        doc="",
        content_hash="",
        parent_id=None,
        pagerank=0.1,
        usage=1.0,
    )
