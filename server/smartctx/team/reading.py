"""``--base URL`` and ``baseIndex``: answering from a team's published base, or saying why the local
index answers.

:func:`open_base` connects (read-only is enough), finds the published commit nearest to HEAD among
its ancestors (base.py), and opens it as an index (base_snapshot.py) with the work tree's local
files laid over it (overlay.py, merged.py): the caller indexes those files alone, as the team package
never parses, and hands over that index. Otherwise it says, in one sentence, why the local index
answers instead: the server is unreachable, nothing of this repository is published, no published
commit is an ancestor of HEAD, or the work tree differs from every published commit in more files
than an overlay takes. The command line asks it once per answer; the servers through
:class:`TeamBase`, once per workspace folder, whose :class:`PublishedCover` then answers while the
folder's first index runs (live/base.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import TupleRow

from smartctx.store.reader import IndexReader, ReaderUnavailableError
from smartctx.team import PublishError
from smartctx.team.base import SHORT_SHA, BaseChoice, PublishedCommit, choose_base, published_commits
from smartctx.team.base_snapshot import BaseSnapshot, CommitFacts
from smartctx.team.checkout import repository_identity
from smartctx.team.database import READ_APPLICATION, DatabaseAddress, connect, parse_url, reported
from smartctx.team.merged import MergedReader, PreparedOverlay
from smartctx.team.overlay import Overlay, read_overlay

# Local files a message names before it counts the rest.
PATHS_NAMED = 3
# Connections a base keeps open between requests: one per query thread (live/workspace.py).
KEPT_CONNECTIONS = 2
# Local files an overlay takes. Past this many a branch is far from every published commit, and its
# own index is the better answer: an overlay is held in memory and resolved again on each change.
MAX_OVERLAY_FILES = 5_000

log = logging.getLogger(__name__)


@dataclass
class BaseReading:
    """What ``--base`` found: the base to answer from, or why there is none. Close it."""

    choice: BaseChoice | None
    # Why the local index answers, in a sentence (None when the base does).
    fallback: str | None
    connection: psycopg.Connection[TupleRow] | None = None
    # False when the server could not be reached or failed: a problem to tell, not a tree to index.
    reachable: bool = True

    @property
    def answers(self) -> bool:
        """Whether the base answers (else ``fallback`` says why the local index does)."""
        return self.fallback is None and self.choice is not None and self.connection is not None

    def reader(self, overlay_index: Path | None) -> BaseSnapshot | MergedReader:
        """The base as an index, with the overlay in the settled local index at ``overlay_index``
        (of ``choice.changed`` alone) laid over it; that index is needed whenever the work tree has
        local files. Close the reader before closing this."""
        assert self.answers and self.choice is not None and self.connection is not None
        overlay = (
            None
            if overlay_index is None
            else PreparedOverlay(overlay_of(self.connection, self.choice, overlay_index))
        )
        return read_base(self.connection, self.choice, overlay, CommitFacts())

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


def overlay_of(
    connection: psycopg.Connection[TupleRow],
    choice: BaseChoice,
    overlay_index: Path,
    paths: Iterable[str] = (),
) -> Overlay:
    """The work tree's local files, from their settled index at ``overlay_index``, over the base;
    ``paths`` are more files the index holds (unsaved buffers)."""
    shadowed = {*choice.changed, *choice.deleted, *paths}
    return read_overlay(connection, choice.commit.commit_id, overlay_index, sorted(shadowed))


def read_base(
    connection: psycopg.Connection[TupleRow],
    choice: BaseChoice,
    overlay: PreparedOverlay | None,
    facts: CommitFacts,
) -> BaseSnapshot | MergedReader:
    """A read of the base in one transaction, with the overlay of the local files laid over it."""
    if overlay is None:
        if choice.local_files:
            raise ValueError(f"{choice.stamp()}: the local files need an overlay")
        return BaseSnapshot(connection, choice.commit, facts, past_commits=choice.past_commits)
    return MergedReader(
        BaseSnapshot(
            connection, choice.commit, facts, hidden=overlay.overlay.hides(), past_commits=choice.past_commits
        ),
        overlay,
    )


def open_base(root: Path, url: str, repository: str | None, is_source: Callable[[str], bool]) -> BaseReading:
    """The base of the work tree at ``root`` in the database at ``url``. A URL that is no PostgreSQL
    URL, or a repository without a name, raises :class:`PublishError` (a mistake to fix, not a
    server to wait for); every other failure is a fallback."""
    address = parse_url(url, READ_APPLICATION)
    identity = repository or repository_identity(root)
    if not identity:
        raise PublishError(
            f"{root} has no origin remote to name the repository by: name it with --repository NAME"
        )
    started = time.perf_counter()
    try:
        connection = connect(address)
    except PublishError as error:
        return BaseReading(None, f"{error}; answering from the local index", reachable=False)
    connected = time.perf_counter()
    try:
        with reported(address, "looking for a published commit"):
            commits = published_commits(connection, identity)
            listed = time.perf_counter()
            choice = choose_base(root, commits, _paths_reader(connection), is_source) if commits else None
    except PublishError as error:
        connection.close()
        return BaseReading(None, f"{error}; answering from the local index", reachable=False)
    # Where an editor's wait for its base goes (a cold git walk of a large tree, mostly).
    log.info(
        "base of %s looked for in %.2f s: connecting %.2f s, published commits %.2f s,"
        " the work tree's differences from the nearest %.2f s",
        root,
        time.perf_counter() - started,
        connected - started,
        listed - connected,
        time.perf_counter() - listed,
    )
    if not commits:
        reason = f"nothing of {identity} is published at {address.display}"
    elif choice is None:
        reason = (
            f"none of the {len(commits)} published commits of {identity} is an ancestor of HEAD"
            " in this clone (fetch, or wait for the next publish)"
        )
    elif choice.local_files > MAX_OVERLAY_FILES:
        named = ", ".join([*choice.changed, *choice.deleted][:PATHS_NAMED])
        reason = (
            f"the work tree has {choice.local_files:,} source files that are not base"
            f" {choice.commit.sha[:SHORT_SHA]}'s ({named}, …), more than the {MAX_OVERLAY_FILES:,}"
            " an overlay takes"
        )
    else:
        return BaseReading(choice, None, connection)
    connection.close()
    return BaseReading(choice, f"{reason}; answering from the local index")


def _paths_reader(connection: psycopg.Connection[TupleRow]) -> Callable[[PublishedCommit], frozenset[str]]:
    def paths(commit: PublishedCommit) -> frozenset[str]:
        return frozenset(
            str(path)
            for (path,) in connection.execute(
                "SELECT path FROM smartctx.files WHERE commit_id = %s", (commit.commit_id,)
            )
        )

    return paths


class TeamBase:
    """The setting ``smartctx.baseIndex`` (and ``smartctx mcp --base``): finds, for each workspace
    folder, the published commit whose tree the folder is (live/base.py's ``BaseSource``)."""

    def __init__(self, url: str, repository: str | None, is_source: Callable[[str], bool]) -> None:
        """A URL that is no PostgreSQL URL raises :class:`PublishError` at once."""
        parse_url(url, READ_APPLICATION)
        self._url = url
        self._repository = repository
        self._is_source = is_source

    def cover(self, root: Path) -> PublishedCover | None:
        try:
            reading = open_base(root, self._url, self._repository, self._is_source)
        except PublishError as error:
            log.warning("no base for %s: %s", root, error)
            return None
        if not reading.answers or reading.choice is None or reading.connection is None:
            log.log(
                logging.INFO if reading.reachable else logging.WARNING,
                "no base for %s: %s",
                root,
                reading.fallback,
            )
            reading.close()
            return None
        return PublishedCover(parse_url(self._url, READ_APPLICATION), reading.choice, reading.connection)


class PublishedCover:
    """A published commit that answers for a folder (live/base.py's ``BaseCover``), read over a few
    kept connections, one request at a time each."""

    def __init__(
        self, address: DatabaseAddress, choice: BaseChoice, connection: psycopg.Connection[TupleRow]
    ):
        self._address = address
        self.choice = choice
        self._overlay: PreparedOverlay | None = None
        self._local = choice.local_files
        self._facts = CommitFacts()
        self._lock = threading.Lock()
        self._idle = [connection]
        self._closed = False

    @property
    def stamp(self) -> str:
        return self.choice.stamp(self._local)

    @property
    def local_files(self) -> tuple[str, ...] | None:
        return self.choice.changed if self.choice.local_files else None

    def lay_over(self, overlay_index: Path, paths: Sequence[str]) -> None:
        with self._connection() as connection:
            self._overlay = PreparedOverlay(overlay_of(connection, self.choice, overlay_index, paths))
        self._local = len({*self.choice.changed, *self.choice.deleted, *paths})

    @contextmanager
    def snapshot(self) -> Iterator[IndexReader]:
        with self._connection() as connection:
            reader = read_base(connection, self.choice, self._overlay, self._facts)
            try:
                yield reader
            finally:
                reader.close()

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[TupleRow]]:
        """A kept connection for one read; a failure of the base as ReaderUnavailableError."""
        connection = self._take()
        try:
            yield connection
        except psycopg.Error as error:
            connection.close()
            # The server restarted or ended idle sessions, likely: the other kept connections are
            # as dead, and the next read connects anew.
            self._close_idle()
            raise ReaderUnavailableError(
                f"the base at {self._address.display} failed: {str(error).strip().splitlines()[0]}"
            ) from None
        finally:
            self._give_back(connection)

    def close(self) -> None:
        """Close the idle connections; one in use is closed when its request ends."""
        with self._lock:
            self._closed = True
        self._close_idle()

    def _close_idle(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _take(self) -> psycopg.Connection[TupleRow]:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        try:
            return connect(self._address)
        except PublishError as error:
            raise ReaderUnavailableError(str(error)) from None

    def _give_back(self, connection: psycopg.Connection[TupleRow]) -> None:
        with self._lock:
            if connection.closed:
                return
            if not self._closed and len(self._idle) < KEPT_CONNECTIONS and not connection.broken:
                self._idle.append(connection)
                return
        connection.close()
