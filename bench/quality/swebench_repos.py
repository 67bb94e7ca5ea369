"""The SWE-bench repositories on this machine: fetched copies, one work tree each, and checkouts.

Each repository's fetched copy (a git directory under the mirrors folder) is cloned once, without a
checkout, into the repositories folder; a local clone hard-links the objects, so it costs no disk.
Every instance is then a ``git checkout`` of its base commit in that one work tree, as a user's
branch switch would be, which is what lets the index be brought up to date incrementally.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

# For these three the upstream copies are too large to bring here; these forks hold the same commits.
_FORKS = {
    "django/django": "apprent1c3/django",
    "matplotlib/matplotlib": "williamlus/matplotlib",
    "scikit-learn/scikit-learn": "Agent-Benchmarking/scikit-learn",
}


class RepositoryError(RuntimeError):
    """A repository that cannot be used, with a message that says what to do."""


def source_repository(repo: str) -> str:
    """The public repository (owner/name) that holds ``repo``'s commits."""
    return _FORKS.get(repo, repo)


def short_name(repo: str) -> str:
    """``scikit-learn/scikit-learn`` -> ``scikit-learn``: the folder name of its work tree and index."""
    return repo.split("/", 1)[1]


def mirror_path(mirrors_dir: Path, repo: str) -> Path:
    """Where the fetch tool puts the git directory of ``repo``'s source repository."""
    return mirrors_dir / source_repository(repo).replace("/", "+") / "repo"


def _git(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, check=False)


def prepare_work_tree(repo: str, repos_dir: Path, mirrors_dir: Path) -> Path:
    """The work tree of ``repo``, cloned from its fetched copy when it is not there yet."""
    tree = repos_dir / short_name(repo)
    if (tree / ".git").exists():
        return tree
    mirror = mirror_path(mirrors_dir, repo)
    if not (mirror / "objects").is_dir():
        raise RepositoryError(
            f"{repo}: no work tree at {tree} and no fetched copy at {mirror};"
            f" fetch github:{source_repository(repo)} (or pass --mirrors-dir / --repos-dir)"
        )
    tree.parent.mkdir(parents=True, exist_ok=True)
    cloned = subprocess.run(
        ["git", "clone", "--quiet", "--no-checkout", str(mirror), str(tree)],
        capture_output=True,
        text=True,
        check=False,
    )
    if cloned.returncode != 0:
        raise RepositoryError(f"{repo}: git clone {mirror} failed: {cloned.stderr.strip()}")
    return tree


def _missing_blobs(tree: Path, commit: str) -> list[str]:
    """Paths in ``commit`` whose content is absent from the object store."""
    listing = _git(tree, "ls-tree", "-r", "-z", commit).stdout
    entries = [entry.split("\t", 1) for entry in listing.split("\0") if entry]
    blobs = {meta.split()[2]: path for meta, path in entries if meta.split()[1] == "blob"}
    checked = subprocess.run(
        ["git", "-C", str(tree), "cat-file", "--batch-check"],
        input="".join(f"{sha}\n" for sha in blobs),
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return sorted(blobs[line.split()[0]] for line in checked.splitlines() if line.endswith(" missing"))


def checkout(tree: Path, commit: str) -> tuple[str, ...]:
    """Switch ``tree`` to ``commit`` and remove untracked files; returns paths left out.

    A few commits in the fetched copies lack the content of one large data file (astropy), which
    makes a plain checkout fail. Those paths are then left out with a sparse checkout, which stays on
    for later checkouts of the same tree; no gold file is affected.
    """
    switched = _git(tree, "checkout", "--quiet", "--force", commit)
    excluded: tuple[str, ...] = ()
    if switched.returncode != 0:
        missing = _missing_blobs(tree, commit)
        if not missing:
            raise RepositoryError(f"git checkout {commit} in {tree} failed: {switched.stderr.strip()}")
        excluded = tuple(missing)
        patterns = ["/*", *(f"!/{path}" for path in missing)]
        sparse = _git(tree, "sparse-checkout", "set", "--no-cone", *patterns)
        switched = _git(tree, "checkout", "--quiet", "--force", commit)
        if sparse.returncode != 0 or switched.returncode != 0:
            raise RepositoryError(
                f"git checkout {commit} in {tree} failed even without {', '.join(missing)}:"
                f" {(sparse.stderr + switched.stderr).strip()}"
            )
    cleaned = _git(tree, "clean", "-ffdxq")
    if cleaned.returncode != 0:
        raise RepositoryError(f"git clean in {tree} failed: {cleaned.stderr.strip()}")
    return excluded
