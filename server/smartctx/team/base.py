"""Which published commit an editor starts from, and which of its files the work tree changed.

The base is the published commit nearest to HEAD among its ancestors: the fewer commits apart, the
fewer files an editor must index itself. A published commit this clone has not fetched is no
ancestor it can prove, so it is passed over. What differs from the base is asked of git, which
already knows without reading every file: ``git diff <base>`` lists the tracked paths whose work
tree content is not the base's (commits since, staged and unstaged edits, deletions) and
``git ls-files --others --exclude-standard`` the new files git does not ignore. Everything else in
the work tree is byte for byte the base's, so the base's rows for it hold.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import psycopg
from psycopg.rows import TupleRow

from smartctx.history.git import GitError, run_git
from smartctx.indexing.past_commits import read_past_commits
from smartctx.store.past_commits import PastCommitWindow
from smartctx.team.database import READABLE_SCHEMA_VERSION, TeamDatabaseError

# Characters of a commit's sha in messages and stamps, as git's own short form.
SHORT_SHA = 7


@dataclass(frozen=True)
class PublishedCommit:
    commit_id: int
    sha: str
    completed_at: datetime


@dataclass(frozen=True)
class BaseChoice:
    """The base for a work tree, and the work tree's source files that are not the base's."""

    commit: PublishedCommit
    # Commits from the base to HEAD.
    behind: int
    # Source files whose content is not the base's, or that the base does not hold.
    changed: tuple[str, ...]
    # Files of the base that are gone from the work tree.
    deleted: tuple[str, ...]
    # The window of past commits ending at HEAD, read from the clone's own history, as a local
    # index holds it (the base publishes none: HEAD may be commits ahead of it).
    past_commits: PastCommitWindow = field(default_factory=lambda: PastCommitWindow([]), compare=False)

    @property
    def local_files(self) -> int:
        return len(self.changed) + len(self.deleted)

    def stamp(self, local: int | None = None) -> str:
        """The freshness stamp that names both halves of an answer: ``base a1b2c3d + 37 local files``
        (``local`` when more are laid over the base than git tells apart: unsaved buffers)."""
        local = self.local_files if local is None else local
        return f"base {self.commit.sha[:SHORT_SHA]} + {local:,} local file{'' if local == 1 else 's'}"


def published_commits(connection: psycopg.Connection[TupleRow], repository: str) -> list[PublishedCommit]:
    """The repository's complete commits, newest first (none when it was never published). A database
    of an older schema raises: this smartctx's searches read tables it does not have."""
    exists = connection.execute("SELECT to_regclass('smartctx.commits')").fetchone()
    if exists is None or exists[0] is None:
        return []
    version = connection.execute("SELECT max(version) FROM smartctx.schema_version").fetchone()
    if version is None or version[0] is None or int(version[0]) < READABLE_SCHEMA_VERSION:
        found = "no version" if version is None or version[0] is None else f"v{version[0]}"
        raise TeamDatabaseError(
            f"the team database holds smartctx schema {found}, older than the v{READABLE_SCHEMA_VERSION} this"
            " smartctx reads: publish once with this smartctx version (publishing upgrades the schema"
            " in place and keeps every commit)"
        )
    return [
        PublishedCommit(int(commit_id), str(sha), completed_at)
        for commit_id, sha, completed_at in connection.execute(
            "SELECT c.id, c.sha, c.completed_at FROM smartctx.commits c"
            " JOIN smartctx.repositories r ON r.id = c.repository_id"
            " WHERE r.identity = %s AND c.complete ORDER BY c.completed_at DESC, c.id DESC",
            (repository,),
        )
    ]


def choose_base(
    root: Path,
    commits: list[PublishedCommit],
    base_paths: Callable[[PublishedCommit], frozenset[str]],
    is_source: Callable[[str], bool],
) -> BaseChoice | None:
    """The published commit nearest to HEAD among its ancestors, with the work tree's differences
    from it; None when no published commit is an ancestor (or git cannot tell).

    ``base_paths`` lists the files a commit's index holds; ``is_source`` tells a file the local
    index would take from one it never would (a new README.txt differs from nothing indexed).
    """
    nearest: tuple[int, PublishedCommit] | None = None
    for commit in commits:
        behind = _commits_behind(root, commit.sha)
        if behind is not None and (nearest is None or behind < nearest[0]):
            nearest = (behind, commit)
    if nearest is None:
        return None
    behind, commit = nearest
    # git's two walks of the work tree, the tracked files' and the untracked folders', run side by
    # side: on a monorepo of 183k files they took 1.2 and 2.3 to 6.4 s one after the other. The log of
    # past commits runs beside them.
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="smartctx-base-git") as pool:
        tracked = pool.submit(_tracked_differences, root, commit.sha)
        others = pool.submit(run_git, root, ["ls-files", "-z", "--others", "--exclude-standard"])
        past = pool.submit(read_past_commits, root)
        try:
            differing = tracked.result()
            untracked = _paths(others.result())
        except GitError:
            return None
        window = PastCommitWindow(past.result() or [])
    held = base_paths(commit)
    deleted = sorted(path for path, gone in differing.items() if gone and path in held)
    changed = sorted(
        path
        for path in {*(path for path, gone in differing.items() if not gone), *untracked}
        if path in held or is_source(path)
    )
    return BaseChoice(commit, behind, tuple(changed), tuple(deleted), window)


def _commits_behind(root: Path, sha: str) -> int | None:
    """How many commits HEAD is ahead of ``sha``, or None when ``sha`` is no ancestor of HEAD here."""
    try:
        run_git(root, ["merge-base", "--is-ancestor", sha, "HEAD"])
        return int(run_git(root, ["rev-list", "--count", f"{sha}..HEAD"]).decode().strip())
    except (GitError, ValueError):
        return None


def _tracked_differences(root: Path, sha: str) -> dict[str, bool]:
    """Tracked paths whose work tree content is not ``sha``'s, each with whether it is gone."""
    listing = run_git(root, ["diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", sha])
    fields = _paths(listing)
    return {path: status.startswith("D") for status, path in zip(fields[::2], fields[1::2], strict=True)}


def _paths(listing: bytes) -> list[str]:
    return [field for field in listing.decode("utf-8", "surrogateescape").split("\0") if field]
