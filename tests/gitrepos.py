"""Real git repositories with chosen dates, built in temporary folders for history tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class Repo:
    """A git repository whose commits get the dates the test names, one day apart by default."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.day = 0
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "Ada Author")
        self.git("config", "user.email", "ada@example.invalid")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, date: str | None = None) -> str:
        moment = date or f"2024-01-{self.day + 1:02d}T12:00:00+00:00"
        environment = {**os.environ, "GIT_AUTHOR_DATE": moment, "GIT_COMMITTER_DATE": moment}
        completed = subprocess.run(
            ["git", "-C", str(self.root), *args], capture_output=True, text=True, env=environment, check=True
        )
        return completed.stdout.strip()

    def write(self, path: str, text: str) -> None:
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)

    def commit(self, message: str, author: str = "Ada Author") -> str:
        self.day += 1
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, f"--author={author} <a@example.invalid>")
        return self.git("rev-parse", "HEAD")
