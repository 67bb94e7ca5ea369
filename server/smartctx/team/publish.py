"""Publish: copy a settled local index into PostgreSQL as the index of one commit of one repository.

The rules (architecture.md, *The team index*):

* **Keyed by (repository, commit).** A repository is its identity (checkout.py); a commit its full sha.
* **Visible only when complete.** The commit's row is created with ``complete`` false and committed
  first; each table's rows are then copied in a transaction of their own; one last transaction sets
  ``complete``. A reader only looks at complete commits, so a publish that dies at any instant
  leaves nothing visible, and the next publish of that commit deletes what it left and starts again.
* **Idempotent.** Publishing a commit that is already complete changes nothing (but prunes).
* **One publisher per commit.** A session-level advisory lock on (repository, commit) is held for the
  whole publish; PostgreSQL releases it when the session ends, however it ends, so a killed publisher
  never blocks the next one. A second publisher of the same commit meanwhile is refused.
* **Redacted.** Publishing is an exit: every text column and every search term passes the secret
  redaction first (redacted.py).
* **Pruned by a stated policy.** After each publish the repository keeps its ``keep`` newest complete
  commits (by when they were completed); older ones go, and so do incomplete ones no publisher holds.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from smartctx.store.export import (
    EdgeRecord,
    FileRecord,
    FoldedRecord,
    IndexExport,
    NodeRecord,
    RefRecord,
    ScoreRecord,
)
from smartctx.team.database import DatabaseAddress, TeamDatabaseError, ensure_schema, reported
from smartctx.team.postings import file_document, symbol_documents
from smartctx.team.redacted import (
    FILE_TEXT,
    FOLDED_TEXT,
    NODE_TEXT,
    REF_TEXT,
    RedactedSearchWords,
    redacted_rows,
)

# Complete commits a repository keeps by default (``--keep``): the default branch's last few, enough
# for an editor a few commits behind to find an ancestor.
DEFAULT_KEEP = 5
# Every table that holds a commit's rows, in the order they are written.
COMMIT_TABLES = (
    "files",
    "nodes",
    "scores",
    "edges",
    "refs",
    "folded",
    "symbol_postings",
    "symbol_lengths",
    "file_postings",
    "file_lengths",
)

# The tables a lexical search reads (team/lexical.py). Every table of a commit is vacuumed and
# analyzed before the commit becomes visible: a search reads only the postings' index, which
# PostgreSQL does without visiting the table only on pages a VACUUM has marked all-visible, and every
# plan needs the tables' statistics. On django, a task's searches took p50 289 ms on a commit just
# copied and 37 ms once vacuumed (bench/latency/pg_search.py); without statistics, looking up a few
# hundred definitions by id read all 44k of the commit's (9 ms, against 1 ms with them), and a
# pack from the base took 4.6 times the local index's time instead of about 2
# (bench/latency/base_perf.py, bench/HISTORY.md). Autovacuum gets there, but later. A role that
# does not own the tables gets a warning from VACUUM, not an error.
SEARCH_TABLES = ("symbol_postings", "symbol_lengths", "file_postings", "file_lengths")


@dataclass(frozen=True)
class PublishReport:
    repository: str
    commit: str
    # True when the commit was complete before this publish, which then wrote nothing.
    already_published: bool
    # Rows written per table (none when already published).
    rows: Mapping[str, int]
    # The commits this publish removed, complete or abandoned.
    pruned: tuple[str, ...]
    seconds: float


def publish(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    export: IndexExport,
    *,
    root: Path,
    repository: str,
    commit: str,
    keep: int,
    smartctx_version: str,
) -> PublishReport:
    """Write ``export``, the index of the checkout at ``root``, as ``commit`` of ``repository``, then
    prune; ``connection`` is in autocommit mode (each step is its own transaction)."""
    if keep < 1:
        raise ValueError("keep must be at least 1")
    started_s = time.monotonic()
    with reported(address, "creating the smartctx schema"):
        ensure_schema(connection)
    with reported(address, "registering the commit"):
        repository_id = _repository_id(connection, repository)
        lock_key = _publish_lock_key(repository, commit)
        locked = connection.execute("SELECT pg_try_advisory_lock(%s)", (lock_key,)).fetchone()
    if locked is None or not locked[0]:
        raise TeamDatabaseError(
            f"another smartctx is publishing commit {commit[:12]} of {repository} to {address.display}"
            " right now; its result is the same as this one's, so there is nothing to add"
        )
    try:
        with reported(address, "registering the commit"):
            existing = connection.execute(
                "SELECT id, complete FROM smartctx.commits WHERE repository_id = %s AND sha = %s",
                (repository_id, commit),
            ).fetchone()
        if existing is not None and existing[1]:
            with reported(address, "pruning earlier commits"), connection.transaction():
                pruned = _prune(connection, repository, repository_id, keep)
            return PublishReport(repository, commit, True, {}, pruned, time.monotonic() - started_s)
        with reported(address, "registering the commit"), connection.transaction():
            if existing is not None:
                # A publish of this commit that died: its rows are replaced, never added to.
                _delete_commits(connection, [int(existing[0])])
            created = connection.execute(
                "INSERT INTO smartctx.commits (repository_id, sha, smartctx_version) VALUES (%s, %s, %s)"
                " RETURNING id",
                (repository_id, commit, smartctx_version),
            ).fetchone()
        assert created is not None
        commit_id = int(created[0])
        # Whatever the server's default: VACUUM marks a page all-visible only once the commits of its
        # rows are flushed, and after copies committed asynchronously it marked none of them.
        connection.execute("SET synchronous_commit = on")
        rows = _write_rows(connection, address, export, root, commit_id)
        with reported(address, "vacuuming the tables"):
            for table in COMMIT_TABLES:
                connection.execute(sql.SQL("VACUUM (ANALYZE) smartctx.{}").format(sql.Identifier(table)))
        with reported(address, "marking the commit complete"), connection.transaction():
            connection.execute(
                "UPDATE smartctx.commits SET complete = true, completed_at = clock_timestamp() WHERE id = %s",
                (commit_id,),
            )
            pruned = _prune(connection, repository, repository_id, keep)
        return PublishReport(repository, commit, False, rows, pruned, time.monotonic() - started_s)
    finally:
        if not connection.closed and not connection.broken:
            connection.execute("SELECT pg_advisory_unlock(%s)", (lock_key,))


def _write_rows(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    export: IndexExport,
    root: Path,
    commit_id: int,
) -> dict[str, int]:
    """Copy every table of ``export`` under ``commit_id``, one transaction per table, redacted."""
    rows: dict[str, int] = {}
    copies: tuple[tuple[str, tuple[str, ...], Iterable[Sequence[object]]], ...] = (
        ("files", FileRecord._fields, redacted_rows(export.files(), FileRecord._fields, FILE_TEXT)),
        ("nodes", NodeRecord._fields, redacted_rows(export.nodes(), NodeRecord._fields, NODE_TEXT)),
        ("scores", ScoreRecord._fields, export.scores()),
        ("edges", EdgeRecord._fields, export.edges()),
        ("refs", RefRecord._fields, redacted_rows(export.refs(), RefRecord._fields, REF_TEXT)),
        ("folded", FoldedRecord._fields, redacted_rows(export.folded(), FoldedRecord._fields, FOLDED_TEXT)),
    )
    for table, columns, records in copies:
        rows[table] = _copy(connection, address, commit_id, table, columns, records)
    search_words = RedactedSearchWords(export, root)
    symbol_lengths: list[tuple[int, int]] = []

    def symbol_postings() -> Iterable[tuple[str, int, int, int]]:
        for record in search_words.records():
            for node_id, document in symbol_documents(record):
                symbol_lengths.append((node_id, document.length))
                for term, frequency in document.frequencies.items():
                    yield term, node_id, frequency, document.norm

    rows["symbol_postings"] = _copy(
        connection,
        address,
        commit_id,
        "symbol_postings",
        ("term", "node_id", "frequency", "norm"),
        symbol_postings(),
    )
    rows["symbol_lengths"] = _copy(
        connection, address, commit_id, "symbol_lengths", ("node_id", "length"), symbol_lengths
    )
    file_lengths: list[tuple[int, int]] = []

    def file_postings() -> Iterable[tuple[str, int, int, int]]:
        for record in search_words.records():
            document = file_document(record)
            file_lengths.append((record.file_id, document.length))
            for term, frequency in document.frequencies.items():
                yield term, record.file_id, frequency, document.norm

    rows["file_postings"] = _copy(
        connection,
        address,
        commit_id,
        "file_postings",
        ("term", "file_id", "frequency", "norm"),
        file_postings(),
    )
    rows["file_lengths"] = _copy(
        connection, address, commit_id, "file_lengths", ("file_id", "length"), file_lengths
    )
    return rows


def _copy(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    commit_id: int,
    table: str,
    columns: Sequence[str],
    records: Iterable[Sequence[object]],
) -> int:
    """Bulk-copy ``records`` into ``table`` with ``commit_id`` prepended, in one transaction."""
    statement = sql.SQL("COPY smartctx.{} (commit_id, {}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    count = 0
    with (
        reported(address, f"writing {table}"),
        connection.transaction(),
        connection.cursor() as cursor,
        cursor.copy(statement) as copy,
    ):
        for record in records:
            copy.write_row((commit_id, *record))
            count += 1
    return count


def _repository_id(connection: psycopg.Connection[TupleRow], identity: str) -> int:
    with connection.transaction():
        connection.execute(
            "INSERT INTO smartctx.repositories (identity) VALUES (%s) ON CONFLICT (identity) DO NOTHING",
            (identity,),
        )
        row = connection.execute(
            "SELECT id FROM smartctx.repositories WHERE identity = %s", (identity,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def _prune(
    connection: psycopg.Connection[TupleRow], repository: str, repository_id: int, keep: int
) -> tuple[str, ...]:
    """Remove the repository's complete commits past the ``keep`` newest, and its incomplete ones whose
    publisher is gone (no session holds their lock). Runs in the caller's transaction, after the
    commit just published was marked complete (so it is the newest, and kept): both become visible
    together. Publishing an older commit again changes nothing of what is kept."""
    stale = connection.execute(
        "SELECT id, sha FROM smartctx.commits WHERE repository_id = %s AND complete"
        " ORDER BY completed_at DESC, id DESC OFFSET %s",
        (repository_id, keep),
    ).fetchall()
    abandoned = [
        (commit_id, sha)
        for commit_id, sha in connection.execute(
            "SELECT id, sha FROM smartctx.commits WHERE repository_id = %s AND NOT complete",
            (repository_id,),
        ).fetchall()
        if _lock_is_free(connection, _publish_lock_key(repository, str(sha)))
    ]
    doomed = [(int(commit_id), str(sha)) for commit_id, sha in [*stale, *abandoned]]
    _delete_commits(connection, [commit_id for commit_id, _ in doomed])
    return tuple(sha for _, sha in doomed)


def _lock_is_free(connection: psycopg.Connection[TupleRow], key: int) -> bool:
    """Whether no session holds the publish lock ``key``; taking it for the rest of this transaction
    also keeps a new publisher of that commit out until the pruning is committed."""
    row = connection.execute("SELECT pg_try_advisory_xact_lock(%s)", (key,)).fetchone()
    return bool(row is not None and row[0])


def _delete_commits(connection: psycopg.Connection[TupleRow], commit_ids: list[int]) -> None:
    if not commit_ids:
        return
    for table in COMMIT_TABLES:
        connection.execute(
            sql.SQL("DELETE FROM smartctx.{} WHERE commit_id = ANY(%s)").format(sql.Identifier(table)),
            (commit_ids,),
        )
    connection.execute("DELETE FROM smartctx.commits WHERE id = ANY(%s)", (commit_ids,))


def _publish_lock_key(repository: str, commit: str) -> int:
    """The advisory lock key of one (repository, commit): 64 bits of a hash, as PostgreSQL's bigint."""
    digest = hashlib.blake2b(f"{repository}\0{commit}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
