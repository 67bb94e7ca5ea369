"""Opening the index file: create it, check it is ours, and rebuild it when it is not usable.

A corrupt or foreign file is moved aside, never overwritten in place and never fatal: the index is a
cache of the workspace, so the cure for any damage is to build it again (style.md habit 5). One that
is only out of date (its search words made by another smartctx version) is removed and built again.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from smartctx.store import lexical
from smartctx.store.rows import search_words_stamp

SCHEMA_VERSION = 1
INDEX_FILE_NAME = f"index-v{SCHEMA_VERSION}.sqlite"
FORMAT_TAG = "smartctx-index"
BUSY_TIMEOUT_MS = 10_000
# The write-ahead log grows to hold the largest transaction (a first index's 1,000-file commits left
# 42 MB of it beside a 102 MB index on django) and SQLite keeps that size for reuse unless told
# otherwise; this caps what stays on disk once the log restarts after a checkpoint.
WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024
# Counts the batches that changed search rows; the lexical index records the one it holds.
SEARCH_GENERATION_KEY = "search_generation"
# What made the search words (store/rows.py): an index of other words, from an earlier smartctx,
# is built again, since a file keeps its words until it changes.
SEARCH_WORDS_KEY = "search_words"
# The index file and SQLite's files beside it, which go (or are moved aside) with it.
_FILE_SUFFIXES = ("", "-wal", "-shm")
# Earlier schemas of this version that one script brings to the current one in place, by the
# digest they were made with: the tables added since, which an index can do without until then.
_UPGRADES = {"44fdaf14488d5b6a": "schema_v1_past_commits.sql"}


class IndexUnavailableError(Exception):
    """The index file cannot be opened or created; the message says why and what to do."""


@dataclass(frozen=True)
class OpenedIndex:
    connection: sqlite3.Connection
    path: Path
    rebuilt_reason: str | None


def connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """A connection with the settings every user of the index relies on."""
    if read_only:
        connection = sqlite3.connect(
            f"{path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
    else:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT_BYTES}")
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA foreign_keys=OFF")
    connection.execute("PRAGMA cache_size=-65536")
    return connection


def open_index(index_dir: Path, workspace_root: Path) -> OpenedIndex:
    """Open (or create) the index for ``workspace_root`` inside ``index_dir``."""
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise IndexUnavailableError(f"cannot create index folder {index_dir}: {error.strerror}") from error
    path = index_dir / INDEX_FILE_NAME
    root_text = str(workspace_root)
    reason: str | None = None
    if path.exists():
        problem = _problem_with(path, root_text)
        if problem is None:
            connection = connect(path, read_only=False)
            try:
                upgrade_schema(connection)
            except sqlite3.Error as error:
                connection.close()
                raise IndexUnavailableError(f"cannot upgrade index {path}: {error}") from error
            return OpenedIndex(connection, path, None)
        reason = problem.reason
        if problem.outdated:
            # Nothing in it is damaged or worth a look later.
            _remove(path)
        else:
            _move_aside(path)
    # The lexical index beside a new file describes some other one: it is built again.
    lexical.remove(path)
    try:
        connection = connect(path, read_only=False)
        _create_schema(connection, root_text)
    except sqlite3.Error as error:
        raise IndexUnavailableError(f"cannot create index {path}: {error}") from error
    return OpenedIndex(connection, path, reason)


def check_index(path: Path, workspace_root: Path) -> str | None:
    """Why the index file another process writes cannot be read as this workspace's index (another
    schema, say), or None if it can; never changes the file."""
    problem = _problem_with(path, str(workspace_root), read_only=True)
    return None if problem is None else problem.reason


class _Problem(NamedTuple):
    reason: str
    # Built right by another smartctx version, rather than damaged or foreign.
    outdated: bool = False


def _problem_with(path: Path, root_text: str, *, read_only: bool = False) -> _Problem | None:
    """Why an existing file cannot serve as this workspace's index, or None if it can."""
    try:
        connection = connect(path, read_only=read_only)
        try:
            rows = dict(connection.execute("SELECT key, value FROM meta").fetchall())
            connection.execute("SELECT count(*) FROM search_words").fetchone()
        finally:
            connection.close()
    except sqlite3.Error as error:
        return _Problem(f"{path} is not a readable smartctx index ({error})")
    if rows.get("format") != FORMAT_TAG or rows.get("schema_version") != str(SCHEMA_VERSION):
        return _Problem(f"{path} is not a smartctx v{SCHEMA_VERSION} index")
    if rows.get("schema_digest") not in (_schema_digest(), *_UPGRADES):
        return _Problem(f"{path} was built by a development build with another schema")
    if rows.get("workspace_root") != root_text:
        return _Problem(f"{path} indexes {rows.get('workspace_root')}, not {root_text}")
    if rows.get(SEARCH_WORDS_KEY) != search_words_stamp():
        return _Problem(f"{path} holds search words made by another smartctx version", outdated=True)
    return None


def upgrade_schema(connection: sqlite3.Connection) -> None:
    """Bring an index of an earlier schema of this version to the current one, in one transaction
    (a reader in another process sees the tables and the new digest together)."""
    (digest,) = connection.execute("SELECT value FROM meta WHERE key = 'schema_digest'").fetchone()
    script = _UPGRADES.get(digest)
    if script is None:
        return
    text = resources.files("smartctx.store").joinpath(script).read_text("utf-8")
    stamp = f"UPDATE meta SET value = '{_schema_digest()}' WHERE key = 'schema_digest';"
    connection.executescript(f"BEGIN IMMEDIATE;\n{text}\n{stamp}\nCOMMIT;")


def _remove(path: Path) -> None:
    for suffix in _FILE_SUFFIXES:
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _move_aside(path: Path) -> None:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for suffix in _FILE_SUFFIXES:
        candidate = path.with_name(path.name + suffix)
        if candidate.exists():
            candidate.replace(candidate.with_name(f"{candidate.name}.broken-{stamp}"))


def _schema_text() -> str:
    return resources.files("smartctx.store").joinpath(f"schema_v{SCHEMA_VERSION}.sql").read_text("utf-8")


def _schema_digest() -> str:
    """A fingerprint of the exact schema text, so an index from a build with a different schema of
    the same version number is rebuilt rather than half-understood."""
    return hashlib.sha256(_schema_text().encode()).hexdigest()[:16]


def _create_schema(connection: sqlite3.Connection, root_text: str) -> None:
    """Create every table and the meta rows in one transaction, so a crash leaves no half schema."""
    schema = _schema_text()
    connection.executescript(f"BEGIN IMMEDIATE;\n{schema}\nCOMMIT;")
    connection.execute("BEGIN IMMEDIATE")
    connection.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?)",
        [
            ("format", FORMAT_TAG),
            ("schema_version", str(SCHEMA_VERSION)),
            ("workspace_root", root_text),
            ("schema_digest", _schema_digest()),
            ("scores_dirty", "0"),
            (SEARCH_WORDS_KEY, search_words_stamp()),
            (SEARCH_GENERATION_KEY, "0"),
        ],
    )
    connection.execute("COMMIT")
