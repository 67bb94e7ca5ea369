"""What is checked out, asked of git: the commit a publish is keyed by, how the work tree differs from
it, and the repository's identity.

A published index is the index of one commit, shared by everyone who checks that commit out, so the
work tree it is built from must be that commit: local edits, staged or not, and new files the index
would take in belong to no commit. :func:`differences_from_commit` names the paths that stand in
the way, so the user learns what would have been published wrongly.

The identity of a repository is what every clone of it agrees on without configuration: the URL of
its ``origin`` remote, reduced to host and path (``github.com/org/repo``, whether cloned over
HTTPS or SSH, with or without ``.git``, and never with a user name or password). A repository without
one is named by the user (``--repository``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from smartctx.history.git import GitError, run_git
from smartctx.team import PublishError

# scp-like SSH addresses: user@host:path (no scheme, a colon before the path, no slash before it).
_SCP_ADDRESS = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>.+)$")
# How many differing paths a message names; it counts them all.
PATHS_NAMED = 5


class CheckoutError(PublishError):
    """The folder cannot be published as a commit (not a repository, no commit, local changes); the
    message says why and what to do."""


@dataclass(frozen=True)
class Checkout:
    """The commit checked out at a repository's top folder, and how its work tree differs."""

    commit: str
    # Tracked paths whose content on disk or in git's staging area is not the commit's, or that are gone.
    modified: tuple[str, ...]
    deleted: tuple[str, ...]
    # Paths git does not track and does not ignore.
    untracked: tuple[str, ...]


def read_checkout(root: Path) -> Checkout:
    """The commit at ``root`` and the work tree's differences from it; ``root`` must be the top
    folder of a git repository with at least one commit."""
    try:
        top = run_git(root, ["rev-parse", "--show-toplevel"]).decode().strip()
    except GitError as error:
        raise CheckoutError(
            f"{root} is not in a git repository, so it has no commit to publish ({error})"
        ) from None
    if Path(top).resolve() != root.resolve():
        raise CheckoutError(
            f"{root} is a folder inside the repository {top}: publish the repository's top folder"
        )
    try:
        commit = run_git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).decode().strip()
    except GitError:
        raise CheckoutError(f"{root} has no commit yet: commit first, then publish") from None
    status = run_git(root, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"])
    modified: list[str] = []
    deleted: list[str] = []
    untracked: list[str] = []
    for entry in status.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??":
            untracked.append(path)
        elif "D" in code:
            deleted.append(path)
        else:
            modified.append(path)
    return Checkout(commit, tuple(modified), tuple(deleted), tuple(untracked))


def differences_from_commit(checkout: Checkout, indexed_paths: set[str]) -> list[str]:
    """The work tree's paths that make its index differ from the commit's, each with what differs:
    a tracked file the index holds with other content, a tracked file that is gone, a file the index
    holds that git does not track."""
    differences = [f"{path} (modified)" for path in checkout.modified if path in indexed_paths]
    differences += [f"{path} (deleted)" for path in checkout.deleted]
    differences += [f"{path} (not committed)" for path in checkout.untracked if path in indexed_paths]
    return sorted(differences)


def describe_differences(commit: str, differences: list[str]) -> str:
    """The message for a work tree that is not its commit: what a publish would write, and the cure."""
    named = ", ".join(differences[:PATHS_NAMED]) + (", …" if len(differences) > PATHS_NAMED else "")
    return (
        f"--publish writes the index of commit {commit[:12]}, not local edits, and this work tree differs"
        f" from it ({len(differences):,} of the indexed files): {named}; commit or stash them, or publish"
        " from a clean checkout (as a CI job does)"
    )


def repository_identity(root: Path) -> str | None:
    """The normalised URL of the ``origin`` remote, or None when there is none."""
    try:
        url = run_git(root, ["remote", "get-url", "origin"]).decode().strip()
    except GitError:
        return None
    return normalised_remote(url) if url else None


def normalised_remote(url: str) -> str:
    """``host/path`` of a remote URL: lowercase host, no scheme, user, password, port, ``.git`` or
    trailing slash, so that every clone of one repository names it alike."""
    scp = _SCP_ADDRESS.match(url) if "://" not in url else None
    if scp is not None:
        host, path = scp["host"], scp["path"]
    elif "://" in url:
        parts = urlsplit(url)
        host, path = parts.hostname or "", parts.path
    else:
        # A local path (file remotes): kept as written, which is all the clones on one machine share.
        host, path = "", url
    path = path.strip("/")
    path = path.removesuffix(".git").rstrip("/")
    return f"{host.lower()}/{path}" if host else path
