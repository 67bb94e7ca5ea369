"""The workspace folders the server indexes: one live index each, routing by URI, queries over all.

Every folder has its own :class:`LiveIndex` (its own index folder, index thread and watcher), so a
folder is added or removed at run time without touching the others. Per-URI work (buffers, saves,
hovers) goes to the innermost folder that holds the URI. A context request ranks in every folder
and packs once (retrieval/folders.py); with one folder it is exactly the single-folder pipeline.

When there are several folders, every wire id carries its folder's name, ``<name>/<path>::<name>``,
and every item its folder's URI in ``workspaceFolder``; names are the client's folder names, made
unique and free of ``/``.

Queries run on one pool shared by all folders, never on the event loop; they read the folder list
and each folder's buffers as they were when the request arrived (both are replaced, never mutated).

A team's published base (base.py) answers for a folder while the folder's own first index runs,
with the folder's local files laid over it. With ``base_only`` it answers for good: the folder is
watched, never indexed whole, and only the files that differ from the base are indexed, again after
each change; the folder is indexed whole only when no base answers for it (none is published for
its history, or the database fails).
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from smartctx.core.context import (
    ContextOptions,
    ContextPack,
    ContextRequest,
    InvalidRequestError,
    NodeDetail,
    SymbolSummary,
    Warning,
)
from smartctx.core.history import FileSpans, RecentChange
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import Indexer, IndexReport
from smartctx.indexing.sources import WorkspaceSources
from smartctx.live.base import BaseCover, BaseSource
from smartctx.live.edits import with_editor_memory
from smartctx.live.live_index import IndexNotAvailableError, LiveIndex
from smartctx.live.paths import innermost_folder
from smartctx.live.status import StatusCounts, aggregate_status
from smartctx.live.tasks import BackgroundTasks
from smartctx.retrieval.folders import FOLDER_SEPARATOR, FolderIndex, build_context_multi
from smartctx.retrieval.pipeline import build_context
from smartctx.retrieval.symbols import expand_node, symbol_at
from smartctx.store.export import IndexNotSettledError
from smartctx.store.index_store import IndexStore, index_dir_in
from smartctx.store.reader import IndexReader, ReaderUnavailableError

QUERY_THREADS = 2
# How long a request over a folder only watched waits for the first search for its base (the folder
# has no index of its own to answer meanwhile), as a request waits for an index to open.
BASE_WAIT_S = 30.0
# Reads of a base before it counts as failed: a kept connection may have died while idle (a restart,
# an idle timeout), and the next read connects anew.
BASE_READ_ATTEMPTS = 2
# How long a hover waits for git to say who last changed its definition. Blame of a long-lived file
# takes seconds; a hover should not.
HOVER_HISTORY_WAIT_S = 0.25
# The tokenizer that counts an expanded node's tokens (a pack's own default).
DEFAULT_TOKENIZER = ContextOptions().tokenizer
# A folder whose name is empty once made safe for ids.
UNNAMED_FOLDER = "folder"

log = logging.getLogger(__name__)

FolderStatusListener = Callable[[str, StatusCounts], None]
Read = TypeVar("Read")


@dataclass
class Folder:
    """One workspace folder: its URI as the client sent it, its unique name, its live index."""

    uri: str
    name: str
    index: LiveIndex
    # Folder-relative path -> unsaved buffer text. Replaced on every change, never mutated, so a
    # query running on another thread keeps the consistent view it started with.
    overlays: dict[str, bytes] = field(default_factory=dict)
    # The published commit the folder started from, once found, with the folder's local files laid
    # over it (base.py).
    base: BaseCover | None = None
    # What that overlay reflects: the index's count of changes seen, and the unsaved buffers.
    base_as_of: tuple[int, Mapping[str, bytes]] = (0, {})
    # A new overlay is being made (the folder changed since the last one).
    base_relaying: bool = False
    # Set once the first search for the folder's base has ended (decided on under the workspace's lock).
    base_searched: threading.Event = field(default_factory=threading.Event)

    @property
    def root(self) -> Path:
        return self.index.root

    def sources(self) -> WorkspaceSources:
        return WorkspaceSources(self.root, self.overlays)


class Workspace:
    """The folders, in the order the client gave them, and the queries that read them."""

    def __init__(
        self,
        index_dir: Path | None,
        on_status: FolderStatusListener,
        tasks: BackgroundTasks,
        exclude: tuple[str, ...] = (),
        base: BaseSource | None = None,
        base_only: bool = False,
    ) -> None:
        """``base`` finds the published commit that answers for a folder while its first index runs;
        with ``base_only``, for good (the module's docstring)."""
        # A parent folder: each workspace folder's index lives in a sub-folder keyed by its path.
        self._index_dir = index_dir
        self._on_status = on_status
        self._tasks = tasks
        self._exclude = exclude
        self._base = base
        self._base_only = base_only and base is not None
        self.folders: tuple[Folder, ...] = ()
        self.query_threads = ThreadPoolExecutor(
            max_workers=QUERY_THREADS, thread_name_prefix="smartctx-query"
        )
        # One git blame at a time for hovers: a hover that moves over many files queues their
        # blames here instead of starting a git process per file at once.
        self._hover_history = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smartctx-hover-history")
        # Finding a folder's base and laying its local files over it (parsing them, reading the
        # base): off the query threads, which keep answering meanwhile.
        self._base_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smartctx-base")
        self._lock = threading.Lock()
        self._counters: dict[str, TokenCounter] = {}

    @property
    def several(self) -> bool:
        return len(self.folders) > 1

    def add(self, uri: str, fs_path: str, name: str) -> Folder | None:
        """Open (not yet start) the index of a folder; None when it is no folder or already open."""
        if not Path(fs_path).is_dir():
            log.warning("workspace folder %s is not a folder; it is not indexed", uri)
            return None
        root = Path(os.path.realpath(fs_path))
        if any(folder.uri == uri or folder.root == root for folder in self.folders):
            return None
        index_dir = None if self._index_dir is None else index_dir_in(self._index_dir, root)
        index = LiveIndex(
            root, index_dir, lambda counts: self._report(uri, counts), self._tasks, self._exclude
        )
        folder = Folder(uri, self._unique_name(name or root.name), index)
        self.folders = (*self.folders, folder)
        log.info(
            "workspace folder %s (%s), index in %s", root, folder.name, index_dir or "the user cache folder"
        )
        if self._base is not None:
            self._tasks.keep(
                f"looking for the published base of {root}",
                self._base_thread.submit(self._find_base, folder),
            )
        return folder

    def start(self, folder: Folder) -> None:
        """Index an added folder in the background; with ``base_only``, watch it instead, unless the
        search for its base already ended without one."""
        with self._lock:
            # Under the lock that _find_base decides under: it starts the index of a folder watched
            # only when there is no base, and only once the folder is.
            watch = self._base_only and (folder.base is not None or not folder.base_searched.is_set())
            if watch:
                folder.index.watch()
        if not watch:
            folder.index.start()

    def _find_base(self, folder: Folder) -> IndexReport:
        """On the base thread: the published commit that answers for the folder while it is
        indexed (or for good), with the folder's local files (its unsaved buffers among them) laid
        over it. Run again when the folder changed, it replaces the base it found before, or drops
        it when there is none; a folder only watched is then indexed whole. Returns what indexing
        the local files did."""
        assert self._base is not None
        # Read before the folder is: a change from here on makes another overlay.
        as_of = (folder.index.settled_and_changes()[1], folder.overlays)
        cover = self._base.cover(folder.root)
        report = IndexReport()
        if cover is not None and (cover.local_files is not None or as_of[1]):
            try:
                report = self._lay_local_files_over(
                    folder, cover, sorted({*(cover.local_files or ()), *as_of[1]}), as_of[1]
                )
            except (ReaderUnavailableError, IndexNotSettledError) as error:
                log.warning("no base for %s: %s", folder.root, error)
                cover.close()
                cover = None
            except BaseException:
                cover.close()
                raise
        with self._lock:
            # Under the lock remove() takes: a folder removed meanwhile keeps no base.
            removed = folder not in self.folders
            if not removed:
                before, folder.base, folder.base_as_of = folder.base, cover, as_of
                folder.base_searched.set()
                index_whole = cover is None and folder.index.watching_only
        if removed:
            if cover is not None:
                cover.close()
            return report
        if before is not None:
            before.close()
        if cover is not None:
            until = "for good" if self._base_only else "until its own index holds it"
            log.info("%s answers for %s %s", cover.stamp, folder.root, until)
        if index_whole:
            log.warning("no base answers for %s: indexing it whole", folder.root)
            folder.index.start()
        self._report(folder.uri, folder.index.status())
        return report

    def _drop_base(self, folder: Folder, cover: BaseCover, error: ReaderUnavailableError) -> None:
        """The base failed while it answered: the folder's own index answers from now on, or, for a
        folder only watched, the base is looked for again (and the folder indexed whole only if
        there is none)."""
        watched = folder.index.watching_only
        then = "its team's base is looked for again" if watched else "its own index answers from now on"
        log.warning("%s; %s: %s", error, folder.root, then)
        with self._lock:
            dropped = folder.base is cover
            if dropped:
                folder.base = None
        if not dropped:
            return
        cover.close()
        if watched:
            self._relay_soon(folder)
        self._report(folder.uri, folder.index.status())

    def _report(self, uri: str, counts: StatusCounts) -> None:
        folder = next((folder for folder in self.folders if folder.uri == uri), None)
        self._on_status(uri, counts if folder is None else self._status_of(folder, counts))

    def folder_status(self, folder: Folder) -> StatusCounts:
        """One folder's status as the client is told it (naming its base while the base answers)."""
        return self._status_of(folder, folder.index.status())

    def _status_of(self, folder: Folder, counts: StatusCounts) -> StatusCounts:
        """A folder's index status, naming its base while the base answers. A folder only watched is
        starting until its base is found, then not indexing at all."""
        cover = folder.base
        if folder.index.watching_only:
            return replace(counts, indexing=cover is None, base=None if cover is None else cover.stamp)
        if cover is not None and not folder.index.settled_and_changes()[0]:
            return replace(counts, base=cover.stamp)
        return counts

    def _lay_local_files_over(
        self, folder: Folder, cover: BaseCover, paths: list[str], buffers: Mapping[str, bytes]
    ) -> IndexReport:
        """Index the folder's files that differ from its base alone (an unsaved buffer from its
        text), under the folder's own exclude patterns, in a folder of their own that is gone once
        the cover has read them."""
        started = time.perf_counter()
        with (
            tempfile.TemporaryDirectory(prefix="smartctx-overlay-") as overlay_dir,
            closing(IndexStore(folder.root, Path(overlay_dir))) as store,
        ):
            report = Indexer(folder.root, store, folder.index.config).update_paths(
                paths, buffers=buffers, reconcile_from=None
            )
            indexed = time.perf_counter()
            cover.lay_over(store.path, paths)
        log.info(
            "%s: %d local files of %s indexed in %.1f s and laid over it in %.1f s",
            cover.stamp,
            len(paths),
            folder.root,
            indexed - started,
            time.perf_counter() - indexed,
        )
        return report

    def _answering_base(self, folder: Folder) -> BaseCover | None:
        """The folder's base, while it answers for the folder: until the folder's own index has once
        held the whole folder. When the folder changed since the base's overlay was made (a file on
        disk, an unsaved buffer), another is made in the background, and this one answers meanwhile,
        a moment behind, as the folder's own index is between a save and its update."""
        cover = folder.base
        if cover is None:
            return None
        settled, changes = folder.index.settled_and_changes()
        if settled:
            return None
        if (changes, folder.overlays) != folder.base_as_of:
            self._relay_soon(folder)
        return cover

    def _relay_soon(self, folder: Folder) -> None:
        """Look for the folder's base and lay its local files over it again, in the background,
        unless that is under way."""
        with self._lock:
            relay = not folder.base_relaying
            folder.base_relaying = True
        if relay:
            self._tasks.keep(
                f"laying the local files of {folder.root} over its base again",
                self._base_thread.submit(self._relay_base, folder),
            )

    def _waiting_base(self, folder: Folder) -> BaseCover:
        """The base of a folder only watched, once its first search ends (waiting up to
        ``BASE_WAIT_S``): its own index is not there to answer."""
        folder.base_searched.wait(BASE_WAIT_S)
        cover = self._answering_base(folder)
        if cover is None:
            raise IndexNotAvailableError(
                f"{folder.root} is answered from its team's base, which is being looked for;"
                " try again shortly"
            )
        return cover

    def _relay_base(self, folder: Folder) -> None:
        try:
            self._find_base(folder)
        finally:
            folder.base_relaying = False

    def set_exclude(self, exclude: tuple[str, ...]) -> None:
        """The user's exclude patterns changed: every folder re-indexes under them."""
        self._exclude = exclude
        for folder in self.folders:
            folder.index.set_exclude(exclude)

    def remove(self, uri: str) -> Folder | None:
        """Close a folder's index; its items leave the next pack."""
        with self._lock:
            removed = next((folder for folder in self.folders if folder.uri == uri), None)
            if removed is None:
                return None
            self.folders = tuple(folder for folder in self.folders if folder is not removed)
            base, removed.base = removed.base, None
        removed.index.close()
        if base is not None:
            base.close()
        log.info("workspace folder %s removed", removed.root)
        return removed

    def folder_of(self, uri: str) -> tuple[Folder, str] | None:
        """The innermost folder holding a document URI, and the document's path inside it."""
        folders = self.folders
        found = innermost_folder([folder.root for folder in folders], uri)
        if found is None:
            log.debug("ignoring %s: not inside a workspace folder", uri)
            return None
        position, path = found
        return folders[position], path

    def folder_named(self, name_or_uri: str) -> Folder | None:
        return next((f for f in self.folders if name_or_uri in (f.name, f.uri)), None)

    def status(self, reported: dict[str, StatusCounts] | None = None) -> StatusCounts:
        """Every folder's status as one; ``reported`` overrides a folder's current one by URI."""
        known = reported or {}
        return aggregate_status(
            [known.get(folder.uri) or self.folder_status(folder) for folder in self.folders]
        )

    def context(
        self,
        folders: Sequence[Folder],
        requests: Sequence[ContextRequest],
        should_cancel: Callable[[], bool],
    ) -> ContextPack:
        """One pack over ``folders`` (one request each, differing in focus); on a query thread.

        Each folder's focus gains what the server saw of the editing there (``live/edits.py``), and
        a budget stated in another model's tokens is scaled to the tokenizer's (``scaled``).

        With several folders, a folder whose index cannot be opened is left out with a
        ``folder-unavailable`` warning; the request fails only when no folder can answer.
        """
        counter = self._counter(requests[0].options.tokenizer)
        requests = [
            replace(
                request,
                options=request.options.scaled(),
                focus=with_editor_memory(request.focus, folder.index.recent_edits(), folder.overlays),
            )
            for folder, request in zip(folders, requests, strict=True)
        ]
        if len(folders) == 1:
            folder = folders[0]
            pack, cover = self._read(
                folder,
                lambda reader, cover: build_context(
                    requests[0],
                    reader,
                    counter,
                    folder.sources(),
                    history=folder.index.history,
                    pending_files=0 if cover is not None else folder.index.status().pending_files,
                    should_cancel=should_cancel,
                ),
            )
            if cover is None:
                return pack
            return replace(pack, warnings=(self._answered_from(folder, cover), *pack.warnings))
        # As _read tries a base: a kept connection may have died while idle, and the next try
        # connects anew.
        for _attempt in range(BASE_READ_ATTEMPTS):
            try:
                return self._context_of_several(folders, requests, counter, should_cancel)
            except _BaseFailedError as error:
                failed = error
        # Which folder's base failed is not known (they share the database): each is dropped.
        for folder, cover in failed.covers:
            self._drop_base(folder, cover, failed.error)
        return self._context_of_several(folders, requests, counter, should_cancel)

    def _context_of_several(
        self,
        folders: Sequence[Folder],
        requests: Sequence[ContextRequest],
        counter: TokenCounter,
        should_cancel: Callable[[], bool],
    ) -> ContextPack:
        with ExitStack() as stack:
            inputs: list[FolderIndex] = []
            unavailable: list[Warning] = []
            answered: list[Warning] = []
            covers: list[tuple[Folder, BaseCover]] = []
            for folder, request in zip(folders, requests, strict=True):
                cover = self._answering_base(folder)
                try:
                    if cover is None and folder.index.watching_only:
                        cover = self._waiting_base(folder)
                    if cover is not None:
                        covers.append((folder, cover))
                        snapshot: IndexReader = stack.enter_context(cover.snapshot())
                        answered.append(self._answered_from(folder, cover))
                    else:
                        snapshot = stack.enter_context(folder.index.snapshot())
                except IndexNotAvailableError as error:
                    unavailable.append(Warning("folder-unavailable", str(error)))
                    continue
                except ReaderUnavailableError as error:
                    raise _BaseFailedError(covers, error) from error
                inputs.append(
                    FolderIndex(
                        name=folder.name,
                        label=folder.uri,
                        snapshot=snapshot,
                        sources=folder.sources(),
                        focus=request.focus,
                        history=folder.index.history,
                        pending_files=0 if cover is not None else folder.index.status().pending_files,
                    )
                )
            if not inputs:
                raise IndexNotAvailableError("; ".join(warning.message for warning in unavailable))
            try:
                pack = build_context_multi(requests[0], inputs, counter, should_cancel=should_cancel)
            except ReaderUnavailableError as error:
                raise _BaseFailedError(covers, error) from error
        return replace(pack, warnings=(*answered, *unavailable, *pack.warnings))

    def _answered_from(self, folder: Folder, cover: BaseCover) -> Warning:
        why = (
            f"only the files that differ from it are indexed in {folder.root}"
            if folder.index.watching_only
            else f"the index of {folder.root} is being built"
        )
        return Warning("answered-from-base", f"answered from the team's {cover.stamp}: {why}")

    def _read(
        self, folder: Folder, read: Callable[[IndexReader, BaseCover | None], Read]
    ) -> tuple[Read, BaseCover | None]:
        """``read`` over the folder's base while it answers for the folder, else over the folder's
        own index; with the base that answered. A base that fails is dropped and the folder's own
        index answers, from then on."""
        cover = self._answering_base(folder)
        if cover is None and folder.index.watching_only:
            cover = self._waiting_base(folder)
        if cover is not None:
            for _attempt in range(BASE_READ_ATTEMPTS):
                try:
                    with cover.snapshot() as reader:
                        return read(reader, cover), cover
                except ReaderUnavailableError as error:
                    failure = error
            self._drop_base(folder, cover, failure)
            if folder.index.watching_only:
                raise IndexNotAvailableError(
                    f"{failure}; the team's base of {folder.root} is looked for again"
                )
        with folder.index.snapshot() as snapshot:
            return read(snapshot, None), None

    def expand(self, folders: Sequence[Folder], wire_id: str) -> NodeDetail:
        """One node in full, as ``smartctx/expand`` answers it; on a query thread."""
        folder, local_id = self._route_id(folders, wire_id)
        detail, _ = self._read(
            folder,
            lambda reader, _: expand_node(
                reader, folder.sources(), self._counter(DEFAULT_TOKENIZER), local_id
            ),
        )
        if len(folders) == 1:
            return detail
        return replace(detail, id=folder.name + FOLDER_SEPARATOR + detail.id, workspace_folder=folder.uri)

    def symbol_at(self, folder: Folder, path: str, line: int, word: str) -> SymbolSummary | None:
        """What a hover over ``word`` on 1-based ``line`` of ``path`` shows, with the latest change
        of its lines when git knows one; on a query thread."""
        symbol, _ = self._read(folder, lambda reader, _: symbol_at(reader, path, line, word))
        if symbol is None:
            return None
        symbol = replace(symbol, latest_change=self._latest_change_soon(folder, symbol))
        if not self.several:
            return symbol
        return replace(symbol, id=folder.name + FOLDER_SEPARATOR + symbol.id)

    def _latest_change_soon(self, folder: Folder, symbol: SymbolSummary) -> RecentChange | None:
        """The latest change if git answers within ``HOVER_HISTORY_WAIT_S``, else None: the blame
        goes on, and its cached answer is there for the next hover over that file."""
        future = self._hover_history.submit(_latest_change, folder, symbol)
        self._tasks.keep(f"git history of {symbol.file_path} for a hover", future)
        try:
            return future.result(timeout=HOVER_HISTORY_WAIT_S)
        except FutureTimeoutError:
            return None

    def reindex(self, folders: Sequence[Folder]) -> list[Future[IndexReport | None]]:
        """Reconcile each folder's index; a folder only watched lays its local files over its base
        again instead, as they are now."""
        return [
            self._base_thread.submit(self._lay_over_again, folder)
            if folder.index.watching_only
            else folder.index.reindex()
            for folder in folders
        ]

    def _lay_over_again(self, folder: Folder) -> IndexReport | None:
        return self._find_base(folder)

    def close(self) -> None:
        with self._lock:
            folders, self.folders = self.folders, ()
            bases = [folder.base for folder in folders]
            for folder in folders:
                folder.base = None
        for folder in folders:
            folder.index.close()
        for base in bases:
            if base is not None:
                base.close()
        self.query_threads.shutdown(wait=False, cancel_futures=True)
        self._hover_history.shutdown(wait=False, cancel_futures=True)
        self._base_thread.shutdown(wait=False, cancel_futures=True)

    def _route_id(self, folders: Sequence[Folder], wire_id: str) -> tuple[Folder, str]:
        if len(folders) == 1:
            return folders[0], wire_id
        name, _, local_id = wire_id.partition(FOLDER_SEPARATOR)
        folder = next((f for f in folders if f.name == name), None)
        if folder is None:
            names = ", ".join(f.name for f in folders)
            raise InvalidRequestError(
                f"id {wire_id!r} does not start with a workspace folder name ({names}): use the id of a pack "
                f'item, like "{folders[0].name}/pkg/mod.py::Class.method"'
            )
        return folder, local_id

    def _unique_name(self, wanted: str) -> str:
        """The folder's name as an id prefix: without ``/``, and unique among the folders."""
        base = wanted.replace(FOLDER_SEPARATOR, "-").replace("\\", "-").strip() or UNNAMED_FOLDER
        taken = {folder.name for folder in self.folders}
        name, suffix = base, 2
        while name in taken:
            name, suffix = f"{base}-{suffix}", suffix + 1
        return name

    def _counter(self, tokenizer: str) -> TokenCounter:
        with self._lock:
            counter = self._counters.get(tokenizer)
        if counter is None:
            counter = TokenCounter(tokenizer)
            with self._lock:
                self._counters.setdefault(tokenizer, counter)
        return counter


def _latest_change(folder: Folder, symbol: SymbolSummary) -> RecentChange | None:
    """The newest change of the definition's lines. The first blame of a long-lived file takes
    seconds on django's largest files; later ones over the same content hit the history's cache."""
    content = folder.sources().read(symbol.file_path)
    if content is None:
        return None
    span = (symbol.file_path, symbol.start_line, symbol.end_line)
    answer = folder.index.history.recent_changes([FileSpans(span[0], content, (span[1:],))], None, 1)
    latest = answer.changes.get(span, ())
    return latest[0] if latest else None


class _BaseFailedError(Exception):
    """A base that answered for some of a request's folders failed during it."""

    def __init__(self, covers: Sequence[tuple[Folder, BaseCover]], error: ReaderUnavailableError) -> None:
        super().__init__(str(error))
        self.covers = tuple(covers)
        self.error = error
