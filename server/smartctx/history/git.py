"""Running git for history questions: local only, bounded in time, never interactive.

Every call has a timeout, no pager, no terminal prompt and no transport (``protocol.allow=never``
and ``GIT_NO_LAZY_FETCH``), so a partial clone cannot reach for the network to fill in a missing
object. Failures are raised as :class:`GitError` with a message fit for a pack warning.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# A blame of one long-lived file in a 30k-commit history takes 1-4 s on a busy 2-core machine;
# past this the answer is not worth the wait, and the pack says history was unavailable.
GIT_TIMEOUT_S = 20.0

_ENVIRONMENT = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}


class GitError(Exception):
    """git is missing, failed, or took too long; the message says which, in plain words."""


def run_git(root: Path, args: list[str], stdin: bytes | None = None) -> bytes:
    """What ``git -C root ARGS`` prints, as bytes."""
    command = ["git", "--no-pager", "-c", "protocol.allow=never", "-C", str(root), *args]
    try:
        completed = subprocess.run(
            command,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, **_ENVIRONMENT},
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:.0f} s") from None
    except OSError as error:
        raise GitError(f"git could not be started: {error}") from None
    if completed.returncode != 0:
        detail = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {detail[-1] if detail else f'exit {completed.returncode}'}")
    return completed.stdout
