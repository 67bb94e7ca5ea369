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
  commits (by when they were completed); older ones go, and so do incomplete ones no publisher holds
  (a commit published in shards once its shards have waited ``SHARDS_EXPIRE_AFTER`` for their finish).
* **Sharded.** N jobs (a CI matrix) each index the files of one shard (core/shards.py) and write
  them, one transaction per shard, under ids of their own (``local id * N + shard``); the finish
  step (finish.py) then resolves every reference against all of them and computes the scores, as a
  one-process publish's local index did, and completes the commit. A shard holds the commit's lock
  shared and its own shard's lock alone, so shards write side by side while a one-process publish
  or a finish, which hold the commit's lock alone, wait for none of them and never run beside one.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from smartctx.core.shards import Shard
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
from smartctx.team.finish import resolve_and_score
from smartctx.team.postings import file_document, symbol_documents
from smartctx.team.redacted import (
    FILE_TEXT,
    FOLDED_TEXT,
    NODE_TEXT,
    REF_TEXT,
    redacted_rows,
)

# Complete commits a repository keeps by default (``--keep``): the default branch's last few, enough
# for an editor a few commits behind to find an ancestor.
DEFAULT_KEEP = 5
# A commit whose shards are written but not finished is left alone by pruning this long: the jobs of
# one CI run may start hours apart, but a finish that never came is not waited for forever.
SHARDS_EXPIRE_AFTER = timedelta(days=1)
# PostgreSQL's integer, the type of every id column: a shard's ids (local id * N + shard) must fit.
MAX_PUBLISHED_ID = 2**31 - 1
# The ids of the whole index published in one process: the local ids are the published ones.
WHOLE = Shard(0, 1)
# Every table that holds a commit's rows, in the order they are written.
COMMIT_TABLES = (
    "files",
    "nodes",
    "scores",
    "edges",
    "refs",
    "folded",
    "symbol_lists",
    "symbol_lengths",
    "file_lists",
    "file_lengths",
)

# The tables a lexical search reads (team/lexical.py). Every table of a commit is vacuumed and
# analyzed before the commit becomes visible: a term's document count is read from the lists' key
# alone, which PostgreSQL does without visiting the table only on pages a VACUUM has marked
# all-visible, and every plan needs the tables' statistics. On django, with postings a row each
# (schema v2), a task's searches took p50 289 ms on a commit just copied and 37 ms once vacuumed
# (bench/latency/pg_search.py); without statistics, looking up a few
# hundred definitions by id read all 44k of the commit's (9 ms, against 1 ms with them), and a
# pack from the base took 4.6 times the local index's time instead of about 2
# (bench/latency/base_perf.py, bench/HISTORY.md). Autovacuum gets there, but later. A role that
# does not own the tables gets a warning from VACUUM, not an error.
SEARCH_TABLES = ("symbol_lists", "symbol_lengths", "file_lists", "file_lengths")


@dataclass(frozen=True)
class PublishReport:
    repository: str
    commit: str
    # True when the commit was complete before this publish, which then wrote nothing.
    already_published: bool
    # Rows written per table (none when already published); a finish counts the commit's every row.
    rows: Mapping[str, int]
    # The commits this publish removed, complete or abandoned.
    pruned: tuple[str, ...]
    seconds: float
    # Where the time went: writing the rows (for a finish, resolving and scoring), then vacuuming.
    stage_seconds: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ShardReport:
    repository: str
    commit: str
    shard: Shard
    # True when this shard of the commit was written before (or the commit is complete): nothing written.
    already_written: bool
    # Rows written per table (none when already written).
    rows: Mapping[str, int]
    # The shards of the commit written so far, this one included (all of them once complete).
    shards_written: int
    seconds: float
    stage_seconds: Mapping[str, float] = field(default_factory=dict)


def publish(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    export: IndexExport,
    *,
    repository: str,
    commit: str,
    keep: int,
    smartctx_version: str,
) -> PublishReport:
    """Write ``export``, the index of a checkout of ``commit``, as that commit of ``repository``, then
    prune; ``connection`` is in autocommit mode (each step is its own transaction)."""

    def write(commit_id: int) -> dict[str, int]:
        return _write_rows(connection, address, export, commit_id, None)

    return _publish_whole(connection, address, repository, commit, keep, smartctx_version, None, write)


def finish(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    *,
    repository: str,
    commit: str,
    keep: int,
    smartctx_version: str,
) -> PublishReport:
    """Complete ``commit`` of ``repository`` from the shards its jobs wrote: resolve the references,
    compute the scores, then prune as a one-process publish does."""

    def check(commit_id: int, shard_count: int | None) -> None:
        _check_shards(connection, commit, commit_id, shard_count, smartctx_version)

    def write(commit_id: int) -> dict[str, int]:
        def copy(table: str, columns: Sequence[str], records: Iterable[Sequence[object]]) -> int:
            return _copy(connection, table, commit_id, columns, records)

        with reported(address, "resolving the references and computing the scores"), connection.transaction():
            # What a finish that died after this transaction left (before the commit was complete).
            connection.execute(
                "DELETE FROM smartctx.edges WHERE commit_id = %s AND ref_id IS NOT NULL", (commit_id,)
            )
            connection.execute("DELETE FROM smartctx.scores WHERE commit_id = %s", (commit_id,))
            resolve_and_score(connection, commit_id, copy)
        with reported(address, "counting the commit's rows"):
            return {
                table: _count(
                    connection,
                    sql.SQL("SELECT count(*) FROM smartctx.{} WHERE commit_id = %s").format(
                        sql.Identifier(table)
                    ),
                    commit_id,
                )
                for table in COMMIT_TABLES
            }

    return _publish_whole(connection, address, repository, commit, keep, smartctx_version, check, write)


def _check_shards(
    connection: psycopg.Connection[TupleRow],
    commit: str,
    commit_id: int,
    shard_count: int | None,
    smartctx_version: str,
) -> None:
    """Raise unless the incomplete commit ``commit_id`` was begun in shards and has every one of them
    written, by this smartctx version (the ids and rules of the rows must be the finish's own)."""
    if shard_count is None:
        raise TeamDatabaseError(
            f"commit {commit[:12]} was being published in one process, not in shards, and that publish"
            " did not end: publish it again (in one process, or with --shard I/N then --finish)"
        )
    written: dict[int, str] = dict(
        connection.execute(
            "SELECT shard, smartctx_version FROM smartctx.shards WHERE commit_id = %s", (commit_id,)
        ).fetchall()
    )
    missing = [str(Shard(index, shard_count)) for index in range(shard_count) if index not in written]
    if missing:
        named = ", ".join(missing[:8]) + (", …" if len(missing) > 8 else "")
        which = f"shard {named} is" if len(missing) == 1 else f"{len(missing)} shards ({named}) are"
        raise TeamDatabaseError(
            f"commit {commit[:12]} is published in {shard_count} shards, and {which} not written yet:"
            " run smartctx index --publish URL --shard I/N for each, then --finish"
        )
    versions = sorted({str(version) for version in written.values()})
    if versions != [smartctx_version]:
        raise TeamDatabaseError(
            f"the shards of commit {commit[:12]} were written by smartctx {', '.join(versions)} and this"
            f" is {smartctx_version}: finish with the version that wrote them"
        )


def _publish_whole(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    repository: str,
    commit: str,
    keep: int,
    smartctx_version: str,
    resume: Callable[[int, int | None], None] | None,
    write: Callable[[int], dict[str, int]],
) -> PublishReport:
    """A publish that completes the commit, holding its lock alone: ``write`` writes its rows under
    the commit's id. Without ``resume`` (a one-process publish) an unfinished commit of the same
    sha is deleted and written anew; with it (a finish) the unfinished commit is what is completed,
    once ``resume`` accepts it."""
    if keep < 1:
        raise ValueError("keep must be at least 1")
    started_s = time.monotonic()
    with reported(address, "creating the smartctx schema"):
        ensure_schema(connection)
    with reported(address, "registering the commit"):
        repository_id = _repository_id(connection, repository)
    with _advisory_lock(
        connection,
        address,
        _publish_lock_key(repository, commit),
        f"another smartctx is publishing commit {commit[:12]} of {repository} to {address.display}"
        " right now (in one process, its shards, or their finish): publish when it has ended",
    ):
        with reported(address, "registering the commit"):
            existing = connection.execute(
                "SELECT id, complete, shard_count FROM smartctx.commits"
                " WHERE repository_id = %s AND sha = %s",
                (repository_id, commit),
            ).fetchone()
        if existing is not None and existing[1]:
            with reported(address, "pruning earlier commits"), connection.transaction():
                pruned = _prune(connection, repository, repository_id, keep)
            return PublishReport(repository, commit, True, {}, pruned, time.monotonic() - started_s)
        if resume is not None:
            if existing is None:
                raise TeamDatabaseError(
                    f"no shard of commit {commit[:12]} of {repository} is published at {address.display}:"
                    " run smartctx index --publish URL --shard I/N for each shard first"
                )
            with reported(address, "reading the shards"):
                resume(int(existing[0]), existing[2])
            commit_id = int(existing[0])
        else:
            with reported(address, "registering the commit"), connection.transaction():
                if existing is not None:
                    # A publish of this commit that died, or shards never finished: its rows are
                    # replaced, never added to.
                    _delete_commits(connection, [int(existing[0])])
                commit_id = _new_commit(connection, repository_id, commit, smartctx_version, None)
        # Whatever the server's default: VACUUM marks a page all-visible only once the commits of its
        # rows are flushed, and after copies committed asynchronously it marked none of them.
        connection.execute("SET synchronous_commit = on")
        write_started_s = time.monotonic()
        rows = write(commit_id)
        vacuum_started_s = time.monotonic()
        _vacuum(connection, address, COMMIT_TABLES, analyze=True)
        with reported(address, "marking the commit complete"), connection.transaction():
            connection.execute(
                "UPDATE smartctx.commits SET complete = true, completed_at = clock_timestamp() WHERE id = %s",
                (commit_id,),
            )
            pruned = _prune(connection, repository, repository_id, keep)
        stages = {"write": vacuum_started_s - write_started_s, "vacuum": time.monotonic() - vacuum_started_s}
        return PublishReport(repository, commit, False, rows, pruned, time.monotonic() - started_s, stages)


def publish_shard(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    export: IndexExport,
    *,
    repository: str,
    commit: str,
    shard: Shard,
    smartctx_version: str,
) -> ShardReport:
    """Write ``export``, the index of ``shard``'s files of a checkout of ``commit``, as that shard of
    ``commit``, in one transaction: a shard is written whole or not at all. The commit stays
    invisible until :func:`finish`."""
    started_s = time.monotonic()
    with reported(address, "creating the smartctx schema"):
        ensure_schema(connection)
    with reported(address, "registering the shard"):
        repository_id = _repository_id(connection, repository)
    with (
        _advisory_lock(
            connection,
            address,
            _publish_lock_key(repository, commit),
            f"another smartctx is publishing commit {commit[:12]} of {repository} in one process, or"
            " finishing its shards, right now: publish when it has ended",
            shared=True,
        ),
        _advisory_lock(
            connection,
            address,
            _publish_lock_key(repository, f"{commit}/{shard.index}"),
            f"another smartctx is writing shard {shard} of commit {commit[:12]} of {repository} right now",
        ),
    ):
        with reported(address, "registering the shard"):
            commit_id, complete = _sharded_commit(connection, repository_id, commit, shard, smartctx_version)
            done = _shards_written(connection, commit_id)
        if complete or shard.index in done:
            written = shard.count if complete else len(done)
            return ShardReport(repository, commit, shard, True, {}, written, time.monotonic() - started_s)
        connection.execute("SET synchronous_commit = on")
        write_started_s = time.monotonic()
        with reported(address, f"writing shard {shard}"), connection.transaction():
            rows = _write_rows(connection, address, export, commit_id, shard)
            connection.execute(
                "INSERT INTO smartctx.shards (commit_id, shard, smartctx_version, files)"
                " VALUES (%s, %s, %s, %s)",
                (commit_id, shard.index, smartctx_version, rows["files"]),
            )
        # What the shard wrote is vacuumed here, where N jobs share the work, so that the finish's
        # vacuum passes over pages already marked all-visible.
        vacuum_started_s = time.monotonic()
        _vacuum(connection, address, [table for table in COMMIT_TABLES if rows.get(table)], analyze=False)
        with reported(address, "registering the shard"):
            written = len(_shards_written(connection, commit_id))
        stages = {"write": vacuum_started_s - write_started_s, "vacuum": time.monotonic() - vacuum_started_s}
        return ShardReport(
            repository, commit, shard, False, rows, written, time.monotonic() - started_s, stages
        )


def _vacuum(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    tables: Iterable[str],
    *,
    analyze: bool,
) -> None:
    """Vacuum ``tables`` (see SEARCH_TABLES for why), and gather their statistics if ``analyze``."""
    options = sql.SQL("(ANALYZE) " if analyze else "")
    with reported(address, "vacuuming the tables"):
        for table in tables:
            connection.execute(sql.SQL("VACUUM {}smartctx.{}").format(options, sql.Identifier(table)))


@contextmanager
def _advisory_lock(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    key: int,
    refusal: str,
    *,
    shared: bool = False,
) -> Iterator[None]:
    """Hold the session-level advisory lock ``key`` (``shared`` with other holders of it shared, or
    alone) for the block, or raise ``refusal`` when another session holds it otherwise. PostgreSQL
    frees it when the session ends, however it ends."""
    kind = "_shared" if shared else ""
    with reported(address, "taking the publish lock"):
        row = connection.execute(f"SELECT pg_try_advisory_lock{kind}(%s)".encode(), (key,)).fetchone()
    if row is None or not row[0]:
        raise TeamDatabaseError(refusal)
    try:
        yield
    finally:
        if not connection.closed and not connection.broken:
            connection.execute(f"SELECT pg_advisory_unlock{kind}(%s)".encode(), (key,))


def _sharded_commit(
    connection: psycopg.Connection[TupleRow],
    repository_id: int,
    commit: str,
    shard: Shard,
    smartctx_version: str,
) -> tuple[int, bool]:
    """The id of ``commit``'s row, created for ``shard.count`` shards when there is none, and
    whether it is complete. An unfinished one-process publish's rows are replaced (no one holds
    them: this session holds the commit's lock shared); a commit begun in another number of shards
    is refused."""
    with connection.transaction():
        connection.execute(
            "INSERT INTO smartctx.commits (repository_id, sha, smartctx_version, shard_count)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (repository_id, sha) DO NOTHING",
            (repository_id, commit, smartctx_version, shard.count),
        )
        row = connection.execute(
            "SELECT id, complete, shard_count FROM smartctx.commits WHERE repository_id = %s AND sha = %s"
            " FOR UPDATE",
            (repository_id, commit),
        ).fetchone()
        assert row is not None
        commit_id, complete, shard_count = int(row[0]), bool(row[1]), row[2]
        if complete:
            return commit_id, True
        if shard_count is None:
            _delete_commits(connection, [commit_id])
            return _new_commit(connection, repository_id, commit, smartctx_version, shard.count), False
        if shard_count != shard.count:
            raise TeamDatabaseError(
                f"commit {commit[:12]} is being published in {shard_count} shards, not {shard.count}:"
                f" give every job the same N in --shard I/N (or publish it in one process, which"
                " replaces the shards written so far)"
            )
        return commit_id, False


def _new_commit(
    connection: psycopg.Connection[TupleRow],
    repository_id: int,
    commit: str,
    smartctx_version: str,
    shard_count: int | None,
) -> int:
    created = connection.execute(
        "INSERT INTO smartctx.commits (repository_id, sha, smartctx_version, shard_count)"
        " VALUES (%s, %s, %s, %s) RETURNING id",
        (repository_id, commit, smartctx_version, shard_count),
    ).fetchone()
    assert created is not None
    return int(created[0])


def _shards_written(connection: psycopg.Connection[TupleRow], commit_id: int) -> set[int]:
    return {
        int(shard)
        for (shard,) in connection.execute(
            "SELECT shard FROM smartctx.shards WHERE commit_id = %s", (commit_id,)
        ).fetchall()
    }


class _PublishedIds:
    """The ids a part of an index is published under: a shard's local ids interleaved with the other
    shards' (``local * N + shard``), so N jobs write disjoint ids without agreeing on ranges."""

    def __init__(self, shard: Shard) -> None:
        self.shard = shard

    def __call__(self, local_id: int) -> int:
        published = local_id * self.shard.count + self.shard.index
        if published > MAX_PUBLISHED_ID:
            raise TeamDatabaseError(
                f"shard {self.shard}'s ids pass PostgreSQL's integer ({local_id:,} * {self.shard.count}):"
                " publish in fewer shards"
            )
        return published

    def optional(self, local_id: int | None) -> int | None:
        return None if local_id is None else self(local_id)


def _write_rows(
    connection: psycopg.Connection[TupleRow],
    address: DatabaseAddress,
    export: IndexExport,
    commit_id: int,
    shard: Shard | None,
) -> dict[str, int]:
    """Copy every table of ``export`` under ``commit_id``, redacted, one transaction per table (a
    savepoint within the caller's transaction, if it holds one): the whole commit's index (``shard``
    None), or one shard's, which writes no scores and only its containment edges (the finish step
    resolves the references and scores the whole graph)."""
    whole = shard is None
    ids = _PublishedIds(shard or WHOLE)

    def files() -> Iterator[FileRecord]:
        for record in export.files():
            yield record._replace(file_id=ids(record.file_id))

    def nodes() -> Iterator[NodeRecord]:
        for record in export.nodes():
            yield record._replace(
                node_id=ids(record.node_id),
                file_id=ids(record.file_id),
                parent_id=ids.optional(record.parent_id),
            )

    def edges() -> Iterator[EdgeRecord]:
        for record in export.edges():
            if whole or record.ref_id is None:
                yield record._replace(
                    src_id=ids(record.src_id), dst_id=ids(record.dst_id), ref_id=ids.optional(record.ref_id)
                )

    def refs() -> Iterator[RefRecord]:
        for record in export.refs():
            yield record._replace(
                ref_id=ids(record.ref_id), file_id=ids(record.file_id), source_id=ids(record.source_id)
            )

    def folded() -> Iterator[FoldedRecord]:
        for record in export.folded():
            yield record._replace(file_id=ids(record.file_id), holder_id=ids(record.holder_id))

    rows: dict[str, int] = {}
    copies: list[tuple[str, tuple[str, ...], Iterable[Sequence[object]]]] = [
        ("files", FileRecord._fields, redacted_rows(files(), FileRecord._fields, FILE_TEXT)),
        ("nodes", NodeRecord._fields, redacted_rows(nodes(), NodeRecord._fields, NODE_TEXT)),
        ("edges", EdgeRecord._fields, edges()),
        ("refs", RefRecord._fields, redacted_rows(refs(), RefRecord._fields, REF_TEXT)),
        ("folded", FoldedRecord._fields, redacted_rows(folded(), FoldedRecord._fields, FOLDED_TEXT)),
    ]
    if whole:
        copies.insert(2, ("scores", ScoreRecord._fields, export.scores()))
    for table, columns, records in copies:
        with reported(address, f"writing {table}"):
            rows[table] = _copy(connection, table, commit_id, columns, records)
    symbol_lengths: list[tuple[int, int]] = []

    def symbol_postings() -> Iterable[tuple[str, int, int, int]]:
        for record in export.search_words():
            for node_id, document in symbol_documents(record):
                symbol_lengths.append((ids(node_id), document.length))
                for term, frequency in document.frequencies.items():
                    yield term, ids(node_id), frequency, document.norm

    file_lengths: list[tuple[int, int]] = []

    def file_postings() -> Iterable[tuple[str, int, int, int]]:
        for record in export.search_words():
            document = file_document(record)
            file_lengths.append((ids(record.file_id), document.length))
            for term, frequency in document.frequencies.items():
                yield term, ids(record.file_id), frequency, document.norm

    # A shard's lists of each term are its own row (the part), beside the other shards'.
    part = ids.shard.index
    search: tuple[
        tuple[str, Callable[[], Iterable[tuple[str, int, int, int]]], str, str, list[tuple[int, int]]], ...
    ] = (
        ("symbol_lists", symbol_postings, "symbol_lengths", "node_id", symbol_lengths),
        ("file_lists", file_postings, "file_lengths", "file_id", file_lengths),
    )
    for lists, postings, lengths, id_column, length_rows in search:
        with reported(address, f"writing {lists}"):
            rows[lists] = _write_lists(connection, lists, commit_id, part, postings())
        with reported(address, f"writing {lengths}"):
            rows[lengths] = _copy(connection, lengths, commit_id, (id_column, "length"), length_rows)
    return rows


# Postings go one row each into a table of the session's own, from which PostgreSQL packs each term's
# list (schema_pg_v4.sql): no process holds a commit's postings in memory. The lists' three arrays
# are aggregated from the same rows in the same order, so their positions match; the rows come
# sorted by id, so a list's bytes are the same however the postings were copied.
_STAGE_POSTINGS = (
    "CREATE TEMPORARY TABLE staged_postings"
    " (term text NOT NULL, id integer NOT NULL, frequency integer NOT NULL, norm integer NOT NULL)"
)
_LISTS_FROM_STAGED = """
INSERT INTO smartctx.{lists} (commit_id, term, part, documents, ids, frequencies, norms)
SELECT %(commit)s, term, %(part)s, count(*), string_agg(int4send(id), ''::bytea),
    string_agg(int4send(frequency), ''::bytea), string_agg(int4send(norm), ''::bytea)
FROM (SELECT * FROM staged_postings ORDER BY term, id) AS sorted
GROUP BY term
"""


def _write_lists(
    connection: psycopg.Connection[TupleRow],
    table: str,
    commit_id: int,
    part: int,
    postings: Iterable[tuple[str, int, int, int]],
) -> int:
    """Write each term's list of ``postings`` (term, document id, frequency, norm) into ``table`` as
    ``part`` of the commit, in one transaction (a savepoint inside the caller's); the lists written."""
    with connection.transaction():
        connection.execute(_STAGE_POSTINGS)
        with (
            connection.cursor() as cursor,
            cursor.copy("COPY staged_postings (term, id, frequency, norm) FROM STDIN") as copy,
        ):
            for posting in postings:
                copy.write_row(posting)
        written = connection.execute(
            sql.SQL(_LISTS_FROM_STAGED).format(lists=sql.Identifier(table)),
            {"commit": commit_id, "part": part},
        ).rowcount
        connection.execute("DROP TABLE staged_postings")
    return written


def _copy(
    connection: psycopg.Connection[TupleRow],
    table: str,
    commit_id: int,
    columns: Sequence[str],
    records: Iterable[Sequence[object]],
) -> int:
    """Bulk-copy ``records`` into ``table`` with ``commit_id`` prepended, in one transaction (a
    savepoint inside the caller's)."""
    statement = sql.SQL("COPY smartctx.{} (commit_id, {}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    count = 0
    with connection.transaction(), connection.cursor() as cursor, cursor.copy(statement) as copy:
        for record in records:
            copy.write_row((commit_id, *record))
            count += 1
    return count


def _count(connection: psycopg.Connection[TupleRow], query: sql.Composed, commit_id: int) -> int:
    row = connection.execute(query, (commit_id,)).fetchone()
    return 0 if row is None else int(row[0])


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
    publisher is gone (no session holds their lock; in shards, none written for
    ``SHARDS_EXPIRE_AFTER``). Runs in the caller's transaction, after the commit just published was
    marked complete (so it is the newest, and kept): both become visible together. Publishing an
    older commit again changes nothing of what is kept."""
    stale = connection.execute(
        "SELECT id, sha FROM smartctx.commits WHERE repository_id = %s AND complete"
        " ORDER BY completed_at DESC, id DESC OFFSET %s",
        (repository_id, keep),
    ).fetchall()
    # A commit in shards is abandoned only once its shards have waited long for their finish: between
    # the jobs of a CI run no one holds its lock.
    abandoned = [
        (commit_id, sha)
        for commit_id, sha in connection.execute(
            "SELECT c.id, c.sha FROM smartctx.commits c WHERE c.repository_id = %s AND NOT c.complete"
            " AND (c.shard_count IS NULL OR coalesce((SELECT max(s.written_at) FROM smartctx.shards s"
            " WHERE s.commit_id = c.id), c.started_at) < clock_timestamp() - %s)",
            (repository_id, SHARDS_EXPIRE_AFTER),
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
    connection.execute("DELETE FROM smartctx.shards WHERE commit_id = ANY(%s)", (commit_ids,))
    connection.execute("DELETE FROM smartctx.commits WHERE id = ANY(%s)", (commit_ids,))


def _publish_lock_key(repository: str, commit: str) -> int:
    """The advisory lock key of one (repository, commit): 64 bits of a hash, as PostgreSQL's bigint."""
    digest = hashlib.blake2b(f"{repository}\0{commit}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
