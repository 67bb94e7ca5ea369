"""What a context request asks for and what a context pack holds.

See architecture.md, *The pipeline* and *The protocol*.

Plain frozen values; ``wire/convert.py`` turns a pack into the camelCase wire format every front
end sends, and each front end reads its own requests into these values, so nothing here knows JSON.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from smartctx.core.history import ImpactSection, RecentChange, parse_cutoff

TOKENIZERS = ("o200k_base", "cl100k_base")
MAX_HOP_DEPTH = 3
MAX_IMPACT_DEPTH = 5
MAX_BUDGET_TOKENS = 1_000_000
# The reading model's tokens per tokenizer token that ``token_scale`` may state. Claude's users report
# 1.6 to 2.1 times what o200k_base counts (anthropics/claude-code#22506), other tokenizers count
# less; the range leaves room on both sides without letting a typo (a budget meant as a scale) pass.
MIN_TOKEN_SCALE = 0.1
MAX_TOKEN_SCALE = 10.0
# A ``token_model`` is a model's name or id, shown in the pack's metadata; this is plenty for one.
MAX_TOKEN_MODEL_CHARS = 200


# Options that, left unset, are chosen from the budget rather than fixed.
_CHOSEN_FROM_BUDGET = frozenset({"max_bodies", "max_summaries", "ranked_cap", "candidate_limit"})
# Search candidates when the caller does not say: the design's 100, and one per this many tokens of
# a larger budget, so a 32k pack is not made of an 8k pack's material.
DEFAULT_CANDIDATE_LIMIT = 100
TOKENS_PER_CANDIDATE = 80


class InvalidRequestError(ValueError):
    """A request a person must fix; the message names the field and the allowed values."""


@dataclass(frozen=True)
class ContextOptions:
    """Every knob of ``build_context`` with its default. Zero or missing means the default.

    ``max_bodies``, ``max_summaries``, ``ranked_cap`` and ``candidate_limit`` default to None: they are
    then chosen from the budget (architecture.md, *The pipeline*: 5 bodies, 25 summaries, 50 ranked
    and 100 candidates at about 4k to 8k tokens, more as the budget grows). A value the caller sets
    always wins.

    ``budget_tokens`` is stated in the reading model's tokens, ``token_scale`` of them per token of
    ``tokenizer`` (1 when the reader counts as the tokenizer does). The pipeline packs exactly in the
    tokenizer's own tokens, so a request is packed with :meth:`scaled`'s options: a scaled budget is
    an ordinary budget. ``token_model`` names the model the budget was stated for; like the scale, it
    only travels to the pack's metadata.
    """

    budget_tokens: int = 8000
    max_bodies: int | None = None
    max_summaries: int | None = None
    candidate_limit: int | None = None
    ranked_cap: int | None = None
    hop_depth: int = 1
    hop_frontier_cap: int = 200
    include_blobs: bool = True
    include_prs: bool = False
    prs_per_node: int = 3
    pr_cutoff: str | None = None
    include_impact: bool = False
    impact_depth: int = 1
    tokenizer: str = "o200k_base"
    token_scale: float = 1.0
    token_model: str | None = None

    def __post_init__(self) -> None:
        limits = {
            "budget_tokens": (1, MAX_BUDGET_TOKENS),
            "max_bodies": (0, 200),
            "max_summaries": (0, 1000),
            "candidate_limit": (1, 10_000),
            "ranked_cap": (1, 10_000),
            "hop_depth": (0, MAX_HOP_DEPTH),
            "hop_frontier_cap": (1, 100_000),
            "prs_per_node": (1, 50),
            "impact_depth": (1, MAX_IMPACT_DEPTH),
        }
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if value is None and name in _CHOSEN_FROM_BUDGET:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidRequestError(
                    f"{_camel(name)} must be a whole number from {low} to {high}, got {value!r}"
                )
        for name in ("include_blobs", "include_prs", "include_impact"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidRequestError(
                    f"{_camel(name)} must be true or false, got {getattr(self, name)!r}"
                )
        if self.pr_cutoff is not None and not _is_cutoff(self.pr_cutoff):
            raise InvalidRequestError(
                "prCutoff must be an ISO 8601 date or date-time such as 2024-05-01 or"
                f" 2024-05-01T12:00:00Z, got {self.pr_cutoff!r}"
            )
        if self.tokenizer not in TOKENIZERS:
            raise InvalidRequestError(
                f"tokenizer must be one of {', '.join(TOKENIZERS)}, got {self.tokenizer!r}"
            )
        self._check_token_scale()

    def _check_token_scale(self) -> None:
        scale = self.token_scale
        if (
            isinstance(scale, bool)
            or not isinstance(scale, (int, float))
            or not MIN_TOKEN_SCALE <= scale <= MAX_TOKEN_SCALE
        ):
            raise InvalidRequestError(
                f"tokenScale must be a number from {MIN_TOKEN_SCALE:g} to {MAX_TOKEN_SCALE:g} (the reading"
                f" model's tokens per {self.tokenizer} token, e.g. 1.25 to leave a quarter of headroom),"
                f" got {scale!r}"
            )
        if self.budget_tokens / scale > MAX_BUDGET_TOKENS:
            raise InvalidRequestError(
                f"budgetTokens / tokenScale must be at most {MAX_BUDGET_TOKENS} {self.tokenizer} tokens,"
                f" got {self.budget_tokens} / {scale}"
            )
        model = self.token_model
        if model is not None and (
            not isinstance(model, str)
            or not model.strip()
            or len(model) > MAX_TOKEN_MODEL_CHARS
            or not model.isprintable()
        ):
            raise InvalidRequestError(
                f"tokenModel must be a model's name of 1 to {MAX_TOKEN_MODEL_CHARS} printable characters,"
                f" e.g. claude-sonnet-4.5, got {model!r}"
            )

    def scaled(self) -> ContextOptions:
        """The options the pipeline packs with: the budget in the tokenizer's own tokens, the stated
        budget divided by ``token_scale`` and rounded down (so the reader's count of it stays within
        what was stated when the scale is right). The scale and the model stay, for the metadata.
        Applied once, where a request enters the pipeline (``live/workspace.py``, the CLI)."""
        if self.token_scale == 1:
            return self
        return replace(self, budget_tokens=max(1, math.floor(self.budget_tokens / self.token_scale)))

    def candidates(self) -> int:
        """The search candidates to rank: the caller's limit, or the budget's."""
        if self.candidate_limit is not None:
            return self.candidate_limit
        return max(DEFAULT_CANDIDATE_LIMIT, self.budget_tokens // TOKENS_PER_CANDIDATE)

    def cutoff_time(self) -> datetime | None:
        """``pr_cutoff`` as an aware time (a bare date means the end of that day, UTC)."""
        return None if self.pr_cutoff is None else parse_cutoff(self.pr_cutoff)

    @classmethod
    def from_values(cls, values: dict[str, Any], base: ContextOptions | None = None) -> ContextOptions:
        """Options from snake_case values, where None or 0 means "use the default" (``base``'s value,
        or the dataclass default without one)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InvalidRequestError(f"unknown option {_camel(unknown[0])}")
        chosen = {
            name: value
            for name, value in values.items()
            if value is not None and not (value == 0 and not isinstance(value, bool))
        }
        return replace(base, **chosen) if base is not None else cls(**chosen)


def _is_cutoff(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parse_cutoff(value)
    except ValueError:
        return False
    return True


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# The most files a focus may name in each of its lists (open files, recent edits): an editor
# sends a few dozen; more says nothing more about where the work is and only costs time.
MAX_FOCUS_FILES = 200


@dataclass(frozen=True)
class RecentEdit:
    """A file edited ``age_s`` seconds before the request (0 or more)."""

    path: str
    age_s: float


def edit_age_s(edited_at: object, now: datetime) -> float:
    """Seconds from an ISO 8601 date-time (no offset means UTC) to ``now``; a time in the future
    (another machine's clock) counts as now. Raises ValueError for anything but a date-time."""
    if not isinstance(edited_at, str) or not re.search(r"\d[T ]\d", edited_at):
        raise ValueError(edited_at)
    return max(0.0, (now - parse_cutoff(edited_at)).total_seconds())


@dataclass(frozen=True)
class Focus:
    """What the editor is looking at: workspace-relative paths, 1-based cursor line.

    ``visible_paths`` are the files shown in an editor now, ``open_paths`` the other open tabs;
    ``recent_edits`` the files edited lately, newest first. A path may be in several of them.
    """

    active_path: str | None = None
    cursor_line: int | None = None
    visible_paths: tuple[str, ...] = ()
    open_paths: tuple[str, ...] = ()
    recent_edits: tuple[RecentEdit, ...] = ()

    def is_empty(self) -> bool:
        return not (self.active_path or self.visible_paths or self.open_paths or self.recent_edits)


@dataclass(frozen=True)
class ContextRequest:
    task: str
    options: ContextOptions = field(default_factory=ContextOptions)
    focus: Focus = field(default_factory=Focus)


@dataclass(frozen=True)
class Warning:
    code: str
    message: str
    node_id: str | None = None


@dataclass(frozen=True)
class BodyItem:
    id: str
    kind: str
    name: str
    qualified_name: str
    language: str
    file_path: str
    start_line: int
    end_line: int
    citation: str
    score: float
    score_parts: dict[str, float]
    source: str
    tokens: int
    # The changes behind the body, newest first; only with includePRs. Counted in ``tokens``.
    recent_prs: tuple[RecentChange, ...] = ()
    # The workspace folder ``file_path`` is relative to; set only when a pack spans several folders.
    workspace_folder: str | None = None
    # Ranges of lines (1-based, inclusive) between start and end that ``source`` does not show, each
    # stood for by one line of ``source``: the rest of a long docstring (retrieval/docstrings.py), or
    # a long body's lines far from the task's words (retrieval/long_bodies.py).
    left_out: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SummaryItem:
    id: str
    kind: str
    name: str
    qualified_name: str
    file_path: str
    start_line: int
    end_line: int
    citation: str
    signature: str
    doc: str
    score: float
    tokens: int
    # The workspace folder ``file_path`` is relative to; set only when a pack spans several folders.
    workspace_folder: str | None = None


@dataclass(frozen=True)
class FileMapSymbol:
    """A definition named on a file-map line, with the lines it spans (1-based, inclusive)."""

    kind: str
    qualified_name: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class FileMapEntry:
    """One line of the pack's file map: a further likely file, why it ranks, its top definition.

    The map lists files that no body or summary of the pack comes from, so breadth costs one line
    per file. ``tokens`` is what the line costs in the pack text.
    """

    file_path: str
    score: float
    reason: str
    symbols: tuple[FileMapSymbol, ...]
    tokens: int
    # The workspace folder ``file_path`` is relative to; set only when a pack spans several folders.
    workspace_folder: str | None = None


@dataclass(frozen=True)
class SubgraphEdge:
    source: str
    target: str
    kind: str


@dataclass(frozen=True)
class Freshness:
    indexed_files: int
    pending_files: int
    last_update: str | None
    git_head: str | None
    dirty: bool | None


@dataclass(frozen=True)
class ContextPack:
    task_description: str
    bodies: tuple[BodyItem, ...]
    summaries: tuple[SummaryItem, ...]
    subgraph_nodes: tuple[str, ...]
    subgraph_edges: tuple[SubgraphEdge, ...]
    tokens_used: int
    budget_tokens: int
    trimmed: bool
    not_found: bool
    tokenizer: str
    timings_ms: dict[str, float]
    freshness: Freshness
    warnings: tuple[Warning, ...]
    # The text an LLM receives: every emitted token of it is counted against the budget.
    text: str
    # What depends on the highest-scoring body; only with includeImpact.
    impact: ImpactSection | None = None
    # Further likely files, one line each, after the summaries.
    file_map: tuple[FileMapEntry, ...] = ()
    # The request's ``token_scale`` and ``token_model``: ``budget_tokens`` is the stated budget
    # divided by the scale, in ``tokenizer`` tokens (see ContextOptions).
    token_scale: float = 1.0
    token_model: str | None = None


class NodeChangedError(Exception):
    """A definition is no longer in its file as the index says and cannot be found again there."""


@dataclass(frozen=True)
class NodeDetail:
    """One definition in full (``smartctx/expand``): its source as it is now, cited by those lines."""

    id: str
    kind: str
    name: str
    qualified_name: str
    language: str
    file_path: str
    start_line: int
    end_line: int
    citation: str
    signature: str
    doc: str
    source: str
    tokens: int
    warnings: tuple[Warning, ...]
    # The workspace folder ``file_path`` is relative to; set only when the server has several folders.
    workspace_folder: str | None = None


@dataclass(frozen=True)
class SymbolUse:
    """Where a definition is called or referenced (1-based line), and the definition that does it."""

    file_path: str
    line: int
    caller: str


@dataclass(frozen=True)
class SymbolSummary:
    """What a hover shows of a definition: its signature, doc and how it is used."""

    id: str
    kind: str
    name: str
    qualified_name: str
    language: str
    file_path: str
    start_line: int
    end_line: int
    signature: str
    doc: str
    use_count: int
    use_files: int
    top_uses: tuple[SymbolUse, ...]
    # The newest change whose diff shaped the definition's current lines (git "why"), if known.
    latest_change: RecentChange | None = None
