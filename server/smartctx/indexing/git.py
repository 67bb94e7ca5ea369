"""Asking the git command line about a workspace, never failing the caller.

Git is optional: a folder outside any repository, a machine without git, or a git that hangs all
answer None, and the caller falls back to what it does without git.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 5.0


def git_output(root: Path, *args: str) -> str | None:
    """What ``git -C root ARGS`` prints (stripped), or None if it fails, prints nothing or times out."""
    try:
        completed = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    output = completed.stdout.strip()
    return output if completed.returncode == 0 and output else None


def git_head(root: Path) -> str | None:
    """The commit checked out in ``root``, or None outside git."""
    return git_output(root, "rev-parse", "--verify", "--quiet", "HEAD")


def git_dir(root: Path) -> Path | None:
    """The git directory of ``root``'s repository (a linked worktree's own), or None outside git."""
    found = git_output(root, "rev-parse", "--absolute-git-dir")
    return None if found is None else Path(found)
