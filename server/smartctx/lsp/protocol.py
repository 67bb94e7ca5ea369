"""The custom ``smartctx/*`` protocol (design.md §4), defined once: method names and wire shapes.

Wire data is camelCase JSON; ``convert.py`` turns it into core values and back. The TypedDicts
document the shapes for readers and for the client's mirror (``client-vscode/src/lsp_ext.ts``).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

CONTEXT_FOR_TASK = "smartctx/contextForTask"
INDEX_STATUS = "smartctx/indexStatus"

# The camelCase option names of contextForTask, mapped to ContextOptions fields.
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
}

# "failed": the index could not be opened; ``message`` says why and requests answer with that error.
# The JSON-RPC error code of an answer that cannot be given because the index could not be opened
# (from the range JSON-RPC leaves to servers); the message says why.
INDEX_UNAVAILABLE_CODE = -32010

IndexState = Literal["indexing", "ready", "failed"]


class WirePosition(TypedDict):
    line: int
    character: int


class WireFocus(TypedDict, total=False):
    uri: str
    position: WirePosition
    openUris: list[str]
    recentUris: list[str]


class ContextForTaskParams(TypedDict, total=False):
    task: str
    options: dict[str, Any]
    focus: WireFocus


class _IndexCounts(TypedDict):
    state: IndexState
    filesDone: int
    filesTotal: int
    pendingFiles: int


class IndexStatus(_IndexCounts, total=False):
    """Both the ``smartctx/indexStatus`` notification and the result of the request of that name."""

    # Only with state "failed".
    message: str


class WireRecentChange(TypedDict):
    """One of ``bodies[].recentPRs`` (includePRs): newest first; ``pr`` is null for a plain commit."""

    pr: int | None
    title: str
    summary: str
    commit: str
    date: str
    author: str


class WireImpactTarget(TypedDict):
    id: str
    citation: str


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


class InitializationOptions(TypedDict, total=False):
    # Where the index lives, usually the client's workspace storage folder.
    indexDir: str
