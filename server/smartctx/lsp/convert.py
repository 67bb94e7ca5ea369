"""The language server's params -> core values, by hand (and a re-index's counts -> its result).

What the server answers with, a pack, a node or a status, becomes wire data in ``smartctx.wire``,
as it does for every front end.

Every function that reads client data raises :class:`InvalidRequestError` with a message that names
the field and says what is allowed, so the server can answer ``InvalidParams`` a person can act on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeGuard

from smartctx.core.context import (
    MAX_FOCUS_FILES,
    ContextOptions,
    ContextRequest,
    Focus,
    InvalidRequestError,
    RecentEdit,
    Warning,
    edit_age_s,
)
from smartctx.indexing.indexer import IndexReport
from smartctx.live.paths import innermost_folder
from smartctx.lsp.protocol import (
    UNKNOWN_FIELD_WARNING,
    ContextForTaskParams,
    ReindexResult,
    WireFocus,
    WireOpenFile,
    WirePosition,
    WireRecentEdit,
)
from smartctx.wire.options import OPTION_FIELDS

log = logging.getLogger(__name__)

# An unknown-field warning names this many fields, then counts the rest; each name is cut to so
# many characters (a client's key may be of any length).
MAX_IGNORED_FIELDS_SHOWN = 10
MAX_SHOWN_KEY_CHARS = 60


def context_requests(
    params: Any, roots: Sequence[Path], defaults: ContextOptions, now: datetime | None = None
) -> list[ContextRequest]:
    """``smartctx/contextForTask`` params → one validated request per workspace folder in ``roots``,
    alike but for the focus, whose paths are relative to each folder; ``defaults`` fill unset options;
    the ages of recent edits count from ``now`` (default: the clock)."""
    if not isinstance(params, dict):
        raise InvalidRequestError('params must be an object like {"task": "what you want to do"}')
    task = params.get("task")
    if task is None:
        raise InvalidRequestError("task is required: describe what you want to do in plain words")
    if not isinstance(task, str) or not task.strip():
        raise InvalidRequestError(
            f"task must be a non-empty string describing what you want to do, got {task!r}"
        )
    options = _options(params.get("options"), defaults)
    focus = _focus(params.get("focus"), roots, now or datetime.now(timezone.utc))
    return [ContextRequest(task, options, folder_focus) for folder_focus in focus]


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


def _focus(raw: Any, roots: Sequence[Path], now: datetime) -> list[Focus]:
    """One focus per root: each holds only the files inside that root."""
    if raw is None:
        return [Focus() for _ in roots]
    if not isinstance(raw, dict):
        raise InvalidRequestError(f"focus must be an object, got {raw!r}")
    active = _path_of(raw.get("uri"), "focus.uri", roots) if raw.get("uri") is not None else None
    cursor_line: int | None = None
    position = raw.get("position")
    if position is not None:
        line = position.get("line") if isinstance(position, dict) else None
        character = position.get("character", 0) if isinstance(position, dict) else None
        if not (_is_line_number(line) and _is_line_number(character)):
            raise InvalidRequestError(
                f'focus.position must be {{"line": n, "character": n}} with 0-based n, got {position!r}'
            )
        cursor_line = line + 1
    opened = _open_files(raw.get("openFiles"), roots)
    edits = _recent_edits(raw.get("recentEdits"), roots, now)
    return [
        Focus(
            active_path=active[1] if active is not None and active[0] == root else None,
            cursor_line=cursor_line if active is not None and active[0] == root else None,
            visible_paths=tuple(path for folder, path, visible in opened if folder == root and visible),
            open_paths=tuple(path for folder, path, visible in opened if folder == root and not visible),
            recent_edits=tuple(edit for folder, edit in edits if folder == root),
        )
        for root in range(len(roots))
    ]


def _is_line_number(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def ignored_fields(params: dict[str, Any]) -> list[Warning]:
    """An ``unknown-field`` warning naming the fields of valid contextForTask ``params`` that the
    protocol does not define (a typo, or a newer client's field): they are ignored, not refused, so
    a client can send fields a later server reads; none if there are none."""
    unknown = _unknown_keys(params, "", ContextForTaskParams)
    focus = params.get("focus")
    if isinstance(focus, dict):
        unknown += _unknown_keys(focus, "focus.", WireFocus)
        if isinstance(focus.get("position"), dict):
            unknown += _unknown_keys(focus["position"], "focus.position.", WirePosition)
        for field, shape in (("openFiles", WireOpenFile), ("recentEdits", WireRecentEdit)):
            for index, entry in enumerate(focus.get(field) or []):
                unknown += _unknown_keys(entry, f"focus.{field}[{index}].", shape)
    if not unknown:
        return []
    shown = ", ".join(unknown[:MAX_IGNORED_FIELDS_SHOWN])
    more = (
        f" and {len(unknown) - MAX_IGNORED_FIELDS_SHOWN} more"
        if len(unknown) > MAX_IGNORED_FIELDS_SHOWN
        else ""
    )
    message = f"fields smartctx/contextForTask does not define were ignored: {shown}{more}"
    return [Warning(UNKNOWN_FIELD_WARNING, message)]


def _unknown_keys(value: dict[str, Any], prefix: str, shape: Any) -> list[str]:
    known = shape.__required_keys__ | shape.__optional_keys__
    return [f"{prefix}{_shown_key(key)}" for key in value if key not in known]


def _shown_key(key: str) -> str:
    return key if len(key) <= MAX_SHOWN_KEY_CHARS else key[: MAX_SHOWN_KEY_CHARS - 1] + "…"


def _entries(raw: Any, field: str, shape: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(entry, dict) for entry in raw):
        raise InvalidRequestError(f"{field} must be a list of objects like {shape}, got {raw!r}")
    if len(raw) > MAX_FOCUS_FILES:
        raise InvalidRequestError(
            f"{field} may hold at most {MAX_FOCUS_FILES} files (the most relevant first), got {len(raw)}"
        )
    return raw


def _open_files(raw: Any, roots: Sequence[Path]) -> list[tuple[int, str, bool]]:
    """``focus.openFiles`` as (root position, path, visible)."""
    found: list[tuple[int, str, bool]] = []
    shape = '{"uri": "file:///…", "visible": true}'
    for index, entry in enumerate(_entries(raw, "focus.openFiles", shape)):
        field = f"focus.openFiles[{index}]"
        visible = entry.get("visible", False)
        if not isinstance(visible, bool):
            raise InvalidRequestError(f"{field}.visible must be true or false, got {visible!r}")
        found.append((*_path_of(entry.get("uri"), f"{field}.uri", roots), visible))
    return found


def _recent_edits(raw: Any, roots: Sequence[Path], now: datetime) -> list[tuple[int, RecentEdit]]:
    """``focus.recentEdits`` as (root position, edit), each edit's age counted from ``now``."""
    found: list[tuple[int, RecentEdit]] = []
    shape = '{"uri": "file:///…", "editedAt": "2026-12-01T09:30:00Z"}'
    for index, entry in enumerate(_entries(raw, "focus.recentEdits", shape)):
        field = f"focus.recentEdits[{index}]"
        folder, path = _path_of(entry.get("uri"), f"{field}.uri", roots)
        edited_at = entry.get("editedAt")
        try:
            age_s = edit_age_s(edited_at, now)
        except ValueError:
            raise InvalidRequestError(
                f"{field}.editedAt must be an ISO 8601 date-time such as 2026-12-01T09:30:00Z,"
                f" got {edited_at!r}"
            ) from None
        found.append((folder, RecentEdit(path, age_s)))
    return found


def _path_of(uri: Any, field: str, roots: Sequence[Path]) -> tuple[int, str]:
    if not isinstance(uri, str):
        raise InvalidRequestError(f"{field} must be a file URI string, got {uri!r}")
    found = innermost_folder(roots, uri)
    if found is None:
        where = f"the workspace folder {roots[0]}" if len(roots) == 1 else "any workspace folder"
        raise InvalidRequestError(f"{field} {uri} is not a file inside {where}")
    return found


def expand_id(params: Any) -> str:
    """``smartctx/expand`` params -> the node id to expand."""
    wire_id = params.get("id") if isinstance(params, dict) else None
    if not isinstance(wire_id, str) or not wire_id:
        raise InvalidRequestError(
            f'params must be {{"id": "<the id of a pack item>"}}, e.g. {{"id": "pkg/mod.py::Class.method"}}, '
            f"got {params!r}"
        )
    return wire_id


def reindex_to_wire(reports: Sequence[IndexReport]) -> ReindexResult:
    """The re-index of one or more folders: counts add up; they ran side by side, so the time is
    the longest one's."""
    return {
        "filesTotal": sum(report.files_total for report in reports),
        "filesParsed": sum(report.files_parsed for report in reports),
        "filesUnchanged": sum(report.files_unchanged for report in reports),
        "filesDeleted": sum(report.files_deleted for report in reports),
        "seconds": round(max((report.seconds for report in reports), default=0.0), 3),
    }
