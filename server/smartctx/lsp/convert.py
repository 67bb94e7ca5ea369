"""Wire ↔ core, by hand: the one place that knows both the JSON shapes and the core types.

Every function that reads client data raises :class:`InvalidRequestError` with a message that names
the field and says what is allowed, so the server can answer ``InvalidParams`` a person can act on.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pygls.uris import to_fs_path

from smartctx.core.context import ContextOptions, ContextRequest, Focus, InvalidRequestError, NodeDetail
from smartctx.indexing.indexer import IndexReport
from smartctx.lsp.protocol import OPTION_FIELDS, IndexStatus, ReindexResult, WireNode

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StatusCounts:
    indexing: bool
    files_done: int
    files_total: int
    pending_files: int
    # Why the index could not be opened, if it could not.
    error: str | None = None


def workspace_path(root: Path, uri: str) -> str | None:
    """The workspace-relative POSIX path of a ``file:`` URI, or None when it lies outside ``root``.

    Symbolic links are resolved first, so a link that leaves the workspace counts as outside.
    """
    fs_path = to_fs_path(uri) if uri.startswith("file:") else None
    if fs_path is None:
        return None
    full = Path(os.path.realpath(fs_path))
    try:
        relative = full.relative_to(root)
    except ValueError:
        return None
    return relative.as_posix() if relative.parts else None


def context_request(params: Any, root: Path, defaults: ContextOptions) -> ContextRequest:
    """``smartctx/contextForTask`` params → a validated request; ``defaults`` fill unset options."""
    if not isinstance(params, dict):
        raise InvalidRequestError('params must be an object like {"task": "what you want to do"}')
    task = params.get("task")
    if task is None:
        raise InvalidRequestError("task is required: describe what you want to do in plain words")
    if not isinstance(task, str) or not task.strip():
        raise InvalidRequestError(
            f"task must be a non-empty string describing what you want to do, got {task!r}"
        )
    return ContextRequest(task, _options(params.get("options"), defaults), _focus(params.get("focus"), root))


def _options(raw: Any, defaults: ContextOptions) -> ContextOptions:
    if raw is None:
        return defaults
    if not isinstance(raw, dict):
        raise InvalidRequestError(f"options must be an object, got {raw!r}")
    unknown = sorted(name for name in raw if name not in OPTION_FIELDS)
    if unknown:
        raise InvalidRequestError(
            f"unknown option options.{unknown[0]}; known options: {', '.join(OPTION_FIELDS)}"
        )
    try:
        return ContextOptions.from_values(
            {OPTION_FIELDS[name]: value for name, value in raw.items()}, defaults
        )
    except InvalidRequestError as error:
        raise InvalidRequestError(f"options.{error}") from None
    except TypeError as error:
        # A value of a type the dataclass cannot even compare, e.g. a list where a number belongs.
        raise InvalidRequestError(f"options has a value of the wrong type: {error}") from None


def _focus(raw: Any, root: Path) -> Focus:
    if raw is None:
        return Focus()
    if not isinstance(raw, dict):
        raise InvalidRequestError(f"focus must be an object, got {raw!r}")
    active = _path_of(raw.get("uri"), "focus.uri", root) if raw.get("uri") is not None else None
    cursor_line: int | None = None
    position = raw.get("position")
    if position is not None:
        line = position.get("line") if isinstance(position, dict) else None
        if isinstance(line, bool) or not isinstance(line, int) or line < 0:
            raise InvalidRequestError(
                f'focus.position must be {{"line": n, "character": n}} with 0-based n, got {position!r}'
            )
        cursor_line = line + 1
    return Focus(
        active_path=active,
        cursor_line=cursor_line,
        open_paths=_paths_of(raw.get("openUris"), "focus.openUris", root),
        recent_paths=_paths_of(raw.get("recentUris"), "focus.recentUris", root),
    )


def _paths_of(raw: Any, field: str, root: Path) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InvalidRequestError(f"{field} must be a list of file URIs, got {raw!r}")
    return tuple(_path_of(uri, f"{field}[{index}]", root) for index, uri in enumerate(raw))


def _path_of(uri: Any, field: str, root: Path) -> str:
    if not isinstance(uri, str):
        raise InvalidRequestError(f"{field} must be a file URI string, got {uri!r}")
    path = workspace_path(root, uri)
    if path is None:
        raise InvalidRequestError(f"{field} {uri} is not a file inside the workspace folder {root}")
    return path


def expand_id(params: Any) -> str:
    """``smartctx/expand`` params -> the node id to expand."""
    wire_id = params.get("id") if isinstance(params, dict) else None
    if not isinstance(wire_id, str) or not wire_id:
        raise InvalidRequestError(
            f'params must be {{"id": "<the id of a pack item>"}}, e.g. {{"id": "pkg/mod.py::Class.method"}}, '
            f"got {params!r}"
        )
    return wire_id


def node_to_wire(node: NodeDetail) -> WireNode:
    return {
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


def reindex_to_wire(report: IndexReport) -> ReindexResult:
    return {
        "filesTotal": report.files_total,
        "filesParsed": report.files_parsed,
        "filesUnchanged": report.files_unchanged,
        "filesDeleted": report.files_deleted,
        "seconds": round(report.seconds, 3),
    }


def status_to_wire(counts: StatusCounts) -> IndexStatus:
    status: IndexStatus = {
        "state": "failed" if counts.error else "indexing" if counts.indexing else "ready",
        "filesDone": counts.files_done,
        "filesTotal": counts.files_total,
        "pendingFiles": counts.pending_files,
    }
    if counts.error:
        status["message"] = counts.error
    return status
