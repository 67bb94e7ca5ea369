"""Parsing files into the rows the index keeps: in a pool of spawned worker processes, or here.

A parse is CPU-bound, and a CPU-bound thread in the server's process delays the watcher's events by
seconds (architecture.md, *Measured on these machines*), so a batch of enough files is parsed by
worker processes while the indexer writes the results that have come back. A worker reads a file
and returns plain tuples (store/rows.py); it never opens the index, so the one writer of an index
folder stays the one process that holds its lock (live/sharing.py). Small batches, and the text of
editor buffers, are parsed in this process, by the same rules.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from itertools import chain
from pathlib import Path

from smartctx.core.files import FileEntry, IndexedFile, content_hash, line_offsets, own_texts, span_digest
from smartctx.core.model import Span, Symbol, SymbolKind
from smartctx.indexing.scanner import SkipReason, classify_content
from smartctx.parsing.extract import SourceParser
from smartctx.store.resolution import module_components, module_name
from smartctx.store.rows import FileRows, file_rows

# Files parsed per worker task: large enough to amortise inter-process overhead, small enough that
# progress moves steadily.
FILES_PER_TASK = 32
# Below this many files to parse, starting worker processes costs more than it saves.
MIN_FILES_FOR_WORKERS = 300
# How often a parser worker checks that the indexer that started it is still alive.
PARENT_CHECK_INTERVAL_S = 0.5


def build_indexed_file(
    path: str,
    language: str,
    data: bytes,
    size: int,
    mtime_ns: int,
    parser: SourceParser,
    *,
    document: str | None = None,
) -> IndexedFile:
    """Parse one file's bytes into what the store keeps: the module node first, then definitions.
    A ``document`` is parsed incrementally from its previous version (see ``SourceParser.parse``)."""
    result = parser.parse(data, language, document=document)
    offsets = line_offsets(data)
    line_count = max(1, len(offsets) - 1)

    components = module_components(path)
    module = Symbol(
        kind=SymbolKind.MODULE,
        name=components[-1] if components else path,
        qualified_name=module_name(path) or path,
        span=Span(1, line_count),
        signature=path,
        doc="",
        parent=None,
    )
    symbols = (module, *result.symbols)
    return IndexedFile(
        entry=FileEntry(path, language, size, mtime_ns, content_hash(data), line_count, result.has_errors),
        symbols=symbols,
        symbol_hashes=tuple(
            span_digest(data, offsets, symbol.span.start_line, symbol.span.end_line) for symbol in symbols
        ),
        own_texts=own_texts(
            data, offsets, [(symbol.span.start_line, symbol.span.end_line) for symbol in symbols]
        ),
        references=result.references,
        folded=result.folded,
    )


def worker_count(configured: int | None, jobs: int) -> int:
    """The worker processes to parse ``jobs`` files with: ``configured`` if set (0 parses here),
    else none for a small batch and up to two otherwise."""
    if configured is not None:
        return configured
    if jobs < MIN_FILES_FOR_WORKERS:
        return 0
    return min(2, os.cpu_count() or 1)


def parse_files(
    root: Path, jobs: list[tuple[str, str]], max_file_bytes: int, workers: int, parser: SourceParser
) -> ParseResults:
    """Start parsing the (path, language) ``jobs`` under ``root``: in ``workers`` worker processes,
    which start at once and so parse while the caller writes, or with ``parser`` here as the results
    are taken when ``workers`` is 0. The results come in the order of ``jobs``."""
    if workers == 0:
        return ParseResults(
            iter([_read_and_parse(root, path, language, max_file_bytes, parser)]) for path, language in jobs
        )
    tasks = [jobs[start : start + FILES_PER_TASK] for start in range(0, len(jobs), FILES_PER_TASK)]
    # Workers are spawned, not forked: a fork of a process that runs other threads (the language
    # server's) can copy a held lock into the child and hang it.
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(os.getpid(),),
    )
    try:
        batches = pool.map(_parse_task, [str(root)] * len(tasks), [max_file_bytes] * len(tasks), tasks)
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    return ParseResults(batches, pool)


_worker_parser: SourceParser | None = None


def _start_worker(parent: int) -> None:
    """Runs first in each parser worker: exit when the parent (the indexer, pid ``parent``) dies.

    A worker of a killed indexer would otherwise wait forever on its task queue, since its siblings
    still hold the queue's other end open. The parent passes its pid rather than the worker asking
    for it: a spawned worker imports for a while before this runs, and if the parent died
    meanwhile, ``os.getppid()`` would already name the process that adopted it.
    """

    def watch_parent() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_INTERVAL_S)
        os._exit(1)

    threading.Thread(target=watch_parent, name="parent-watch", daemon=True).start()


def _parse_task(
    root: str, max_file_bytes: int, files: list[tuple[str, str]]
) -> list[FileRows | tuple[str, SkipReason]]:
    """Read and parse files in a worker; the parser is built once per worker process."""
    global _worker_parser
    if _worker_parser is None:
        _worker_parser = SourceParser()
    return [
        _read_and_parse(Path(root), path, language, max_file_bytes, _worker_parser)
        for path, language in files
    ]


def _read_and_parse(
    root: Path, path: str, language: str, max_file_bytes: int, parser: SourceParser
) -> FileRows | tuple[str, SkipReason]:
    """Read one file and parse it, or say why it is not indexed after all."""
    try:
        full = root / path
        stat = full.stat()
        with full.open("rb") as handle:
            data = handle.read()
    except OSError:
        return (path, SkipReason.UNREADABLE)
    return parse_content(path, language, data, stat.st_mtime_ns, max_file_bytes, parser)


def parse_content(
    path: str,
    language: str,
    data: bytes,
    mtime_ns: int,
    max_file_bytes: int,
    parser: SourceParser,
    *,
    document: str | None = None,
) -> FileRows | tuple[str, SkipReason]:
    """Parse a file's content, or say why it is not indexed: the same rules for disk and buffers."""
    # A file may have grown since the scan looked at its size; a buffer was never looked at.
    if len(data) > max_file_bytes:
        return (path, SkipReason.TOO_LARGE)
    reason = classify_content(data, path)
    if reason is not None:
        return (path, reason)
    return file_rows(build_indexed_file(path, language, data, len(data), mtime_ns, parser, document=document))


class ParseResults(Iterator[FileRows | tuple[str, SkipReason]]):
    """Parse results as they arrive, batch by batch; :meth:`close` stops the worker processes (the
    parses not yet started are dropped), whether the results were all taken or not."""

    def __init__(
        self,
        batches: Iterator[Iterable[FileRows | tuple[str, SkipReason]]],
        pool: ProcessPoolExecutor | None = None,
    ) -> None:
        self._results = chain.from_iterable(batches)
        self._pool = pool

    def __next__(self) -> FileRows | tuple[str, SkipReason]:
        return next(self._results)

    @property
    def in_workers(self) -> bool:
        """Whether worker processes parse (so the caller is free meanwhile)."""
        return self._pool is not None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
