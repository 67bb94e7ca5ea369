"""What the indexer hands the store for one file."""

from __future__ import annotations

from dataclasses import dataclass

from smartctx.core.model import Reference, Symbol


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
    """One parsed file. ``symbols[0]`` is the module node; ``symbol_hashes`` align with ``symbols``."""

    entry: FileEntry
    symbols: tuple[Symbol, ...]
    symbol_hashes: tuple[str, ...]
    references: tuple[Reference, ...]


@dataclass(frozen=True, slots=True)
class FileState:
    """What the store remembers of a file, to skip re-reading it when nothing changed."""

    size: int
    mtime_ns: int
    content_hash: str
