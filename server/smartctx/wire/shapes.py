"""The JSON shapes every front end sends: a context pack, an expanded definition, an index status.

See architecture.md, *The protocol*.

Each shape is a TypedDict that ``convert.py`` fills from core values; the language server sends them
as the results of ``smartctx/contextForTask``, ``smartctx/expand`` and ``smartctx/indexStatus``, the
MCP server as its tools' ``structuredContent``, and ``smartctx context --format json`` prints the pack.
Wire data is camelCase JSON; lines are 1-based and inclusive. The client mirrors these shapes in
``client-vscode/src/lsp_ext.ts``, and its drift test fails when the two differ.
"""

from __future__ import annotations

from typing import Literal, TypedDict

# Multi-root workspaces: every workspace folder has its own index, and a pack ranks in all of them
# within one budget. With more than one folder, every item of a pack (bodies, summaries,
# ``impact.target``) and every expanded node gains ``workspaceFolder``, the URI of the folder its
# ``filePath`` and ``citation`` are relative to; every id (items, subgraph, warnings, impact, the
# hover's command link) starts with the folder's name, ``<name>/<path>::<Qualified.name>``, which
# ``smartctx/expand`` accepts; and the pack text cites ``<name>/<path>:<start>-<end>``. The name is
# the client's folder name with ``/`` replaced by ``-``, and ``-2``, ``-3``… added to repeats. A
# folder whose index cannot be opened is left out of packs with a ``folder-unavailable`` warning.
# With one folder none of this appears: the output is the single-folder output.

# "failed": the index could not be opened; ``message`` says why and requests answer with that error.
IndexState = Literal["indexing", "ready", "failed"]

# Several processes (the editor's language server, an agent's MCP server, the CLI) share one index
# per folder: "writer" indexes it, "follower" answers from what another process writes (and takes
# over writing when that one exits); "mixed" over folders where this server does both.
IndexRole = Literal["writer", "follower", "mixed"]


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
    """Both the ``smartctx/indexStatus`` notification and the result of the request of that name;
    the MCP tool ``index_status`` answers it too, with each folder's added."""

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
    # Only while a team's published base answers for the folder (for any of several, joined by
    # "; "): the base as packs name it, "base a1b2c3d + 3 local files".
    base: str


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


class WireLineRange(TypedDict):
    """Lines of a file, 1-based and inclusive."""

    startLine: int
    endLine: int


class _WireBody(WireScoredItem):
    language: str
    # The score's named parts (bm25, pagerank, usage, focus, …), which add up to ``score``.
    scoreParts: dict[str, float]
    # The definition's source as packed: secrets redacted, possibly cut at a line boundary, a long
    # Python docstring shortened to its first lines and a note that stands for the rest, and in a
    # long body after the first that the budget needs shorter, each run of lines far from the task's
    # words one comment.
    source: str
    recentPRs: list[WireRecentChange]
    # The lines between startLine and endLine that ``source`` does not show (a long docstring's
    # rest, a long body's lines far from the task's words), each range stood for by one line of
    # ``source``; empty when it shows them all.
    leftOut: list[WireLineRange]


class WireBody(_WireBody, total=False):
    # Only when the server has several workspace folders (see *Multi-root workspaces* above).
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
    # Why it ranks, in a few words (for the panel: the pack text leaves it out).
    reason: str
    # The definitions its line names: its best-ranked one (or its most central one), with its lines
    # (1-based, inclusive).
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
    # unknown-field (lsp/protocol.py), task-truncated (a task over 1,000,000 characters, read as its start
    # and end), folded-definition (a name the task uses is nested too deep to be indexed on its own)
    # and answered-from-base (a team's published base answered, named with its local files).
    warnings: list[WireWarning]


class _WireContextPack(TypedDict):
    """The result of ``smartctx/contextForTask``, of the MCP tool ``get_context_for_task`` and of
    ``smartctx context --format json`` (architecture.md, *The protocol*)."""

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
