"""Noticing another process's commits to the index, for a process that only reads it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from smartctx.store.database import IndexUnavailableError, connect


class CommitWatch:
    """A read-only connection kept open to ask SQLite whether anything was committed since the
    last look (``PRAGMA data_version`` changes on every commit made by another connection, in any
    process); cheap enough to ask a few times a second.

    Every method raises OSError while the file is missing, and IndexUnavailableError when it cannot
    be read.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._inode = path.stat().st_ino
        self._db = _connect(path)
        self._version: int | None = None

    def changed(self) -> bool:
        """Whether another connection committed since the previous call (True on the first)."""
        inode = self._path.stat().st_ino
        if inode != self._inode:
            # The writer moved an unusable file aside and built a new one: read the new one.
            self._db.close()
            self._inode, self._db, self._version = inode, _connect(self._path), None
        try:
            (version,) = self._db.execute("PRAGMA data_version").fetchone()
        except sqlite3.Error as error:
            raise IndexUnavailableError(f"cannot read {self._path}: {error}") from error
        changed = int(version) != self._version
        self._version = int(version)
        return changed

    def file_count(self) -> int:
        try:
            return int(self._db.execute("SELECT count(*) FROM files").fetchone()[0])
        except sqlite3.Error as error:
            raise IndexUnavailableError(f"cannot read {self._path}: {error}") from error

    def close(self) -> None:
        self._db.close()


def _connect(path: Path) -> sqlite3.Connection:
    try:
        return connect(path, read_only=True)
    except sqlite3.Error as error:
        raise IndexUnavailableError(f"cannot open {path}: {error}") from error
