"""The language server's own part of the custom ``smartctx/*`` protocol, defined once: method names,
commands, error codes, the capability, the params clients send and the settings.

See architecture.md, *The protocol*.

What the methods answer (a pack, an expanded definition, an index status) is the wire format every
front end shares, in ``smartctx.wire``: its shapes (``wire/shapes.py``) and the option names
(``wire/options.py``). ``convert.py`` reads the params into core values. The TypedDicts document
the shapes for readers and for the client's mirror (``client-vscode/src/lsp_ext.ts``).
"""

from __future__ import annotations

from typing import Any, TypedDict

from smartctx.core import context as core_context

# A pack of a multi-root workspace ranks in every folder within one budget; its items say which
# folder they come from (wire/shapes.py, *Multi-root workspaces*).
CONTEXT_FOR_TASK = "smartctx/contextForTask"
# The notification and the request answer for the whole workspace: "failed" if any folder's index
# could not be opened (``message`` joins their reasons), else "indexing" while any folder is
# indexing, else "ready"; the counts are sums over the folders. Adding or removing a folder sends one.
INDEX_STATUS = "smartctx/indexStatus"
# ``{id}`` (the ``id`` of a pack item) -> ``WireNode`` (wire/shapes.py). An id that names no indexed
# definition is InvalidParams; a definition whose file changed so that it cannot be found again
# answers ContentModified (``CONTENT_MODIFIED_CODE``): ask again once the index has caught up.
EXPAND = "smartctx/expand"
# A command link in the hover (``command:smartctx.contextForSymbol?<URI-encoded JSON array>``) whose
# one argument is :class:`ContextForSymbolArguments`. The client implements the command: it opens
# the context of that symbol (e.g. contextForTask with the qualified name as the task and the file
# as focus). The server does not register it.
CONTEXT_FOR_SYMBOL_COMMAND = "smartctx.contextForSymbol"

# The version of this protocol, sent in the initialize result as
# ``capabilities.experimental.smartctx.protocolVersion`` (:class:`ExperimentalCapabilities`). It grows
# by one whenever the protocol gains something a client may rely on (a method, a field, a value);
# nothing is removed or changed in place, so a client written for version N works with any server
# of N or later. A server that does not send it predates the number: version 0.
# Version 2: the options tokenScale and tokenModel, and the metadata that reports them.
# Version 3: a body's leftOut, the lines its source does not show (a long docstring's rest).
PROTOCOL_VERSION = 3

# The JSON-RPC error code of an answer that cannot be given because the index could not be opened
# (from the range JSON-RPC leaves to servers); the message says why.
INDEX_UNAVAILABLE_CODE = -32010

# ``workspace/executeCommand`` with this command (no arguments) reconciles every workspace folder
# with its index, as at start-up: only changed files are parsed, ignore rules are read again. One
# argument, a folder's name or URI, reconciles that folder only. The request is answered when the
# reconciles end, with :class:`ReindexResult` (counts summed; ``seconds`` of the longest, as the
# folders are reconciled side by side); indexStatus
# notifications report its progress meanwhile, and requests are answered from the index throughout.
# Cancelling the request does not stop the reconcile.
REINDEX_COMMAND = "smartctx.reindex"

# The code of the pack warning that lists the fields of contextForTask's params (at the top, in
# ``focus`` and its entries) that this protocol does not define: they are ignored, not refused, so
# a newer client's field costs nothing; a field defined here with a value of the wrong type is
# InvalidParams naming it.
UNKNOWN_FIELD_WARNING = "unknown-field"

# LSP's ContentModified: the answer no longer matches the file; ask again.
CONTENT_MODIFIED_CODE = -32801

# The most entries ``focus.openFiles`` and ``focus.recentEdits`` may each hold (re-exported here
# so the client's mirror has it).
MAX_FOCUS_FILES = core_context.MAX_FOCUS_FILES


class SmartctxCapabilities(TypedDict):
    protocolVersion: int


class ExperimentalCapabilities(TypedDict):
    """The initialize result's ``capabilities.experimental``: smartctx's entry, under its name."""

    smartctx: SmartctxCapabilities


class WirePosition(TypedDict):
    line: int
    character: int


class _WireOpenFile(TypedDict):
    uri: str


class WireOpenFile(_WireOpenFile, total=False):
    # Shown in an editor now (default false); a tab in the background is open but not visible.
    visible: bool


class WireRecentEdit(TypedDict):
    uri: str
    # When the file was last edited: an ISO 8601 date-time, e.g. "2026-12-01T03:24:49.123Z" (no
    # offset means UTC). A time in the future counts as now.
    editedAt: str


class WireFocus(TypedDict, total=False):
    """Where the work is: every list is optional, and each holds files inside a workspace folder.

    The server adds what it saw itself to ``recentEdits`` (buffers changed through didChange,
    saves its watcher saw) and, when ``openFiles`` is absent, takes the documents the client has
    opened (didOpen) as open files. At most ``MAX_FOCUS_FILES`` entries per list.
    """

    # The active editor's document, and its cursor (0-based, as LSP counts).
    uri: str
    position: WirePosition
    # The open files, visible ones first.
    openFiles: list[WireOpenFile]
    # The files edited lately, newest first.
    recentEdits: list[WireRecentEdit]


class ContextForTaskParams(TypedDict, total=False):
    task: str
    # Options by their names in wire/options.py; unset ones take the contextDefaults setting.
    options: dict[str, Any]
    focus: WireFocus


class ContextForSymbolArguments(TypedDict):
    # The node id, as in a pack item and ``smartctx/expand``.
    id: str
    qualifiedName: str
    # The file that defines it.
    uri: str


class ExpandParams(TypedDict):
    id: str


class ReindexResult(TypedDict):
    filesTotal: int
    filesParsed: int
    filesUnchanged: int
    filesDeleted: int
    seconds: float


# VS Code's configuration section of these settings: ``didChangeConfiguration`` may send them as
# ``{"smartctx": {...}}`` or as the object itself.
CONFIGURATION_SECTION = "smartctx"


class WireSettings(TypedDict, total=False):
    """``initializationOptions`` and ``workspace/didChangeConfiguration`` ``settings``: every key is
    optional; a missing or null key means the default, an invalid one a warning and the default."""

    # The folder the indexes live in, usually the client's workspace storage folder: each workspace
    # folder's index is a sub-folder ``<folder name>-<hash of its path>`` (default: the user cache
    # folder, keyed the same way, as for the CLI). Read at start-up only; a change needs a restart.
    indexDir: str
    # How long typing must pause before an unsaved buffer is indexed (0 to 10000, default 150).
    bufferDebounceMs: int
    # smartctx log records at this level and above are also sent as window/logMessage:
    # "error" | "warning" (default) | "info" | "debug". stderr always has every record at INFO.
    clientLogLevel: str
    # Whether textDocument/hover is answered (default true).
    hover: bool
    # contextForTask options (the camelCase names of wire/options.py) used when a request does not set them.
    contextDefaults: dict[str, Any]
    # Files never to index, as .gitignore patterns relative to each workspace folder, on top of its
    # .gitignore and .smartctxignore (default none). A change re-indexes every folder under the new
    # patterns: excluded files leave the index, files no longer excluded join it.
    exclude: list[str]
    # The team's published base index, a postgresql:// URL (default none): while a folder's first
    # index runs, its nearest published ancestor of the folder's HEAD, with the files that differ from
    # it laid over it, answers. Read at start-up only.
    baseIndex: str
    # Whether that base answers for good (default false): only the files that differ from it are
    # indexed, never a whole folder, unless no base answers for it. Read at start-up only.
    baseIndexOnly: bool
