"""The custom ``smartctx/*`` protocol, defined once: method names and wire shapes.

See architecture.md, *The protocol*.

Wire data is camelCase JSON; ``convert.py`` turns it into core values and back. The TypedDicts
document the shapes for readers and for the client's mirror (``client-vscode/src/lsp_ext.ts``).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from smartctx.core import context as core_context

# Multi-root workspaces: every workspace folder has its own index, and a pack ranks in all of them
# within one budget. With more than one folder, every item of a pack (bodies, summaries,
# ``impact.target``) and every expanded node gains ``workspaceFolder``, the URI of the folder its
# ``filePath`` and ``citation`` are relative to; every id (items, subgraph, warnings, impact, the
# hover's command link) starts with the folder's name, ``<name>/<path>::<Qualified.name>``, which
# ``smartctx/expand`` accepts; and the pack text cites ``<name>/<path>:<start>-<end>``. The name is
# the client's folder name with ``/`` replaced by ``-``, and ``-2``, ``-3``… added to repeats. A
# folder whose index cannot be opened is left out of packs with a ``folder-unavailable`` warning.
# With one folder none of this appears: the output is the single-folder output.
CONTEXT_FOR_TASK = "smartctx/contextForTask"
# The notification and the request answer for the whole workspace: "failed" if any folder's index
# could not be opened (``message`` joins their reasons), else "indexing" while any folder is
# indexing, else "ready"; the counts are sums over the folders. Adding or removing a folder sends one.
INDEX_STATUS = "smartctx/indexStatus"
# ``{id}`` (the ``id`` of a pack item) -> :class:`WireNode`. An id that names no indexed definition
# is InvalidParams; a definition whose file changed so that it cannot be found again answers
# ContentModified (``CONTENT_MODIFIED_CODE``): ask again once the index has caught up.
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
PROTOCOL_VERSION = 2

# The camelCase option names of contextForTask, mapped to ContextOptions fields. ``budgetTokens`` is
# counted exactly with ``tokenizer`` (o200k_base unless given). For a reader that counts otherwise,
# ``tokenScale`` states the budget in its tokens: that many of them per tokenizer token (a number
# from MIN_TOKEN_SCALE to MAX_TOKEN_SCALE; 1.25 leaves a quarter of headroom for a model whose
# tokenizer is not public). The pack is then made in ``floor(budgetTokens / tokenScale)`` tokenizer
# tokens, exactly, and its ``budgetTokens`` is that number: a scaled budget is a budget. The server
# never counts in the reader's tokens; a client that can (VS Code's ``countTokens``) measures the
# scale and sends it. ``tokenModel`` names the model the budget is meant for; the pack's metadata
# repeats it and the scale.
OPTION_FIELDS = {
    "budgetTokens": "budget_tokens",
    "maxBodies": "max_bodies",
    "maxSummaries": "max_summaries",
    "candidateLimit": "candidate_limit",
    "rankedCap": "ranked_cap",
    "hopDepth": "hop_depth",
    "hopFrontierCap": "hop_frontier_cap",
    "includeBlobs": "include_blobs",
    "includePRs": "include_prs",
    "prsPerNode": "prs_per_node",
    "prCutoff": "pr_cutoff",
    "includeImpact": "include_impact",
    "impactDepth": "impact_depth",
    "tokenizer": "tokenizer",
    "tokenScale": "token_scale",
    "tokenModel": "token_model",
}

# The range of the tokenScale option (re-exported here so the client's mirror has it).
MIN_TOKEN_SCALE = core_context.MIN_TOKEN_SCALE
MAX_TOKEN_SCALE = core_context.MAX_TOKEN_SCALE

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

# "failed": the index could not be opened; ``message`` says why and requests answer with that error.
IndexState = Literal["indexing", "ready", "failed"]

# Several processes (the editor's language server, an agent's MCP server, the CLI) share one index
# per folder: "writer" indexes it, "follower" answers from what another process writes (and takes
# over writing when that one exits); "mixed" over folders where this server does both.
IndexRole = Literal["writer", "follower", "mixed"]


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


class WireWarning(TypedDict):
    code: str
    nodeId: str | None
    message: str


class _WireNode(TypedDict):
    """One definition in full: a pack's body item without the ranking, plus signature and doc.

    ``source`` is the definition's text now (the editor's unsaved buffer if open, secrets
    redacted), and ``startLine``/``endLine``/``citation`` (1-based, inclusive) are where that text is
    now; ``warnings`` says if it moved since indexing (``stale-relocated``) or was redacted.
    """

    id: str
    kind: str
    name: str
    qualifiedName: str
    language: str
    filePath: str
    startLine: int
    endLine: int
    citation: str
    signature: str
    doc: str
    source: str
    tokens: int
    warnings: list[WireWarning]


class WireNode(_WireNode, total=False):
    # The URI of the workspace folder ``filePath`` is relative to; only when the server has several.
    workspaceFolder: str


class ReindexResult(TypedDict):
    filesTotal: int
    filesParsed: int
    filesUnchanged: int
    filesDeleted: int
    seconds: float


class _IndexCounts(TypedDict):
    state: IndexState
    # The work of the current phase (the first index, a reconcile, a batch of changed files).
    filesDone: int
    filesTotal: int
    pendingFiles: int
    # How many files the index holds, as of the end of the last phase.
    indexedFiles: int
    role: IndexRole


class IndexStatus(_IndexCounts, total=False):
    """Both the ``smartctx/indexStatus`` notification and the result of the request of that name."""

    # Only with state "failed".
    message: str
    # Only with role "follower": the process that writes the index, and its command
    # ("smartctx mcp", ...), when it has said so.
    writerPid: int
    writerCommand: str
    # Only when files or folders are not indexed because their names are not UTF-8 (a Latin-1
    # name from an old archive): how many, and the first of them by printable path (caf\xe9.py).
    undecodableCount: int
    undecodableNames: list[str]


class WireRecentChange(TypedDict):
    """One of ``bodies[].recentPRs`` (includePRs): newest first; ``pr`` is null for a plain commit."""

    pr: int | None
    title: str
    summary: str
    commit: str
    date: str
    author: str


class _WireImpactTarget(TypedDict):
    id: str
    citation: str


class WireImpactTarget(_WireImpactTarget, total=False):
    workspaceFolder: str


class WireImpactEntry(TypedDict):
    id: str
    kind: str
    qualifiedName: str
    filePath: str
    startLine: int
    endLine: int
    citation: str
    depth: int
    # The id of the definition this one depends on (the target, a member of it, or a nearer dependent).
    via: str
    confidence: float


class WireImpact(TypedDict):
    """The pack's ``impact`` (only with includeImpact). ``groups`` maps callers, subclasses,
    typeUsers, importers and references to their entries, empty groups left out; ``found`` counts
    every dependent reached and ``truncated`` says some are not shown."""

    target: WireImpactTarget
    depth: int
    groups: dict[str, list[WireImpactEntry]]
    found: int
    truncated: bool


class WireScoredItem(TypedDict):
    """What a pack's bodies and summaries share: the definition, where it is, and its rank."""

    id: str
    kind: str
    name: str
    qualifiedName: str
    filePath: str
    startLine: int
    endLine: int
    # ``path:start-end``, 1-based and inclusive, as the pack text cites it.
    citation: str
    score: float
    tokens: int


class _WireBody(WireScoredItem):
    language: str
    # The score's named parts (bm25, pagerank, usage, focus, …), which add up to ``score``.
    scoreParts: dict[str, float]
    # The definition's source as packed: secrets redacted, possibly cut at a line boundary.
    source: str
    recentPRs: list[WireRecentChange]


class WireBody(_WireBody, total=False):
    # Only when the server has several workspace folders (see CONTEXT_FOR_TASK above).
    workspaceFolder: str


class _WireSummary(WireScoredItem):
    signature: str
    doc: str


class WireSummary(_WireSummary, total=False):
    workspaceFolder: str


class WireFileMapSymbol(TypedDict):
    kind: str
    qualifiedName: str
    startLine: int
    endLine: int


class _WireFileMapEntry(TypedDict):
    """One line of the pack's file map: a further likely file that no body or summary comes from."""

    filePath: str
    score: float
    # Why it ranks, in a few words (as in the pack text).
    reason: str
    # Its best-ranked definitions (or its most central ones), each with its lines (1-based, inclusive).
    symbols: list[WireFileMapSymbol]
    # What the line costs in the pack text.
    tokens: int


class WireFileMapEntry(_WireFileMapEntry, total=False):
    workspaceFolder: str


# "from" is a Python keyword, so this TypedDict is declared by call.
WireSubgraphEdge = TypedDict("WireSubgraphEdge", {"from": str, "to": str, "kind": str})


class WireSubgraph(TypedDict):
    nodes: list[str]
    edges: list[WireSubgraphEdge]


class WireFreshness(TypedDict):
    """How current the index was when the pack was made."""

    indexedFiles: int
    # Files changed on disk or in the editor that are not indexed yet.
    pendingFiles: int
    # ISO 8601 time of the last change to the index, or null before the first.
    lastUpdate: str | None
    gitHead: str | None
    # Null outside a git repository.
    dirty: bool | None


class WirePackMetadata(TypedDict):
    # The tokenizer that counted ``tokensUsed`` and ``budgetTokens``.
    tokenizer: str
    # The request's tokenScale (1 unless given) and tokenModel (null unless given): the budget was
    # stated as ``budgetTokens * tokenScale`` tokens of that model.
    tokenScale: float
    tokenModel: str | None
    # Milliseconds per pipeline stage (search, expand, score, diversify, pack, …).
    timingsMs: dict[str, float]
    freshness: WireFreshness
    # Codes include secret-redacted, stale-relocated, stale-dropped, missing-citation, body-cut,
    # body-skipped, summary-skipped, folder-unavailable, history-shallow, history-unavailable,
    # UNKNOWN_FIELD_WARNING, task-truncated (a task over 1,000,000 characters, read as its start
    # and end) and folded-definition (a name the task uses is nested too deep to be indexed on its own).
    warnings: list[WireWarning]


class _WireContextPack(TypedDict):
    """The result of ``smartctx/contextForTask`` (architecture.md, *The protocol*)."""

    taskDescription: str
    bodies: list[WireBody]
    summaries: list[WireSummary]
    # Further likely files, one line each (when the budget has room after the summaries).
    fileMap: list[WireFileMapEntry]
    subgraph: WireSubgraph
    tokensUsed: int
    budgetTokens: int
    # True when something that ranked was left out or cut to fit the budget.
    trimmed: bool
    # True when nothing in the index matched the task.
    notFound: bool
    # The pack as Markdown, exactly what was counted against the budget: what a model should read.
    text: str
    metadata: WirePackMetadata


class WireContextPack(_WireContextPack, total=False):
    # Only with includeImpact.
    impact: WireImpact


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
    # contextForTask options (the camelCase names above) used when a request does not set them.
    contextDefaults: dict[str, Any]
    # Files never to index, as .gitignore patterns relative to each workspace folder, on top of its
    # .gitignore and .smartctxignore (default none). A change re-indexes every folder under the new
    # patterns: excluded files leave the index, files no longer excluded join it.
    exclude: list[str]
