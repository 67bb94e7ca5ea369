"""``--base URL``: answering from a team's published base, or saying why the local index answers.

An editor, an agent or the command line asks for a base before each answer it would give from its
own index. :func:`open_base` connects (read-only is enough), finds the published commit nearest to
HEAD among its ancestors (base.py) and, when the work tree is that commit's for every source file,
opens it as an index (base_snapshot.py). Otherwise it says, in one sentence, why the local index
answers instead: the server is unreachable, nothing of this repository is published, no published
commit is an ancestor of HEAD, or the work tree has local files. Overlaying local files on a base
is the next step (issue 26); until then a base answers only for the tree it was published from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import TupleRow

from smartctx.team import PublishError
from smartctx.team.base import SHORT_SHA, BaseChoice, PublishedCommit, choose_base, published_commits
from smartctx.team.base_snapshot import BaseSnapshot
from smartctx.team.checkout import repository_identity
from smartctx.team.database import READ_APPLICATION, connect, parse_url, reported

# Local files a message names before it counts the rest.
PATHS_NAMED = 3


@dataclass
class BaseReading:
    """What ``--base`` found: a snapshot of the base to answer from, or why there is none. Close it."""

    snapshot: BaseSnapshot | None
    choice: BaseChoice | None
    # Why the local index answers, in a sentence (None when the base does).
    fallback: str | None
    connection: psycopg.Connection[TupleRow] | None = None

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
        return BaseReading(None, None, f"{error}; answering from the local index")
    try:
        with reported(address, "looking for a published commit"):
            commits = published_commits(connection, identity)
            choice = choose_base(root, commits, _paths_reader(connection), is_source) if commits else None
    except PublishError as error:
        connection.close()
        return BaseReading(None, None, f"{error}; answering from the local index")
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
