"""The MCP tools: their names, JSON schemas and descriptions, and their arguments as core values.

Descriptions are written for the model that chooses and fills the tools: what each is for, when to
call it, what comes back. Arguments are checked here, by hand, so every mistake becomes a message
that names the field and says what is allowed (the SDK's schema check would stop at the first
violation with a message written for programmers).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from smartctx.core.context import (
    MAX_BUDGET_TOKENS,
    MAX_FOCUS_FILES,
    MAX_TOKEN_SCALE,
    MIN_TOKEN_SCALE,
    ContextOptions,
    ContextRequest,
    Focus,
    InvalidRequestError,
)
from smartctx.live.paths import innermost_folder
from smartctx.wire.options import OPTIONS_BY_NAME

GET_CONTEXT_FOR_TASK = "get_context_for_task"
EXPAND_SYMBOL = "expand_symbol"
INDEX_STATUS = "index_status"

# The options a model may set, as arguments under their wire names (wire/options.py), in the order
# their mistakes are reported.
_OPTIONS = tuple(
    OPTIONS_BY_NAME[name]
    for name in (
        "budgetTokens",
        "maxBodies",
        "maxSummaries",
        "hopDepth",
        "tokenScale",
        "includePRs",
        "includeImpact",
        "prCutoff",
    )
)
# What an option's JSON type accepts, and how the argument's mistake is told. A bool is an int to
# Python, so it is refused separately where a number belongs.
_ACCEPTED: dict[type, tuple[tuple[type, ...], str]] = {
    int: ((int,), "a whole number"),
    float: ((int, float), "a number"),
    bool: ((bool,), "true or false"),
    str: ((str,), "a string"),
}

CONTEXT_ARGUMENTS = ("task", *(option.name for option in _OPTIONS), "focusFile", "focusFiles")

_DEFAULTS = ContextOptions()
# A focus path longer than this is refused before the file system sees it: Linux's PATH_MAX, the
# longest path any call on it accepts.
MAX_FOCUS_PATH_CHARS = 4096

CONTEXT_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "minLength": 1,
            "description": (
                "What you are about to do, in plain words, with every name you already know: "
                "functions, classes, files, error messages or a whole stack trace. Names and paths "
                "weigh more than prose."
            ),
        },
        "budgetTokens": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_BUDGET_TOKENS,
            "description": (
                "Tokens the whole answer may use, counted exactly with the o200k_base tokenizer (GPT-4o's)"
                f" (default {_DEFAULTS.budget_tokens}). If your model counts tokens otherwise, set"
                " tokenScale too."
            ),
        },
        "tokenScale": {
            "type": "number",
            "minimum": MIN_TOKEN_SCALE,
            "maximum": MAX_TOKEN_SCALE,
            "description": (
                "Your tokens per o200k_base token, when your model's tokenizer is not o200k_base: the"
                " answer is then packed in budgetTokens / tokenScale o200k_base tokens. Tokenizers that"
                " are not public count the same code differently (Claude's users report 1.6 to 2.1"
                " times o200k_base's count); 1.25 leaves a quarter of headroom (default 1)."
            ),
        },
        "maxBodies": {
            "type": "integer",
            "minimum": 0,
            "maximum": 200,
            "description": (
                "Definitions to include in full (default: as many as the budget holds while they"
                " score close to the best; 5 at 4,000 tokens)."
            ),
        },
        "maxSummaries": {
            "type": "integer",
            "minimum": 0,
            "maximum": 1000,
            "description": (
                "Further definitions to list by signature and doc (default: chosen from the budget;"
                " 25 at 4,000 tokens). After them, further likely files are listed one line each."
            ),
        },
        "hopDepth": {
            "type": "integer",
            "minimum": 0,
            "maximum": 3,
            "description": (
                "How far to follow calls, imports and inheritance from the direct matches "
                f"(default {_DEFAULTS.hop_depth})."
            ),
        },
        "includePRs": {
            "type": "boolean",
            "description": (
                "Add, under each full definition, the pull requests or commits behind its current lines."
            ),
        },
        "prCutoff": {
            "type": "string",
            "description": (
                "With includePRs: leave out changes after this ISO 8601 date or date-time (e.g. 2024-05-01)."
            ),
        },
        "includeImpact": {
            "type": "boolean",
            "description": (
                "Add what depends on the top definition: callers, subclasses, importers, other uses."
            ),
        },
        "focusFile": {
            "type": "string",
            "description": (
                "A file you are working in (path relative to the workspace, absolute path, or file:// URI); "
                "its definitions and neighbours rank higher."
            ),
        },
        "focusFiles": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": MAX_FOCUS_FILES,
            "description": (
                "Other files you have open or are working with, same forms as focusFile; they and their "
                "neighbours rank a little higher. Files edited lately are known without being named."
            ),
        },
    },
    "required": ["task"],
    "additionalProperties": False,
}

EXPAND_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            "minLength": 1,
            "description": (
                'The id of an item from get_context_for_task, like "shop/payments.py::PaymentGateway.charge".'
            ),
        }
    },
    "required": ["id"],
    "additionalProperties": False,
}

STATUS_INPUT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

# The structured answers, loosely: the fields a caller relies on, leaving room for more.
_CITED_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string"},
    "filePath": {"type": "string"},
    "startLine": {"type": "integer"},
    "endLine": {"type": "integer"},
    "citation": {"type": "string"},
}
_CITED_REQUIRED = ["id", "filePath", "startLine", "endLine", "citation"]
# A pack's items name their fields, not each field's type: a client checks its structured content
# against this schema on every call, and descending into each field of some hundred items cost the
# Python SDK's client about 4 ms a call (0.7 ms with the names alone). The types are those of the
# expand_symbol schema's fields of the same names.
_CITED_ITEM = {
    "type": "object",
    "required": _CITED_REQUIRED,
    "description": "A cited definition: id, filePath and citation are strings; startLine, endLine integers.",
}
_FILE_MAP_ITEM = {
    "type": "object",
    "required": ["filePath"],
    "description": "A further likely file: filePath, a string, and the definitions it holds.",
}
PACK_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "taskDescription": {"type": "string"},
        "bodies": {"type": "array", "items": _CITED_ITEM},
        "summaries": {"type": "array", "items": _CITED_ITEM},
        "fileMap": {"type": "array", "items": _FILE_MAP_ITEM},
        "tokensUsed": {"type": "integer"},
        "budgetTokens": {"type": "integer"},
        "notFound": {"type": "boolean"},
        "text": {"type": "string"},
        "metadata": {"type": "object"},
    },
    "required": ["taskDescription", "bodies", "summaries", "tokensUsed", "budgetTokens", "text", "metadata"],
}
NODE_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **_CITED_PROPERTIES,
        "source": {"type": "string"},
        "signature": {"type": "string"},
    },
    "required": [*_CITED_REQUIRED, "source"],
}
STATUS_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "state": {"enum": ["indexing", "ready", "failed"]},
        "filesDone": {"type": "integer"},
        "filesTotal": {"type": "integer"},
        "pendingFiles": {"type": "integer"},
        "indexedFiles": {"type": "integer", "description": "how many files the index holds"},
        "undecodableCount": {
            "type": "integer",
            "description": "files or folders not indexed because their names are not UTF-8",
        },
        "undecodableNames": {"type": "array", "items": {"type": "string"}},
        "folders": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["state", "filesDone", "filesTotal", "pendingFiles", "indexedFiles", "folders"],
}

CONTEXT_DESCRIPTION = """\
Find the code that matters for a task in this workspace and return it, cited and inside a token \
budget (counted in o200k_base tokens; tokenScale states it in yours): the most relevant definitions \
in full, the next ones by signature and doc, each cited as path:start-end. Call it first when you \
start a task in unfamiliar code, before reading files one by one; describe the task with every \
name, path or error text you have. Items carry an id for \
expand_symbol. The answer comes from a live index that follows the disk; if it says the index is \
still being built, parts of the workspace may be missing."""

EXPAND_DESCRIPTION = """\
Return one definition in full, as it is on disk now (secrets redacted): its kind, signature, doc, \
source and citation. Use it for an item that get_context_for_task listed only by signature, or to \
re-read a definition after it changed. Takes the item's id."""

STATUS_DESCRIPTION = """\
Say whether the workspace index is ready: state (indexing, ready or failed), files indexed of the \
total, changes still pending, and each workspace folder. Call it when an answer seems to miss code \
that exists, or to know whether indexing is done."""


def context_requests(arguments: dict[str, Any], roots: Sequence[Path]) -> list[ContextRequest]:
    """``get_context_for_task`` arguments -> one request per workspace folder in ``roots``, alike but
    for the focus: each folder gets the focus files inside it."""
    _refuse_unknown(arguments, CONTEXT_ARGUMENTS)
    task = arguments.get("task")
    if not isinstance(task, str) or not task or task.isspace():
        raise InvalidRequestError(
            f"task must be a non-empty string describing what you want to do, got {task!r}"
        )
    values: dict[str, Any] = {}
    for option in _OPTIONS:
        value = arguments.get(option.name)
        accepted, told = _ACCEPTED[option.value_type]
        if value is not None and (
            not isinstance(value, accepted) or (isinstance(value, bool) and option.value_type is not bool)
        ):
            raise InvalidRequestError(f"{option.name} must be {told}, got {value!r}")
        values[option.field] = value
    options = ContextOptions.from_values(values)
    focus = _focus(arguments.get("focusFile"), arguments.get("focusFiles"), roots)
    return [ContextRequest(task, options, folder_focus) for folder_focus in focus]


def expand_id(arguments: dict[str, Any]) -> str:
    """``expand_symbol`` arguments -> the id of the definition to expand."""
    _refuse_unknown(arguments, ("id",))
    wire_id = arguments.get("id")
    if not isinstance(wire_id, str) or not wire_id:
        raise InvalidRequestError(
            f'id must be the id of an item from get_context_for_task, like "pkg/mod.py::Class.method", '
            f"got {wire_id!r}"
        )
    return wire_id


def no_arguments(arguments: dict[str, Any]) -> None:
    _refuse_unknown(arguments, ())


def _refuse_unknown(arguments: dict[str, Any], known: Sequence[str]) -> None:
    unknown = sorted(name for name in arguments if name not in known)
    if unknown:
        allowed = ", ".join(known) if known else "none"
        raise InvalidRequestError(f"unknown argument {unknown[0]}; the arguments are: {allowed}")


def _focus(active: Any, others: Any, roots: Sequence[Path]) -> list[Focus]:
    """One focus per root: ``focusFile`` is the active file of the root that holds it, each of
    ``focusFiles`` an open file of its root."""
    found = None if active is None else _locate(active, "focusFile", roots)
    if others is not None and (not isinstance(others, list) or len(others) > MAX_FOCUS_FILES):
        raise InvalidRequestError(
            f"focusFiles must be a list of at most {MAX_FOCUS_FILES} file paths, got {others!r}"
        )
    opened = [_locate(raw, f"focusFiles[{index}]", roots) for index, raw in enumerate(others or [])]
    return [
        Focus(
            active_path=found[1] if found is not None and found[0] == root else None,
            visible_paths=tuple(path for position, path in opened if position == root),
        )
        for root in range(len(roots))
    ]


def _locate(raw: Any, field: str, roots: Sequence[Path]) -> tuple[int, str]:
    """A file path or URI from the caller as (root position, workspace-relative path)."""
    if not isinstance(raw, str) or not raw:
        raise InvalidRequestError(f"{field} must be a file path or file:// URI, got {raw!r}")
    if len(raw) > MAX_FOCUS_PATH_CHARS or "\x00" in raw:
        # The file system would refuse it (ENAMETOOLONG, an embedded NUL) with an error naming the
        # whole absolute path; the caller learns what is wrong with what it sent instead.
        problem = f"is {len(raw):,} characters long" if "\x00" not in raw else "holds a NUL character"
        raise InvalidRequestError(
            f"{field} {problem}: a file path is at most {MAX_FOCUS_PATH_CHARS:,} characters, without NUL"
        )
    found = None
    if raw.startswith("file:"):
        found = innermost_folder(roots, raw)
    elif Path(raw).is_absolute():
        found = innermost_folder(roots, Path(raw).as_uri())
    else:
        # A relative path is taken in the first folder that has such a file, else in the first one.
        candidates = [root / raw for root in roots]
        chosen = next((path for path in candidates if _is_file(path)), candidates[0])
        found = innermost_folder(roots, chosen.absolute().as_uri())
    where = f"the workspace folder {roots[0]}" if len(roots) == 1 else "any workspace folder"
    if found is None:
        raise InvalidRequestError(f"{field} {raw} is not a file inside {where}")
    position, path = found
    if not _is_file(roots[position] / path):
        raise InvalidRequestError(f"{field} {raw} names no file in {where}")
    return found


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for any name the file system refuses (one of its
    components too long, say) rather than an error that quotes the absolute path."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
