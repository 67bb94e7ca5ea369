"""What the indexer hands the store for one file."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from smartctx.core.model import FoldedDefinition, Reference, Symbol

_LONE_CR = re.compile(rb"\r(?!\n)")


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file as it was when indexed: enough to tell later whether it changed."""

    path: str
    language: str
    size: int
    mtime_ns: int
    content_hash: str
    line_count: int
    has_errors: bool


@dataclass(frozen=True, slots=True)
class IndexedFile:
    """One parsed file. ``symbols[0]`` is the module node.

    ``symbol_hashes`` and ``own_texts`` align with ``symbols``: each symbol's content hash, and the
    text of the lines it owns (its span without the spans of the definitions nested in it), so
    every line of the file is searchable exactly once, in its innermost definition.
    """

    entry: FileEntry
    symbols: tuple[Symbol, ...]
    symbol_hashes: tuple[str, ...]
    own_texts: tuple[str, ...]
    references: tuple[Reference, ...]
    # Definitions folded into an ancestor (parsing/extract.py): no symbols, but named in the index.
    folded: tuple[FoldedDefinition, ...] = ()


@dataclass(frozen=True, slots=True)
class FileState:
    """What the store remembers of a file, to skip re-reading it when nothing changed."""

    size: int
    mtime_ns: int
    content_hash: str


def lf_line_ends(data: bytes) -> bytes:
    """``data`` with each lone CR (old Mac line ends) made an LF, as editors count lines.

    Byte for byte, so every offset stays where it was; CRLF is left alone. Everything that counts
    lines (the parser, :func:`line_offsets`) sees the same lines through this.
    """
    return _LONE_CR.sub(b"\n", data) if b"\r" in data else data


def line_offsets(data: bytes) -> list[int]:
    """Byte offset where each line starts, plus the end of the data: line n (1-based) is
    ``data[offsets[n - 1]:offsets[n]]``, its newline included. A line ends at LF, CRLF or a lone CR."""
    offsets = [0, *accumulate(len(part) + 1 for part in lf_line_ends(data).split(b"\n"))]
    # The last part has no newline after it: either it is empty (the data ends with one) or the
    # data ends there.
    offsets.pop()
    if offsets[-1] != len(data):
        offsets.append(len(data))
    return offsets


def span_digest(data: bytes, offsets: list[int], start_line: int, end_line: int) -> str:
    """The content hash of lines ``start_line..end_line`` (1-based, inclusive) as the index stores it,
    so a pack can tell whether a definition changed since it was indexed."""
    end = min(end_line, len(offsets) - 1)
    start = min(start_line - 1, end)
    return hashlib.blake2b(memoryview(data)[offsets[start] : offsets[end]], digest_size=8).hexdigest()


def content_hash(data: bytes) -> str:
    """A file's content hash as the index stores it."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def own_texts(data: bytes, offsets: list[int], spans: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """For each (start line, end line) span of a file's definitions, the text of the lines whose
    innermost enclosing definition it is: what a definition's body words are made from (store/rows.py),
    and what a publish reads again to redact them (team/redacted.py)."""
    line_count = len(offsets) - 1
    owner = [0] * (line_count + 1)
    # Outer definitions first, so inner ones overwrite the lines they hold.
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], -spans[i][1]))
    for index in order:
        start, end = spans[index][0], min(spans[index][1], line_count)
        owner[start : end + 1] = [index] * max(0, end + 1 - start)
    owned: list[list[bytes]] = [[] for _ in spans]
    for line in range(1, line_count + 1):
        owned[owner[line]].append(data[offsets[line - 1] : offsets[line]])
    return tuple(b"".join(lines).decode("utf-8", "replace") for lines in owned)
