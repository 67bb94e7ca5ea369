"""Bring the index in line with the workspace: scan, parse what changed, write, resolve, score.

Reconciling is the one way the index changes: a first index, a re-run, and (later) a burst of file
events all go through :meth:`Indexer.reconcile`, so an incremental index can only ever equal a fresh
one. Unchanged files (same size and mtime, or same content hash) are never parsed again. The
parsing itself, in worker processes for a large batch, is parser_pool.py's.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path

from smartctx.core.files import FileState, content_hash
from smartctx.indexing.git import git_head
from smartctx.indexing.parser_pool import ParseResults, parse_content, parse_files, worker_count
from smartctx.indexing.past_commits import read_past_commits, window_stamp
from smartctx.indexing.scanner import (
    IgnoreRules,
    ScanConfig,
    ScannedFile,
    SkipReason,
    check_path,
    is_decodable,
    printable_path,
    scan,
    undecodable_entry,
)
from smartctx.parsing.extract import SourceParser
from smartctx.parsing.languages import is_source, language_for_path
from smartctx.store.index_store import IndexStore
from smartctx.store.past_commits import PAST_COMMITS_KEY
from smartctx.store.rows import FileRows

# A first index commits every this many files, so it can be read (and survives a crash) part way.
FILES_PER_INITIAL_COMMIT = 1000

# A file whose mtime lies this close to (or after) the start of the previous scan may have changed
# again within the file system's timestamp granularity without its size or mtime changing (git's
# "racy clean" problem); such files are re-hashed instead of trusted.
RACY_MARGIN_NS = 2_000_000_000

# Parsed files handed to the store at a time inside one transaction.
FILES_PER_WRITE = 200

# A batch of this many paths (a branch switch) is applied by a full reconcile: one walk of the tree
# (0.8 s on django) gives every verdict, where checking paths one by one cost 2.5 ms each (14.6 s for
# the 5,838 paths of a django checkout) and finding files below each gone path cost 1 ms more.
RECONCILE_FROM_PATHS = 500

# Files parsed or deleted before the lexical index is built again from its rows (upkeep.py's
# compact_search): its BM25 statistics keep counting deleted documents until then, so a large live
# index would drift from the scores a fresh one gives.
COMPACT_AFTER_FILES = 1_000
CHANGED_SINCE_COMPACTION_KEY = "files_changed_since_compaction"
# A first index commits its lexical rows once per chunk, each commit deleting the last one's
# generation marker, so every segment holds a deleted document. Once there are this many segments
# tantivy merges them (its LogMergePolicy's default), and it counts the tokens of segments merged
# with deletes from its one-byte length buckets: the average length is then no longer the exact one
# (195 words against 201.5 on the 104k-file monorepo, scores up to 3 % apart from a fresh build's
# and from a published base's). A first index of this many chunks is built once more in one commit
# (41 s on the monorepo's 505 s cold index; django's three chunks are never merged).
LEXICAL_MERGE_COMMITS = 8

# The mtime recorded for a file indexed from an unsaved editor buffer. No file on disk has it, so the
# next reconcile or update of that path always re-reads the disk file and compares content hashes:
# the disk wins again as soon as the buffer is closed, or after a restart.
UNSAVED_MTIME_NS = -1


# The meta value listing the entries skipped for a name that is not UTF-8 (scanner.py), by their
# printable paths, as a JSON array: kept with the index so that every process reading it (a
# follower, ``smartctx status``) can say which files are missing and why.
UNDECODABLE_NAMES_KEY = "undecodable_names"


def undecodable_names(meta_value: str | None) -> tuple[str, ...]:
    """The printable paths an index's ``UNDECODABLE_NAMES_KEY`` value lists."""
    if not meta_value:
        return ()
    try:
        names = json.loads(meta_value)
    except ValueError:
        return ()
    return tuple(str(name) for name in names) if isinstance(names, list) else ()


# Stages of IndexReport.stage_seconds within a batch: waiting for the parsers, and writing.
PARSE_WAIT_STAGE = "parse wait"
WRITE_STAGE = "write"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class IndexConfig:
    scan: ScanConfig = field(default_factory=ScanConfig)
    # Worker processes for parsing; None picks by core count, 0 parses in this process.
    workers: int | None = None
    # False leaves the references unresolved and the scores uncomputed: a shard of a commit published
    # in parts, whose finish step resolves them against every part (team/finish.py).
    resolve: bool = True


@dataclass
class IndexReport:
    """What one reconcile did, for the CLI summary and the benchmarks."""

    files_total: int = 0
    files_parsed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    # The entries skipped for a name that is not UTF-8, by printable path: all the index knows of
    # after this reconcile or batch.
    undecodable_names: tuple[str, ...] = ()
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def add_seconds(self, stage: str, seconds: float) -> None:
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds


def _reporting(
    results: Iterator[FileRows | tuple[str, SkipReason]], total: int, progress: Progress
) -> Iterator[FileRows | tuple[str, SkipReason]]:
    progress(0, total)
    for done, result in enumerate(results, start=1):
        yield result
        progress(done, total)


def _timed(
    results: Iterable[FileRows | tuple[str, SkipReason]], report: IndexReport
) -> Iterator[FileRows | tuple[str, SkipReason]]:
    """The results, adding the time spent waiting for each to the report's parse-wait stage."""
    iterator = iter(results)
    while True:
        started = time.perf_counter()
        try:
            result = next(iterator)
        except StopIteration:
            return
        finally:
            report.add_seconds(PARSE_WAIT_STAGE, time.perf_counter() - started)
        yield result


class Indexer:
    """Reconciles one workspace folder with its index."""

    def __init__(self, root: Path, store: IndexStore, config: IndexConfig | None = None) -> None:
        self.root = root
        self.store = store
        self.config = config or IndexConfig()
        self._parser = SourceParser()
        self._rules: IgnoreRules | None = None

    def reconcile(self, progress: Progress | None = None) -> IndexReport:
        """Scan the workspace, apply every difference from the index, then resolve and score."""
        started = time.perf_counter()
        report = IndexReport()
        writer = self.store.writer
        scan_started_ns = time.time_ns()
        racy_after_ns = int(writer.meta("scan_started_ns") or 0) - RACY_MARGIN_NS
        self._rules = IgnoreRules.load(self.root, self.config.scan)
        scanned = scan(self.root, self.config.scan, is_source, self._rules)
        report.stage_seconds["scan"] = time.perf_counter() - started
        report.skipped.update({reason.value: count for reason, count in scanned.skipped.items() if count})
        known = writer.known_files()
        initial = not known
        present = {file.path for file in scanned.files}
        deleted = sorted(path for path in known if path not in present)
        to_parse: list[ScannedFile] = []
        touched: list[tuple[ScannedFile, FileState]] = []
        for file in scanned.files:
            state = known.get(file.path)
            if state is None:
                to_parse.append(file)
            elif (state.size, state.mtime_ns) != (file.size, file.mtime_ns) or file.mtime_ns >= racy_after_ns:
                touched.append((file, state))
        changed, unchanged_content = self._split_by_content(touched)
        to_parse.extend(changed)
        report.files_unchanged = len(scanned.files) - len(to_parse)
        report.files_deleted = len(deleted)
        parse_started = time.perf_counter()
        parsing = self._parse_all(to_parse)
        results: Iterator[FileRows | tuple[str, SkipReason]] = parsing
        if progress is not None:
            results = _reporting(results, len(to_parse), progress)
        with closing(parsing):
            if initial:
                # A first index commits in chunks so it is readable, and survives a crash, part way;
                # the chunks are taken here, so the wait for the parsers is counted here.
                results = _timed(results, report)
                while chunk := list(islice(results, FILES_PER_INITIAL_COMMIT)):
                    self._write(chunk, (), (), report)
            else:
                # Any later reconcile, a branch switch included, lands as one transaction.
                self._write(
                    results,
                    deleted,
                    unchanged_content,
                    report,
                    [file.path for file in to_parse] if parsing.in_workers else [],
                )
        report.stage_seconds["parse+write"] = time.perf_counter() - parse_started
        self.finish_pending(report, initial=initial)
        head = git_head(self.root)
        self.refresh_past_commits(head, report)
        writer.set_meta(
            [
                ("scan_started_ns", str(scan_started_ns)),
                ("last_indexed", time.strftime("%Y-%m-%dT%H:%M:%S%z")),
                ("git_head", head or ""),
                (UNDECODABLE_NAMES_KEY, json.dumps(scanned.undecodable)),
            ]
        )
        report.undecodable_names = scanned.undecodable
        # A reconcile (a first index, a branch switch) is the batch that fills the log; one-file
        # updates leave it to SQLite's own checkpoints, which keep it under its size limit.
        writer.truncate_log()
        report.files_total = len(writer.known_files())
        report.seconds = time.perf_counter() - started
        return report

    def refresh_past_commits(self, head: str | None, report: IndexReport) -> None:
        """Read the window of past commits again if the checked-out commit is not the one it ends at
        (outside git, or when git fails, the window stays as it is)."""
        if head is None or self.store.writer.meta(PAST_COMMITS_KEY) == window_stamp(head):
            return
        started = time.perf_counter()
        commits = read_past_commits(self.root, head)
        if commits is not None:
            self.store.writer.replace_past_commits(window_stamp(head), commits)
        report.stage_seconds["past commits"] = time.perf_counter() - started

    def update_paths(
        self,
        paths: Iterable[str],
        *,
        buffers: Mapping[str, bytes] | None = None,
        recompute_scores: bool = True,
        reconcile_from: int | None = RECONCILE_FROM_PATHS,
    ) -> IndexReport:
        """Apply changes to just these workspace-relative paths (a save, a watcher burst) as one batch.

        Each path gets the same verdict a full scan would give it; a path that is gone, or now
        ignored, leaves the index together with every indexed file below it. A path that is a folder
        (one created, or moved in) is reconciled as a subtree: its files are scanned and indexed
        files below it that are no longer there leave. With ``recompute_scores=False`` the scores
        stay marked dirty for a later, off-request recompute. A batch of ``reconcile_from`` paths
        or more is applied by :meth:`reconcile`, which gives the same result faster; the buffers are
        then applied on top of it. With ``reconcile_from=None`` the paths are all there is to index
        (an overlay on a team's base, of the files that differ from it): the rest of the folder is
        never scanned, however many they are.

        A path in ``buffers`` (unsaved editor text) that the scan would index is indexed from that
        text instead of the disk, and recorded with :data:`UNSAVED_MTIME_NS` so that the disk content
        wins again at the next update or reconcile without the buffer. Text whose hash equals what
        is indexed costs one hash and one row lookup.
        """
        buffers = buffers or {}
        unique = set(paths)
        # A name that is not UTF-8 (from the watcher) can reach no table: it only changes the list
        # of such names (and a buffer's path, read from a URI, always decodes).
        unreadable = {path for path in unique if not is_decodable(path)}
        unique -= unreadable
        buffers = {path: text for path, text in buffers.items() if is_decodable(path)}
        if reconcile_from is not None and len(unique) >= reconcile_from:
            reconciled = self.reconcile()
            if not buffers:
                return reconciled
            unique = set()
        started = time.perf_counter()
        report = IndexReport()
        writer = self.store.writer
        if self._rules is None:
            self._rules = IgnoreRules.load(self.root, self.config.scan)
        verdicts: dict[str, ScannedFile | SkipReason | None] = {}
        deleted: set[str] = set()
        names_found: set[str] = set()
        for path in sorted({*unique, *buffers}):
            if path not in buffers:
                # Read from disk again (its buffer closed, or the disk changed): no tree to reuse.
                self._parser.forget(path)
            is_folder = path not in buffers and (self.root / path).is_dir()
            if path and is_folder and not (self.root / path).is_symlink():
                subtree = scan(self.root, self.config.scan, is_source, self._rules, under=path)
                verdicts.update((file.path, file) for file in subtree.files)
                deleted.update(writer.paths_under(path))
                names_found.update(subtree.undecodable)
            else:
                verdicts[path] = check_path(self.root, path, self.config.scan, is_source, self._rules)
        to_parse: list[ScannedFile] = []
        touched: list[tuple[ScannedFile, FileState]] = []
        from_buffers: list[FileRows | tuple[str, SkipReason]] = []
        for path, verdict in verdicts.items():
            state = writer.file_state(path)
            if isinstance(verdict, ScannedFile) and path in buffers:
                parsed = self._parse_buffer(path, buffers[path], state)
                if parsed is None:
                    report.files_unchanged += 1
                else:
                    from_buffers.append(parsed)
            elif not isinstance(verdict, ScannedFile):
                deleted.update(writer.paths_under(path))
                if state is not None:
                    deleted.add(path)
                if verdict is not None:
                    report.skipped[verdict.value] += 1
            elif state is None:
                to_parse.append(verdict)
            else:
                touched.append((verdict, state))
        # A file found in a scanned folder stays, whatever the folder's former contents were.
        deleted.difference_update(path for path, found in verdicts.items() if isinstance(found, ScannedFile))
        entries = {entry for path in unreadable if (entry := undecodable_entry(self.root, path, self._rules))}
        if entries:
            report.skipped[SkipReason.UNDECODABLE_NAME.value] += len(entries)
        report.undecodable_names = self._update_undecodable_names(
            [*unique, *unreadable], names_found | entries
        )
        changed, unchanged_content = self._split_by_content(touched)
        to_parse.extend(changed)
        to_parse.sort(key=lambda file: file.path)
        report.files_unchanged += len(unchanged_content)
        report.files_deleted = len(deleted)
        if not (to_parse or deleted or unchanged_content or from_buffers):
            report.seconds = time.perf_counter() - started
            return report
        parsing = self._parse_all(to_parse)
        with closing(parsing):
            self._write(
                chain(parsing, from_buffers),
                sorted(deleted),
                unchanged_content,
                report,
                [file.path for file in to_parse] if parsing.in_workers else [],
            )
        self.finish_pending(report, recompute_scores=recompute_scores)
        report.seconds = time.perf_counter() - started
        return report

    def _update_undecodable_names(self, paths: Iterable[str], found: set[str]) -> tuple[str, ...]:
        """The index's list of names that are not UTF-8 after a batch of ``paths``: what it held at
        or below each path leaves, and what the batch ``found`` there (scans of folders, the entries
        that paths from the watcher name) joins, as a full scan would list them."""
        writer = self.store.writer
        before = undecodable_names(writer.meta(UNDECODABLE_NAMES_KEY))
        names = set(before)
        for path in paths:
            # A path below a name that is not UTF-8 stands for that name, as the scan lists it.
            parts = path.split("/")
            depth = next((index for index, part in enumerate(parts, 1) if not is_decodable(part)), len(parts))
            covered = printable_path("/".join(parts[:depth]))
            names = {name for name in names if name != covered and not name.startswith(covered + "/")}
        after = tuple(sorted(names | found))
        if after != before:
            writer.set_meta([(UNDECODABLE_NAMES_KEY, json.dumps(after))])
        return after

    def finish_pending(
        self, report: IndexReport, *, recompute_scores: bool = True, initial: bool = False
    ) -> None:
        """Resolve references and recompute scores if a batch (this one or an interrupted one) left
        work behind; build the lexical index again after a first index of many chunks, or once
        enough files have changed since the last compaction; give the disk back once enough of the
        index file is free pages."""
        writer = self.store.writer
        if self.config.resolve:
            resolve_started = time.perf_counter()
            writer.resolve_pending()
            report.stage_seconds["resolve"] = time.perf_counter() - resolve_started
        if recompute_scores and self.config.resolve and writer.scores_dirty():
            scores_started = time.perf_counter()
            writer.recompute_scores()
            report.stage_seconds["scores"] = time.perf_counter() - scores_started
        # A first index deletes no rows, so it does not count towards a compaction; but its chunks'
        # generation markers make a large one inexact all the same.
        changed = int(writer.meta(CHANGED_SINCE_COMPACTION_KEY) or 0)
        if not initial:
            changed += report.files_parsed + report.files_deleted
        if initial and writer.search_generation() >= LEXICAL_MERGE_COMMITS:
            rebuild_started = time.perf_counter()
            writer.rebuild_lexical()
            report.stage_seconds["lexical"] = time.perf_counter() - rebuild_started
        elif changed >= COMPACT_AFTER_FILES:
            compact_started = time.perf_counter()
            writer.compact_search()
            report.stage_seconds["compact"] = time.perf_counter() - compact_started
            changed = 0
        writer.set_meta([(CHANGED_SINCE_COMPACTION_KEY, str(changed))])
        vacuum_started = time.perf_counter()
        if writer.reclaim_space():
            report.stage_seconds["vacuum"] = time.perf_counter() - vacuum_started

    def _parse_buffer(
        self, path: str, data: bytes, state: FileState | None
    ) -> FileRows | tuple[str, SkipReason] | None:
        """A buffer's rows, or None when its content is what the index already holds."""
        if state is not None and state.content_hash == content_hash(data):
            return None
        language = language_for_path(path)
        if language is None:
            return None
        # An open buffer changes a few characters at a time: parse it from its previous tree.
        return parse_content(
            path,
            language,
            data,
            UNSAVED_MTIME_NS,
            self.config.scan.max_file_bytes,
            self._parser,
            document=path,
        )

    def _split_by_content(
        self, touched: Iterable[tuple[ScannedFile, FileState]]
    ) -> tuple[list[ScannedFile], list[ScannedFile]]:
        """Files whose content really changed, and files only touched (same hash: no parse needed)."""
        changed: list[ScannedFile] = []
        unchanged: list[ScannedFile] = []
        for file, state in touched:
            try:
                data = (self.root / file.path).read_bytes()
            except OSError:
                changed.append(file)
                continue
            (unchanged if content_hash(data) == state.content_hash else changed).append(file)
        return changed, unchanged

    def _write(
        self,
        results: Iterable[FileRows | tuple[str, SkipReason]],
        deleted: Sequence[str],
        unchanged_content: Iterable[ScannedFile],
        report: IndexReport,
        parsing: Sequence[str] = (),
    ) -> None:
        """Apply one batch; ``parsing`` names the files whose ``results`` the workers are computing
        meanwhile, so their old search rows go first, all at once, while the workers parse. Files
        parsed here are not named: their rows are rewritten as a difference (``Batch.put_files``),
        which needs the old ones.

        The time spent here is reported in two stages: waiting for parse results (``parse wait``,
        which is the parsing itself when it runs in this process) and everything else (``write``).
        """
        started = time.perf_counter()
        waited_before = report.stage_seconds.get(PARSE_WAIT_STAGE, 0.0)
        results = _timed(results, report)
        with self.store.writer.batch() as batch:
            batch.drop_search_rows([*deleted, *parsing])
            for path in deleted:
                batch.delete_file(path)
            for file in unchanged_content:
                batch.touch_file(file.path, file.size, file.mtime_ns)
            parsed: list[FileRows] = []
            for result in results:
                if isinstance(result, FileRows):
                    parsed.append(result)
                else:
                    path, reason = result
                    batch.delete_file(path)
                    report.skipped[reason.value] += 1
                # Written in slices, so a large batch never holds every parsed file in memory.
                if len(parsed) >= FILES_PER_WRITE:
                    batch.put_files(parsed)
                    report.files_parsed += len(parsed)
                    parsed = []
            batch.put_files(parsed)
            report.files_parsed += len(parsed)
        waited = report.stage_seconds.get(PARSE_WAIT_STAGE, 0.0) - waited_before
        report.add_seconds(WRITE_STAGE, time.perf_counter() - started - waited)

    def _parse_all(self, files: list[ScannedFile]) -> ParseResults:
        """Start parsing files (parser_pool.py); the results come in path order."""
        jobs: list[tuple[str, str]] = []
        for file in files:
            language = language_for_path(file.path)
            if language is not None:
                jobs.append((file.path, language))
        workers = worker_count(self.config.workers, len(jobs))
        return parse_files(self.root, jobs, self.config.scan.max_file_bytes, workers, self._parser)
