"""One definition on demand: in full for ``smartctx/expand``, and as a hover summary with its uses.

Both read the same snapshot as a pack does, and ``expand`` reads source through the pack stage's
:func:`~smartctx.retrieval.pack.current_source`, so a definition that moved since indexing is found
again exactly as it would be in a pack.
"""

from __future__ import annotations

from smartctx.core.context import (
    InvalidRequestError,
    NodeChangedError,
    NodeDetail,
    SymbolSummary,
    SymbolUse,
    Warning,
)
from smartctx.core.model import SymbolKind
from smartctx.core.tokens import TokenCounter
from smartctx.retrieval.pack import citation, current_source, node_id
from smartctx.retrieval.sources import SourceReader
from smartctx.secrets.redaction import redact
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import NodeRow

# A hover lists at most this many uses; the count says how many there are.
MAX_HOVER_USES = 5
ID_SEPARATOR = "::"


def find_node(snapshot: IndexReader, wire_id: str) -> NodeRow:
    """The node a pack item's ``id`` (``path::Qualified.name``) names; the first if several do.

    A module is named like its file (``report.py::report``), so a function of the same name shares
    its id; pack items are never modules, so the definition wins.
    """
    path, separator, qualified_name = wire_id.partition(ID_SEPARATOR)
    if not (separator and path and qualified_name):
        raise InvalidRequestError(
            f'id {wire_id!r} is not a node id: use the "id" of a pack item, like "pkg/mod.py::Class.method"'
        )
    nodes = snapshot.nodes_at(path, qualified_name)
    if not nodes:
        raise InvalidRequestError(
            f"no definition with id {wire_id!r} is indexed: it may have been renamed or removed since the "
            "pack that named it; ask for a new pack"
        )
    return min(nodes, key=lambda node: node.kind is SymbolKind.MODULE)


def expand_node(
    snapshot: IndexReader, sources: SourceReader, counter: TokenCounter, wire_id: str
) -> NodeDetail:
    """A node's current source (secrets redacted), found again if its file changed since indexing."""
    node = find_node(snapshot, wire_id)
    warnings: list[Warning] = []
    located = current_source(node, sources, warnings)
    if located is None:
        reason = warnings[-1].message if warnings else f"{node.path} cannot be read"
        raise NodeChangedError(f"{reason}; the index catches up with the file shortly, then ask again")
    start, end, lines = located
    source, redactions = redact("".join(lines))
    signature, signature_redactions = redact(node.signature)
    doc, doc_redactions = redact(node.doc)
    redactions += signature_redactions + doc_redactions
    if redactions:
        warnings.append(Warning("secret-redacted", f"{redactions} secret(s) replaced", node_id(node)))
    return NodeDetail(
        id=node_id(node),
        kind=node.kind.value,
        name=node.name,
        qualified_name=node.qualified_name,
        language=node.language,
        file_path=node.path,
        start_line=start,
        end_line=end,
        citation=citation(node.path, start, end),
        signature=signature,
        doc=doc,
        source=source,
        tokens=counter.count(source),
        warnings=tuple(warnings),
    )


def symbol_at(snapshot: IndexReader, path: str, line: int, word: str) -> SymbolSummary | None:
    """The definition ``word`` on 1-based ``line`` of ``path`` stands for, or None.

    A name used there (a call, a reference, an import) stands for what the index resolved it to,
    the most confident target first; the name of a definition stands for that definition. Any
    other word, and anything in a file that is not indexed, stands for nothing.
    """
    if not word:
        return None
    targets = snapshot.reference_targets(path, line, word)
    node = targets[0] if targets else None
    if node is None:
        inner = snapshot.innermost_node_at(path, line)
        if inner is not None and inner.kind is not SymbolKind.MODULE and inner.name == word:
            node = inner
    if node is None:
        return None
    uses = snapshot.uses_of(node.id, MAX_HOVER_USES)
    return SymbolSummary(
        id=node_id(node),
        kind=node.kind.value,
        name=node.name,
        qualified_name=node.qualified_name,
        language=node.language,
        file_path=node.path,
        start_line=node.start_line,
        end_line=node.end_line,
        signature=node.signature,
        doc=node.doc,
        use_count=uses.count,
        use_files=uses.files,
        top_uses=tuple(SymbolUse(use.path, use.line, use.source_qualified_name) for use in uses.top),
    )
