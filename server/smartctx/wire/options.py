"""The options of a context request under their camelCase names: one table for every front end.

See architecture.md, *The protocol*.

The language server reads them from contextForTask's ``options`` and from the ``contextDefaults``
setting, the MCP server offers some of them as arguments of ``get_context_for_task``, and the
command line fills the same ``ContextOptions`` fields from its flags. The client mirrors the names,
in this order, in ``client-vscode/src/lsp_ext.ts`` (``OPTION_NAMES``).
"""

from __future__ import annotations

from dataclasses import dataclass

from smartctx.core import context as core_context


@dataclass(frozen=True)
class ContextOption:
    # The name on the wire: camelCase, as in a JSON request.
    name: str
    # The ``ContextOptions`` field it sets.
    field: str
    # The JSON type of its value (an integer where ``int``; ``float`` takes any number).
    value_type: type[bool] | type[int] | type[float] | type[str]


# ``budgetTokens`` is counted exactly with ``tokenizer`` (o200k_base unless given). For a reader that
# counts otherwise, ``tokenScale`` states the budget in its tokens: that many of them per tokenizer
# token (a number from MIN_TOKEN_SCALE to MAX_TOKEN_SCALE; 1.25 leaves a quarter of headroom for a
# model whose tokenizer is not public). The pack is then made in ``floor(budgetTokens / tokenScale)``
# tokenizer tokens, exactly, and its ``budgetTokens`` is that number: a scaled budget is a budget.
# The server never counts in the reader's tokens; a client that can (VS Code's ``countTokens``)
# measures the scale and sends it. ``tokenModel`` names the model the budget is meant for; the
# pack's metadata repeats it and the scale.
CONTEXT_OPTIONS = (
    ContextOption("budgetTokens", "budget_tokens", int),
    ContextOption("maxBodies", "max_bodies", int),
    ContextOption("maxSummaries", "max_summaries", int),
    ContextOption("candidateLimit", "candidate_limit", int),
    ContextOption("rankedCap", "ranked_cap", int),
    ContextOption("hopDepth", "hop_depth", int),
    ContextOption("hopFrontierCap", "hop_frontier_cap", int),
    ContextOption("includeBlobs", "include_blobs", bool),
    ContextOption("includePRs", "include_prs", bool),
    ContextOption("prsPerNode", "prs_per_node", int),
    ContextOption("prCutoff", "pr_cutoff", str),
    ContextOption("includeImpact", "include_impact", bool),
    ContextOption("impactDepth", "impact_depth", int),
    ContextOption("tokenizer", "tokenizer", str),
    ContextOption("tokenScale", "token_scale", float),
    ContextOption("tokenModel", "token_model", str),
)

OPTIONS_BY_NAME = {option.name: option for option in CONTEXT_OPTIONS}
# The wire name of each option -> its ContextOptions field, in the table's order.
OPTION_FIELDS = {option.name: option.field for option in CONTEXT_OPTIONS}

# The range of the tokenScale option (re-exported here so the client's mirror has it).
MIN_TOKEN_SCALE = core_context.MIN_TOKEN_SCALE
MAX_TOKEN_SCALE = core_context.MAX_TOKEN_SCALE
