"""Core values -> the wire shapes of ``shapes.py``: a context pack, an expanded node, an index status.

See architecture.md, *The protocol*.

The one place they become wire data: the CLI prints it, the language server and the MCP server send
it. Each function builds its shape key by key, in the order the shape declares, so the JSON is the
same from every front end. A key a shape marks optional is added only when it has a value: so
``workspaceFolder`` appears only in the items of a pack, or the nodes, of several workspace folders
(shapes.py, *Multi-root workspaces*), and a single-folder pack stays as it always was.
"""

from __future__ import annotations

from smartctx.core.context import (
    BodyItem,
    ContextPack,
    FileMapEntry,
    NodeDetail,
    SummaryItem,
    Warning,
)
from smartctx.core.history import ImpactEntry, ImpactSection, RecentChange
from smartctx.live.status import StatusCounts
from smartctx.wire.shapes import (
    IndexStatus,
    WireBody,
    WireContextPack,
    WireFileMapEntry,
    WireImpact,
    WireImpactEntry,
    WireImpactTarget,
    WireNode,
    WireRecentChange,
    WireSummary,
    WireWarning,
)

# A status names at most this many of the entries whose names are not UTF-8; it counts them all.
STATUS_NAMES_SHOWN = 20


def pack_to_wire(pack: ContextPack) -> WireContextPack:
    wire: WireContextPack = {
        "taskDescription": pack.task_description,
        "bodies": [_body_to_wire(body) for body in pack.bodies],
        "summaries": [_summary_to_wire(summary) for summary in pack.summaries],
        "fileMap": [_file_map_entry_to_wire(entry) for entry in pack.file_map],
        "subgraph": {
            "nodes": list(pack.subgraph_nodes),
            "edges": [{"from": e.source, "to": e.target, "kind": e.kind} for e in pack.subgraph_edges],
        },
        "tokensUsed": pack.tokens_used,
        "budgetTokens": pack.budget_tokens,
        "trimmed": pack.trimmed,
        "notFound": pack.not_found,
        "text": pack.text,
        "metadata": {
            "tokenizer": pack.tokenizer,
            "tokenScale": float(pack.token_scale),
            "tokenModel": pack.token_model,
            "timingsMs": pack.timings_ms,
            "freshness": {
                "indexedFiles": pack.freshness.indexed_files,
                "pendingFiles": pack.freshness.pending_files,
                "lastUpdate": pack.freshness.last_update,
                "gitHead": pack.freshness.git_head,
                "dirty": pack.freshness.dirty,
            },
            "warnings": [_warning_to_wire(warning) for warning in pack.warnings],
        },
    }
    if pack.impact is not None:
        wire["impact"] = _impact_to_wire(pack.impact)
    return wire


def node_to_wire(node: NodeDetail) -> WireNode:
    """One definition in full, as ``smartctx/expand`` and the MCP tool ``expand_symbol`` answer."""
    wire: WireNode = {
        "id": node.id,
        "kind": node.kind,
        "name": node.name,
        "qualifiedName": node.qualified_name,
        "language": node.language,
        "filePath": node.file_path,
        "startLine": node.start_line,
        "endLine": node.end_line,
        "citation": node.citation,
        "signature": node.signature,
        "doc": node.doc,
        "source": node.source,
        "tokens": node.tokens,
        "warnings": [_warning_to_wire(warning) for warning in node.warnings],
    }
    if node.workspace_folder is not None:
        wire["workspaceFolder"] = node.workspace_folder
    return wire


def status_to_wire(counts: StatusCounts) -> IndexStatus:
    """An index status as both servers send it."""
    wire: IndexStatus = {
        "state": counts.state,
        "filesDone": counts.files_done,
        "filesTotal": counts.files_total,
        "pendingFiles": counts.pending_files,
        "indexedFiles": counts.indexed_files,
        "role": counts.role,
    }
    if counts.error:
        wire["message"] = counts.error
    if counts.writer is not None:
        wire["writerPid"] = counts.writer.pid
        wire["writerCommand"] = counts.writer.command
    if counts.undecodable_names:
        wire["undecodableCount"] = len(counts.undecodable_names)
        wire["undecodableNames"] = list(counts.undecodable_names[:STATUS_NAMES_SHOWN])
    if counts.base is not None:
        wire["base"] = counts.base
    return wire


def _body_to_wire(body: BodyItem) -> WireBody:
    wire: WireBody = {
        "id": body.id,
        "kind": body.kind,
        "name": body.name,
        "qualifiedName": body.qualified_name,
        "language": body.language,
        "filePath": body.file_path,
        "startLine": body.start_line,
        "endLine": body.end_line,
        "citation": body.citation,
        "score": body.score,
        "scoreParts": body.score_parts,
        "source": body.source,
        "tokens": body.tokens,
        "recentPRs": [_change_to_wire(change) for change in body.recent_prs],
        "leftOut": [{"startLine": start, "endLine": end} for start, end in body.left_out],
    }
    if body.workspace_folder is not None:
        wire["workspaceFolder"] = body.workspace_folder
    return wire


def _summary_to_wire(summary: SummaryItem) -> WireSummary:
    wire: WireSummary = {
        "id": summary.id,
        "kind": summary.kind,
        "name": summary.name,
        "qualifiedName": summary.qualified_name,
        "filePath": summary.file_path,
        "startLine": summary.start_line,
        "endLine": summary.end_line,
        "citation": summary.citation,
        "signature": summary.signature,
        "doc": summary.doc,
        "score": summary.score,
        "tokens": summary.tokens,
    }
    if summary.workspace_folder is not None:
        wire["workspaceFolder"] = summary.workspace_folder
    return wire


def _file_map_entry_to_wire(entry: FileMapEntry) -> WireFileMapEntry:
    wire: WireFileMapEntry = {
        "filePath": entry.file_path,
        "score": entry.score,
        "reason": entry.reason,
        "symbols": [
            {
                "kind": symbol.kind,
                "qualifiedName": symbol.qualified_name,
                "startLine": symbol.start_line,
                "endLine": symbol.end_line,
            }
            for symbol in entry.symbols
        ],
        "tokens": entry.tokens,
    }
    if entry.workspace_folder is not None:
        wire["workspaceFolder"] = entry.workspace_folder
    return wire


def _warning_to_wire(warning: Warning) -> WireWarning:
    return {"code": warning.code, "nodeId": warning.node_id, "message": warning.message}


def _change_to_wire(change: RecentChange) -> WireRecentChange:
    return {
        "pr": change.pr,
        "title": change.title,
        "summary": change.summary,
        "commit": change.commit,
        "date": change.date,
        "author": change.author,
    }


def _impact_to_wire(impact: ImpactSection) -> WireImpact:
    target: WireImpactTarget = {"id": impact.target_id, "citation": impact.target_citation}
    if impact.workspace_folder is not None:
        target["workspaceFolder"] = impact.workspace_folder
    return {
        "target": target,
        "depth": impact.depth,
        "groups": {
            group: [_impact_entry_to_wire(entry) for entry in entries] for group, entries in impact.groups
        },
        "found": impact.found,
        "truncated": impact.truncated,
    }


def _impact_entry_to_wire(entry: ImpactEntry) -> WireImpactEntry:
    return {
        "id": entry.id,
        "kind": entry.kind,
        "qualifiedName": entry.qualified_name,
        "filePath": entry.file_path,
        "startLine": entry.start_line,
        "endLine": entry.end_line,
        "citation": entry.citation,
        "depth": entry.depth,
        "via": entry.via,
        "confidence": entry.confidence,
    }
