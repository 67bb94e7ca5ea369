"""The context pack and an expanded node as JSON: camelCase keys, 1-based inclusive lines.

See architecture.md, *The protocol*.

The one place they become wire data; the CLI prints it, the language server and the MCP server send
it. ``lsp/protocol.py`` declares the shapes.
"""

from __future__ import annotations

from typing import Any

from smartctx.core.context import ContextPack, NodeDetail
from smartctx.core.history import ImpactSection, RecentChange
from smartctx.live.status import StatusCounts

# A status names at most this many of the entries whose names are not UTF-8; it counts them all.
STATUS_NAMES_SHOWN = 20


def pack_to_wire(pack: ContextPack) -> dict[str, Any]:
    wire = {
        "taskDescription": pack.task_description,
        "bodies": [
            _with_folder(
                {
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
                },
                body.workspace_folder,
            )
            for body in pack.bodies
        ],
        "summaries": [
            _with_folder(
                {
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
                },
                summary.workspace_folder,
            )
            for summary in pack.summaries
        ],
        "fileMap": [
            _with_folder(
                {
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
                },
                entry.workspace_folder,
            )
            for entry in pack.file_map
        ],
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
            "warnings": [{"code": w.code, "nodeId": w.node_id, "message": w.message} for w in pack.warnings],
        },
    }
    if pack.impact is not None:
        wire["impact"] = _impact_to_wire(pack.impact)
    return wire


def node_to_wire(node: NodeDetail) -> dict[str, Any]:
    """One definition in full, as ``smartctx/expand`` and the MCP tool ``expand_symbol`` answer."""
    wire: dict[str, Any] = {
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
        "warnings": [{"code": w.code, "nodeId": w.node_id, "message": w.message} for w in node.warnings],
    }
    return _with_folder(wire, node.workspace_folder)


def _with_folder(item: dict[str, Any], workspace_folder: str | None) -> dict[str, Any]:
    """A pack that spans several workspace folders says which one each item's path is relative to;
    a single-folder pack stays as it always was."""
    if workspace_folder is not None:
        item["workspaceFolder"] = workspace_folder
    return item


def _change_to_wire(change: RecentChange) -> dict[str, Any]:
    return {
        "pr": change.pr,
        "title": change.title,
        "summary": change.summary,
        "commit": change.commit,
        "date": change.date,
        "author": change.author,
    }


def _impact_to_wire(impact: ImpactSection) -> dict[str, Any]:
    return {
        "target": _with_folder(
            {"id": impact.target_id, "citation": impact.target_citation}, impact.workspace_folder
        ),
        "depth": impact.depth,
        "groups": {
            group: [
                {
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
                for entry in entries
            ]
            for group, entries in impact.groups
        },
        "found": impact.found,
        "truncated": impact.truncated,
    }


def status_to_wire(counts: StatusCounts) -> dict[str, Any]:
    """An index status as both servers send it (the language server's ``IndexStatus``)."""
    wire: dict[str, Any] = {
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
    return wire
