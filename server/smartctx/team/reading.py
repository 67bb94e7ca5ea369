"""``--base URL`` and ``baseIndex``: answering from a team's published base, or saying why the local
index answers.

:func:`open_base` connects (read-only is enough), finds the published commit nearest to HEAD among
its ancestors (base.py) and, when the work tree is that commit's for every source file, opens it as
an index (base_snapshot.py). Otherwise it says, in one sentence, why the local index answers
instead: the server is unreachable, nothing of this repository is published, no published commit is
an ancestor of HEAD, or the work tree has local files. The command line asks it once per answer;
the servers through :class:`TeamBase`, once per workspace folder, whose :class:`PublishedCover`
then answers while the folder's first index runs (live/base.py). Overlaying local files on a base is
the next step (issue 26); until then a base answers only for the tree it was published from.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
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

# Local files a message names before it counts the rest.
PATHS_NAMED = 3
# Connections a base keeps open between requests: one per query thread (live/workspace.py).
KEPT_CONNECTIONS = 2

log = logging.getLogger(__name__)


@dataclass
class BaseReading:
    """What ``--base`` found: a snapshot of the base to answer from, or why there is none. Close it."""

    snapshot: BaseSnapshot | None
    choice: BaseChoice | None
    # Why the local index answers, in a sentence (None when the base does).
    fallback: str | None
    connection: psycopg.Connection[TupleRow] | None = None
    # False when the server could not be reached or failed: a problem to tell, not a tree to index.
    reachable: bool = True

    def close(self) -> None:
        if self.snapshot is not None:
            self.snapshot.close()
        if self.connection is not None:
            self.connection.close()


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
    try:
        connection = connect(address)
    except PublishError as error:
        return BaseReading(None, None, f"{error}; answering from the local index", reachable=False)
    try:
        with reported(address, "looking for a published commit"):
            commits = published_commits(connection, identity)
            choice = choose_base(root, commits, _paths_reader(connection), is_source) if commits else None
    except PublishError as error:
        connection.close()
        return BaseReading(None, None, f"{error}; answering from the local index", reachable=False)
    if not commits:
        reason = f"nothing of {identity} is published at {address.display}"
    elif choice is None:
        reason = (
            f"none of the {len(commits)} published commits of {identity} is an ancestor of HEAD"
            " in this clone (fetch, or wait for the next publish)"
        )
    elif choice.local_files:
        named = ", ".join([*choice.changed, *choice.deleted][:PATHS_NAMED])
        more = ", …" if choice.local_files > PATHS_NAMED else ""
        files = (
            "1 source file that is"
            if choice.local_files == 1
            else f"{choice.local_files:,} source files that are"
        )
        reason = (
            f"the work tree has {files} not base {choice.commit.sha[:SHORT_SHA]}'s ({named}{more}), and a"
            " base answers only for the tree it was published from"
        )
    else:
        return BaseReading(BaseSnapshot(connection, choice.commit), choice, None, connection)
    connection.close()
    return BaseReading(None, choice, f"{reason}; answering from the local index")


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
        if reading.snapshot is None or reading.choice is None or reading.connection is None:
            log.log(
                logging.INFO if reading.reachable else logging.WARNING,
                "no base for %s: %s",
                root,
                reading.fallback,
            )
            reading.close()
            return None
        reading.snapshot.close()
        return PublishedCover(parse_url(self._url, READ_APPLICATION), reading.choice, reading.connection)


class PublishedCover:
    """A published commit that answers for a folder (live/base.py's ``BaseCover``), read over a few
    kept connections, one request at a time each."""

    def __init__(
        self, address: DatabaseAddress, choice: BaseChoice, connection: psycopg.Connection[TupleRow]
    ):
        self._address = address
        self.choice = choice
        self._facts = CommitFacts()
        self._lock = threading.Lock()
        self._idle = [connection]
        self._closed = False

    @property
    def stamp(self) -> str:
        return self.choice.stamp()

    @contextmanager
    def snapshot(self) -> Iterator[IndexReader]:
        connection = self._take()
        try:
            with BaseSnapshot(connection, self.choice.commit, self._facts) as snapshot:
                yield snapshot
        except psycopg.Error as error:
            connection.close()
            raise ReaderUnavailableError(
                f"the base at {self._address.display} failed: {str(error).strip().splitlines()[0]}"
            ) from None
        finally:
            self._give_back(connection)

    def close(self) -> None:
        """Close the idle connections; one in use is closed when its request ends."""
        with self._lock:
            self._closed = True
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
