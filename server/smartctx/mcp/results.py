"""Core answers -> MCP tool results: text for the model, JSON for programs, links for citations.

Every result carries the answer twice, as the protocol suggests: Markdown in ``content`` (what a
model reads) and the same data as JSON in ``structuredContent`` (the pack in the wire shape of
architecture.md, *The protocol*, exactly what ``smartctx context --format json`` prints). Each
citation also becomes a ``resource_link`` to the file, its lines in the URI's fragment
(``#L12-L40``) and its description.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from urllib.parse import quote_from_bytes

import mcp_types as types

from smartctx.core.context import ContextPack, NodeDetail
from smartctx.live.status import StatusCounts
from smartctx.live.workspace import Folder
from smartctx.wire.convert import STATUS_NAMES_SHOWN, node_to_wire, pack_to_wire, status_to_wire
from smartctx.wire.shapes import IndexStatus, WireBody, WireNode, WireSummary

# Source files are text; a client that wants a finer type can look at the extension.
CODE_MIME_TYPE = "text/plain"


class FolderStatus(IndexStatus):
    """One workspace folder's index status in ``index_status``'s answer: the folder, then its counts."""

    name: str
    uri: str
    path: str


class WorkspaceStatus(IndexStatus):
    """``index_status``'s structured answer: the status of the whole workspace, and each folder's."""

    folders: list[FolderStatus]


def pack_result(pack: ContextPack, folders: Sequence[Folder]) -> types.CallToolResult:
    wire = pack_to_wire(pack)
    content: list[types.ContentBlock] = []
    pending = pack.freshness.pending_files
    if pending:
        content.append(types.TextContent(text=_pending_note(pending)))
    content.append(types.TextContent(text=pack.text))
    items: list[WireBody | WireSummary] = [*wire["bodies"], *wire["summaries"]]
    file_uris = _FileUris(folders)
    content.extend(_citation_link(item, file_uris) for item in items)
    return types.CallToolResult(content=content, structured_content=wire)


def node_result(node: NodeDetail, folders: Sequence[Folder]) -> types.CallToolResult:
    wire = node_to_wire(node)
    lines = [f"{node.kind} `{node.qualified_name}` at {node.citation}"]
    if node.doc:
        lines.append(node.doc)
    lines += [f"```{node.language}", node.source.rstrip("\n"), "```"]
    lines += [f"Note ({warning.code}): {warning.message}" for warning in node.warnings]
    text = "\n".join(lines) + "\n"
    link = _citation_link(wire, _FileUris(folders))
    content: list[types.ContentBlock] = [types.TextContent(text=text), link]
    return types.CallToolResult(content=content, structured_content=wire)


def status_result(
    status: StatusCounts, folders: Sequence[tuple[Folder, StatusCounts]]
) -> types.CallToolResult:
    """The workspace's status and each folder's (``Workspace.folder_status``)."""
    wire: WorkspaceStatus = {
        **status_to_wire(status),
        "folders": [
            {"name": folder.name, "uri": folder.uri, "path": str(folder.root), **status_to_wire(counts)}
            for folder, counts in folders
        ],
    }
    return types.CallToolResult(
        content=[types.TextContent(text=status_text(status, len(folders)))], structured_content=wire
    )


def error_result(message: str) -> types.CallToolResult:
    """A tool error the model can read and act on; the server keeps serving."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def status_text(status: StatusCounts, folder_count: int) -> str:
    return _state_text(status, folder_count) + _base_text(status) + _role_text(status) + _names_text(status)


def _base_text(status: StatusCounts) -> str:
    """The team's published base, while it answers (the folder's own index may be empty)."""
    return f" Answered from the team's {status.base}." if status.base else ""


def _names_text(status: StatusCounts) -> str:
    """The files left out because their names are not UTF-8, which the user can rename."""
    names = status.undecodable_names
    if not names:
        return ""
    shown = ", ".join(names[:STATUS_NAMES_SHOWN]) + (" and more" if len(names) > STATUS_NAMES_SHOWN else "")
    return f" {len(names):,} files or folders are not indexed because their names are not UTF-8: {shown}."


def _state_text(status: StatusCounts, folder_count: int) -> str:
    folders = "1 workspace folder" if folder_count == 1 else f"{folder_count} workspace folders"
    if status.error:
        return f"The index of {folders} failed: {status.error}"
    if status.indexing and not status.files_total:
        return f"Indexing {folders}: looking for files."
    if status.indexing:
        return (
            f"Indexing {folders}: {status.files_done:,} of {status.files_total:,} files done,"
            f" {status.pending_files:,} pending."
        )
    pending = f", {status.pending_files:,} changes pending" if status.pending_files else ""
    return f"The index of {folders} is ready: {status.indexed_files:,} files indexed{pending}."


def _role_text(status: StatusCounts) -> str:
    """Who writes the index, when another process does (an editor's language server, say)."""
    if status.role == "writer":
        return ""
    writer = (
        "another smartctx process"
        if status.writer is None
        else f"{status.writer.command} (pid {status.writer.pid})"
    )
    whose = "Some folders' indexes are" if status.role == "mixed" else "The index is"
    return (
        f" {whose} shared: {writer} writes it and this server answers from its updates, taking over"
        " writing when it exits."
    )


def _pending_note(pending_files: int) -> str:
    """Said before a pack built while the index was catching up, as its freshness stamp says."""
    files = "1 file is" if pending_files == 1 else f"{pending_files:,} files are"
    return (
        f"Note: the index is still being built ({files} waiting to be indexed); this answer covers only "
        "what is indexed so far. Ask again later, or call index_status to see how far it is."
    )


class _FileUris:
    """``file://`` URIs of files in the served folders, each folder's own part made once.

    A pack cites some hundred items: joining and quoting each path through ``pathlib`` cost more
    than the rest of the result. A path in a pack is relative and normalized, so its URI is the
    folder's URI, a slash and the path's bytes quoted as ``Path.as_uri`` quotes them.
    """

    def __init__(self, folders: Sequence[Folder]) -> None:
        self._folders = folders
        self._prefixes: dict[str, str] = {}

    def of(self, folder_uri: str | None, relative_path: str) -> str:
        """The URI of ``relative_path`` in the folder ``folder_uri`` names (the first, when None)."""
        folder = next((f for f in self._folders if f.uri == folder_uri), self._folders[0])
        prefix = self._prefixes.get(folder.uri)
        if prefix is None:
            prefix = folder.root.as_uri()
            prefix = self._prefixes[folder.uri] = prefix if prefix.endswith("/") else prefix + "/"
        return prefix + quote_from_bytes(os.fsencode(relative_path))


def _citation_link(item: WireBody | WireSummary | WireNode, file_uris: _FileUris) -> types.ResourceLink:
    """A link to the cited lines. Items of a multi-folder pack name their folder; with one folder,
    paths are relative to it."""
    start, end = item["startLine"], item["endLine"]
    uri = file_uris.of(item.get("workspaceFolder"), item["filePath"]) + f"#L{start}-L{end}"
    return types.ResourceLink(
        uri=uri,
        name=item["citation"],
        title=f"{item['qualifiedName']} ({item['filePath']}:{start}-{end})",
        description=f"{item['kind']} {item['qualifiedName']}, lines {start}-{end} of {item['filePath']}",
        mime_type=CODE_MIME_TYPE,
    )
