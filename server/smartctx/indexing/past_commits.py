"""Reading the window of past commits from git, for the index (``store/past_commits.py``).

The last ``WINDOW_COMMITS`` commits reachable from the checked-out one, merges left out (their
changes are their parents'), each as its message's words and the files it changed inside the
workspace folder. A commit that changed more than ``MAX_COMMIT_PATHS`` files (a reformat, a rename
of a folder, a vendored update) says nothing about any one of them and is left out. Renames are not
followed: a renamed file counts under both names, and git need not compare blobs (a mirror without
some large blobs still answers). Git missing, failing or slow answers None: the index then has no
window, which ranks as it did before the window existed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from smartctx.store.past_commits import PastCommit
from smartctx.store.rows import secret_free_words

WINDOW_COMMITS = 3000
MAX_COMMIT_PATHS = 50
# django's 3,000 commits take 0.3 s; a far larger history is still bounded by the window.
GIT_LOG_TIMEOUT_S = 30.0
# Bumped when the rules above change, so an index read by other rules reads its window again.
WINDOW_RULES = 1
# What the log's format puts before each commit and after its message (git's %x00 and %x01).
_RECORD = "\x00"
_MESSAGE_END = "\x01"


def window_stamp(head: str) -> str:
    """What the index records of a window: the rules it was read by and the commit it ends at."""
    return f"{WINDOW_RULES}-{head}"


def read_past_commits(root: Path, revision: str = "HEAD") -> list[PastCommit] | None:
    """The window ending at ``revision`` in the repository of ``root``, newest first, or None."""
    try:
        completed = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "-c",
                "core.quotePath=false",
                "log",
                "--no-merges",
                "--no-renames",
                "--relative",
                f"--max-count={WINDOW_COMMITS}",
                "--format=%x00%B%x01",
                "--name-only",
                revision,
                "--",
            ],
            capture_output=True,
            timeout=GIT_LOG_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if completed.returncode != 0:
        return None
    messages: list[str] = []
    changed: list[tuple[str, ...]] = []
    for record in completed.stdout.decode("utf-8", "replace").split(_RECORD)[1:]:
        message, _, names = record.partition(_MESSAGE_END)
        paths = tuple(name for name in names.split("\n") if name)
        if 0 < len(paths) <= MAX_COMMIT_PATHS:
            messages.append(message)
            changed.append(paths)
    return [
        PastCommit(words, paths) for words, paths in zip(secret_free_words(messages), changed, strict=True)
    ]
