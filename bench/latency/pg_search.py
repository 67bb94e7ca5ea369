"""Lexical search in PostgreSQL against the local engine, on the pipeline's own calls and on whole packs.

One run, on a throw-away PostgreSQL (tests/postgres_server.py: initdb + pg_ctl on a Unix socket in a
temporary folder, stopped and removed at the end):

1. **Publish.** The repository's index (a copy, so the given one is never written) is published as
   one commit with team/publish.py (which ends with ``VACUUM (ANALYZE)`` of the search tables),
   timed; the postings and lengths tables are measured on disk.
2. **Record.** Every SWE-bench Lite problem statement of the repository goes through
   ``build_context`` on the local index, with the snapshot's lexical calls recorded as the local
   engine receives them: the terms of each document count, and the chosen terms, weights and limit of
   each search over definitions and over files.
3. **Replay.** The recorded calls, task by task, on tantivy (store/lexical.py) and on PostgreSQL
   (team/lexical.py: each term's list read and scored in numpy; once reading every list, once with
   the commit's cache of lists as an editor keeps it, which the best of two rounds finds warm), and
   on the way before it as the baseline: BM25 summed in SQL over a table of one row per posting, built
   here from the lists as schema v2 held them; best of ``ROUNDS`` per call; per engine the
   latency of each kind of call and of a task's calls together, and how much of tantivy's answer
   PostgreSQL returns (top 10 and top 50, definitions and files), in the same order or not, and how
   close the scores are.
4. **Full-text search.** The same calls on PostgreSQL's own full-text search (a ``tsvector`` per
   document built from the same postings, a GIN index, ``ts_rank``), the alternative measured first.
5. **Packs.** Every task is packed with the local snapshot and with a snapshot whose lexical index
   is PostgreSQL's, and the packs compared (text, and the citations of bodies, summaries and the file map).

    .venv/bin/python -m bench.latency.pg_search /work/benchrepos/qp-django \\
        --index-dir /work/benchrepos/qp-index
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import TupleRow
from tests.postgres_server import PostgresServer, start
from tests.published_postings import postings

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.repository import indexed_store
from bench.stats import median_and_p95, percentile
from smartctx.core.context import ContextOptions, ContextPack, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.database import INDEX_FILE_NAME, SEARCH_GENERATION_KEY
from smartctx.store.export import IndexExport
from smartctx.store.lexical import (
    LexicalHit,
    LexicalIndex,
    LexicalReader,
)
from smartctx.store.snapshot import IndexSnapshot
from smartctx.team import lexical
from smartctx.team.database import connect, parse_url
from smartctx.team.publish import SEARCH_TABLES, publish

# The published repository's name and commit: any will do, the database holds only this one.
REPOSITORY = "bench.invalid/pg-search"
COMMIT = hashlib.sha1(b"pg_search").hexdigest()
# Replays of the whole recorded workload per engine; the best of them per call is reported.
ROUNDS = 2
# Overlap is reported over the head of each answer, which decides the candidates, and over 50.
HEADS = (10, 50)
Database = psycopg.Connection[TupleRow]


@dataclass
class TaskCalls:
    """What one task asked the lexical index, in order: document counts (terms, at most), then the
    searches over definitions and over files (the chosen terms with their weights, limit)."""

    counts: list[tuple[list[str], int]] = field(default_factory=list)
    symbols: list[tuple[dict[str, int], int]] = field(default_factory=list)
    files: list[tuple[dict[str, int], int]] = field(default_factory=list)


class RecordingSnapshot(IndexSnapshot):
    """The local snapshot, noting each lexical call as its lexical index receives it."""

    def __init__(self, index_path: Path, calls: TaskCalls) -> None:
        super().__init__(index_path)
        self.calls = calls

    def document_counts(self, terms: Iterable[str], at_most: int) -> dict[str, int]:
        wanted = sorted(set(terms))
        self.calls.counts.append((wanted, at_most))
        return super().document_counts(wanted, at_most)

    def search(self, weighted_terms: Mapping[str, int], limit: int) -> Any:
        found = super().search(weighted_terms, limit)
        terms = self._query_terms(weighted_terms)
        if terms and limit > 0:
            self.calls.symbols.append((dict(terms), limit))
        return found

    def search_files(self, weighted_terms: Mapping[str, int], limit: int) -> list[tuple[str, float]]:
        found = super().search_files(weighted_terms, limit)
        terms = self._query_terms(weighted_terms, keep_common=True)
        if terms and limit > 0:
            self.calls.files.append((dict(terms), limit))
        return found


# A document count asked of PostgreSQL one term at a time, as the local reader asks, is not capped.
UNCAPPED = 1 << 30


class PostgresReader:
    """The local lexical reader's three questions, answered by team/lexical.py over one commit."""

    def __init__(self, connection: Database, commit: lexical.SearchedCommit) -> None:
        self._connection = connection
        self._commit = commit

    def search_symbols(self, weighted_terms: Mapping[str, int], limit: int) -> list[LexicalHit]:
        found = lexical.search_symbols(self._connection, self._commit, weighted_terms, limit)
        return [LexicalHit(row_id, score) for row_id, score in found]

    def search_files(self, weighted_terms: Mapping[str, int], limit: int) -> list[LexicalHit]:
        found = lexical.search_files(self._connection, self._commit, weighted_terms, limit)
        return [LexicalHit(row_id, score) for row_id, score in found]

    def document_count(self, term: str) -> int:
        return lexical.document_counts(self._connection, self._commit, [term], UNCAPPED).get(term, 0)

    def document_counts(self, terms: list[str], at_most: int) -> dict[str, int]:
        return lexical.document_counts(self._connection, self._commit, terms, at_most)


class SearchSnapshot(IndexSnapshot):
    """The local snapshot with another lexical index: the same term choice, memoisation and
    everything else, so a pack that differs differs by the search alone."""

    def __init__(self, index_path: Path, reader: LexicalReader | PostgresReader) -> None:
        super().__init__(index_path)
        self._reader = reader
        self._batched: dict[tuple[str, int], int] = {}

    def _lexical_reader(self) -> Any:
        return self._reader

    def document_counts(self, terms: Iterable[str], at_most: int) -> dict[str, int]:
        """The local snapshot's counts, memoised the same way, but asked of PostgreSQL in one
        statement for all the terms not yet counted, as a reader of the base would ask, rather than
        one round trip per term."""
        if not isinstance(self._reader, PostgresReader):
            return super().document_counts(terms, at_most)
        wanted = sorted(set(terms))
        missing = [term for term in wanted if (term, at_most) not in self._batched]
        if missing:
            found = self._reader.document_counts(missing, at_most)
            self._batched.update({(term, at_most): found.get(term, 0) for term in missing})
        counts = {term: self._batched[term, at_most] for term in wanted}
        return {term: count for term, count in counts.items() if count}


# ---------------------------------------------------------------------------------------------------
# The engines a replay runs on: each answers (terms, at most) counts and (weighted terms, limit) top-k.


@dataclass(frozen=True)
class Engine:
    name: str
    counts: Callable[[list[str], int], dict[str, int]]
    symbols: Callable[[dict[str, int], int], list[tuple[int, float]]]
    files: Callable[[dict[str, int], int], list[tuple[int, float]]]


def local_reader(index_path: Path) -> LexicalReader:
    with IndexSnapshot(index_path) as snapshot:
        generation = int(snapshot.meta(SEARCH_GENERATION_KEY) or 0)
    return LexicalIndex.for_index(index_path).reader(generation)


def tantivy_engine(name: str, reader: LexicalReader) -> Engine:
    def counts(terms: list[str], at_most: int) -> dict[str, int]:
        found = {term: min(at_most, reader.document_count(term)) for term in terms}
        return {term: count for term, count in found.items() if count}

    return Engine(
        name,
        counts,
        lambda terms, limit: [(hit.row_id, hit.score) for hit in reader.search_symbols(terms, limit)],
        lambda terms, limit: [(hit.row_id, hit.score) for hit in reader.search_files(terms, limit)],
    )


def postgres_engine(
    name: str, connection: Database, commit: lexical.SearchedCommit, cache: lexical.ListCache | None
) -> Engine:
    return Engine(
        name,
        lambda terms, at_most: lexical.document_counts(connection, commit, terms, at_most),
        lambda terms, limit: lexical.search_symbols(connection, commit, terms, limit, cache),
        lambda terms, limit: lexical.search_files(connection, commit, terms, limit, cache),
    )


# The baseline: the postings a row each, as schema v2 held them (its key holds frequency and norm, so
# a search reads one index), and its statements: each term's document frequency counted and its
# weight computed, then every posting of the terms scored and summed per document.
_ROW_TABLES = (("rows_symbols", "symbol"), ("rows_files", "file"))
_ROWS_TOP = """
WITH weights AS (
    SELECT q.term, q.boost * ln(1 + (%(documents)s - count(*) + 0.5) / (count(*) + 0.5)) * (1 + %(k1)s)
        AS weight
    FROM unnest(%(terms)s::text[], %(boosts)s::float8[]) AS q (term, boost)
    JOIN {table} p ON p.commit_id = %(commit)s AND p.term = q.term
    GROUP BY q.term, q.boost
)
SELECT id, score FROM (
    SELECT p.id, sum(
        w.weight * p.frequency / (p.frequency + %(k1)s * (1 - %(b)s + %(b)s * p.norm / %(average)s))
    ) AS score
    FROM weights w
    JOIN {table} p ON p.commit_id = %(commit)s AND p.term = w.term
    GROUP BY p.id
) AS scored
ORDER BY round(score * %(scale)s) DESC, id
LIMIT %(limit)s
"""
_ROWS_COUNTS = """
SELECT q.term, (
    SELECT count(*) FROM (
        SELECT 1 FROM rows_symbols p WHERE p.commit_id = %(commit)s AND p.term = q.term LIMIT %(at_most)s
    ) AS found
)
FROM unnest(%(terms)s::text[]) AS q (term)
"""


def build_posting_rows(connection: Database) -> float:
    began = time.perf_counter()
    for table, kind in _ROW_TABLES:
        id_column = "node_id" if kind == "symbol" else "file_id"
        connection.execute(f"DROP TABLE IF EXISTS {table}")
        connection.execute(
            f"CREATE TABLE {table} AS SELECT commit_id, term, {id_column} AS id, frequency, norm"
            f" FROM ({postings(kind)}) AS p"
        )
        connection.execute(
            f"ALTER TABLE {table} ADD PRIMARY KEY (commit_id, term, id) INCLUDE (frequency, norm)"
        )
        connection.execute(f"VACUUM (ANALYZE) {table}")
    return time.perf_counter() - began


def posting_rows_engine(connection: Database, commit: lexical.SearchedCommit) -> Engine:
    def top(table: str, corpus: lexical.Corpus) -> Callable[[dict[str, int], int], list[tuple[int, float]]]:
        def run(weighted_terms: dict[str, int], limit: int) -> list[tuple[int, float]]:
            terms = sorted(weighted_terms)
            rows = connection.execute(
                _ROWS_TOP.format(table=table).encode(),
                {
                    "commit": commit.commit_id,
                    "terms": terms,
                    "boosts": [float(weighted_terms[term]) for term in terms],
                    "documents": corpus.documents,
                    "average": corpus.average_length,
                    "k1": lexical.K1,
                    "b": lexical.B,
                    "scale": 10.0**lexical.SCORE_PLACES,
                    "limit": limit,
                },
            )
            return [(int(row_id), float(score)) for row_id, score in rows]

        return run

    def counts(terms: list[str], at_most: int) -> dict[str, int]:
        rows = connection.execute(
            _ROWS_COUNTS.encode(),
            {"commit": commit.commit_id, "terms": sorted(set(terms)), "at_most": at_most},
        )
        return {str(term): int(count) for term, count in rows if count}

    return Engine(
        "PostgreSQL, BM25 in SQL over a row per posting (schema v2, before)",
        counts,
        top("rows_symbols", commit.symbols),
        top("rows_files", commit.files),
    )


# PostgreSQL's full-text search over the same documents: each definition's and file's postings as a
# tsvector (a term repeated by its frequency), ranked by ts_rank. A tsquery has no per-term weight, and
# a tsvector keeps at most 256 positions of a word, none past 16,383: it counts what it can.
_FTS_TABLES = (("fts_symbols", "rows_symbols"), ("fts_files", "rows_files"))


def build_full_text(connection: Database, commit: lexical.SearchedCommit) -> float:
    """Full-text tables from the baseline's rows (build_posting_rows first)."""
    began = time.perf_counter()
    for table, rows in _FTS_TABLES:
        connection.execute(f"DROP TABLE IF EXISTS {table}")
        connection.execute(
            f"CREATE TABLE {table} AS SELECT id,"
            " to_tsvector('simple', string_agg(repeat(term || ' ', frequency), ' ')) AS document"
            f" FROM {rows} WHERE commit_id = %s GROUP BY id",
            (commit.commit_id,),
        )
        connection.execute(f"CREATE INDEX ON {table} USING gin (document)")
        connection.execute(f"ANALYZE {table}")
    return time.perf_counter() - began


def full_text_engine(connection: Database, commit: lexical.SearchedCommit) -> Engine:
    def top(table: str) -> Callable[[dict[str, int], int], list[tuple[int, float]]]:
        statement = (
            f"SELECT id, ts_rank(document, query) AS rank FROM {table}, to_tsquery('simple', %s) AS query"
            " WHERE document @@ query ORDER BY rank DESC, id LIMIT %s"
        )

        def run(terms: dict[str, int], limit: int) -> list[tuple[int, float]]:
            rows = connection.execute(statement, (" | ".join(sorted(terms)), limit))
            return [(int(row_id), float(rank)) for row_id, rank in rows]

        return run

    return Engine(
        "PostgreSQL full-text search (ts_rank)",
        lambda terms, at_most: lexical.document_counts(connection, commit, terms, at_most),
        top("fts_symbols"),
        top("fts_files"),
    )


@dataclass
class Replay:
    """Per task and kind of call: the best time of each call (ms) and each top-k answer."""

    call_ms: list[dict[str, list[float]]]
    answers: list[dict[str, list[list[tuple[int, float]]]]]

    def task_ms(self) -> list[float]:
        return [sum(sum(times) for times in task.values()) for task in self.call_ms]

    def calls(self, kind: str) -> list[float]:
        return [elapsed for task in self.call_ms for elapsed in task[kind]]


def replay(engine: Engine, recorded: list[TaskCalls]) -> Replay:
    result = Replay(
        [{"counts": [], "symbols": [], "files": []} for _ in recorded],
        [{"symbols": [], "files": []} for _ in recorded],
    )
    for round_number in range(ROUNDS):
        for task, timing, answers in zip(recorded, result.call_ms, result.answers, strict=True):
            for kind, run, calls in (
                ("counts", engine.counts, task.counts),
                ("symbols", engine.symbols, task.symbols),
                ("files", engine.files, task.files),
            ):
                for position, (terms, limit) in enumerate(calls):
                    began = time.perf_counter()
                    answer = run(terms, limit)
                    elapsed = (time.perf_counter() - began) * 1000
                    if round_number == 0:
                        timing[kind].append(elapsed)
                        if kind != "counts":
                            answers[kind].append(answer)
                    else:
                        timing[kind][position] = min(timing[kind][position], elapsed)
    return result


def agreement(ours: Replay, reference: Replay) -> dict[str, Any]:
    """How much of the reference's answers ours returns: per kind, mean overlap of each head, the
    share of answers identical in order, and the largest relative score difference on shared hits."""
    found: dict[str, Any] = {}
    for kind in ("symbols", "files"):
        heads: dict[int, list[float]] = {head: [] for head in HEADS}
        identical = 0
        total = 0
        score_gap = 0.0
        for our_task, their_task in zip(ours.answers, reference.answers, strict=True):
            for answer, expected in zip(our_task[kind], their_task[kind], strict=True):
                total += 1
                identical += [row for row, _ in answer] == [row for row, _ in expected]
                for head in HEADS:
                    theirs = {row for row, _ in expected[:head]}
                    if theirs:
                        heads[head].append(len({row for row, _ in answer[:head]} & theirs) / len(theirs))
                scores = dict(answer)
                for row, score in expected:
                    if row in scores and score:
                        score_gap = max(score_gap, abs(scores[row] - score) / abs(score))
        found[kind] = {
            "calls": total,
            "identical": identical / total if total else 1.0,
            **{f"top{head}": statistics.mean(values) if values else 1.0 for head, values in heads.items()},
            "max_relative_score_difference": score_gap,
        }
    return found


def counts_equal(engine: Engine, reference: Engine, recorded: list[TaskCalls]) -> float:
    pairs = {(term, at_most) for task in recorded for terms, at_most in task.counts for term in terms}
    same = sum(engine.counts([term], at_most) == reference.counts([term], at_most) for term, at_most in pairs)
    return same / len(pairs) if pairs else 1.0


# ---------------------------------------------------------------------------------------------------
# Packs


def pack_key(pack: ContextPack) -> tuple[Any, ...]:
    """What a pack says: its text and what it cites, in order (not the scores, which carry each
    engine's last digits)."""
    return (
        pack.text,
        tuple(body.citation for body in pack.bodies),
        tuple(summary.citation for summary in pack.summaries),
        tuple(entry.file_path for entry in pack.file_map),
    )


def record_and_pack(
    index_path: Path, tasks: list[str], budget: int, sources: WorkspaceSources, counter: TokenCounter
) -> tuple[list[TaskCalls], list[ContextPack], list[float]]:
    recorded: list[TaskCalls] = []
    packs: list[ContextPack] = []
    elapsed_ms: list[float] = []
    for task in tasks:
        calls = TaskCalls()
        began = time.perf_counter()
        with RecordingSnapshot(index_path, calls) as snapshot:
            packs.append(
                build_context(
                    ContextRequest(task, ContextOptions(budget_tokens=budget)), snapshot, counter, sources
                )
            )
        elapsed_ms.append((time.perf_counter() - began) * 1000)
        recorded.append(calls)
    return recorded, packs, elapsed_ms


def search_packs(
    index_path: Path,
    reader: LexicalReader | PostgresReader,
    tasks: list[str],
    budget: int,
    sources: WorkspaceSources,
    counter: TokenCounter,
) -> tuple[list[ContextPack], list[float]]:
    packs: list[ContextPack] = []
    elapsed_ms: list[float] = []
    for task in tasks:
        began = time.perf_counter()
        with SearchSnapshot(index_path, reader) as snapshot:
            packs.append(
                build_context(
                    ContextRequest(task, ContextOptions(budget_tokens=budget)), snapshot, counter, sources
                )
            )
        elapsed_ms.append((time.perf_counter() - began) * 1000)
    return packs, elapsed_ms


# ---------------------------------------------------------------------------------------------------


def publish_index(server: PostgresServer, root: Path, index_path: Path) -> tuple[float, int, dict[str, int]]:
    """Publish the index as one commit; the seconds it took, the commit's id and the rows per table."""
    address = parse_url(server.url())
    connection = connect(address)
    try:
        with IndexExport(index_path) as export:
            export.check_settled()
            report = publish(
                connection,
                address,
                export,
                repository=REPOSITORY,
                commit=COMMIT,
                keep=1,
                smartctx_version=version("smartctx"),
            )
        row = connection.execute("SELECT id FROM smartctx.commits WHERE sha = %s", (COMMIT,)).fetchone()
        assert row is not None
        return report.seconds, int(row[0]), dict(report.rows)
    finally:
        connection.close()


def table_bytes(connection: Database, tables: Iterable[str]) -> dict[str, dict[str, int]]:
    sizes: dict[str, dict[str, int]] = {}
    for table in tables:
        row = connection.execute("SELECT pg_table_size(%s), pg_indexes_size(%s)", (table, table)).fetchone()
        assert row is not None
        sizes[table] = {"table": int(row[0]), "indexes": int(row[1])}
    return sizes


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", type=Path, help="an index of root to copy (else one is built)")
    parser.add_argument("--repo", default="django/django")
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "pg_search.json")
    parser.add_argument("--tasks", type=int, help="only the first N tasks (a quick look)")
    args = parser.parse_args()
    root = args.root.resolve()
    tasks = problem_statements(args.repo, args.data)[: args.tasks]
    load_before = uptime()
    with tempfile.TemporaryDirectory(prefix="smartctx-pgsearch-") as temp:
        index_dir = Path(temp) / "index"
        if args.index_dir is not None:
            shutil.copytree(args.index_dir, index_dir)
        indexed_store(root, index_dir).close()
        index_path = index_dir / INDEX_FILE_NAME
        server = start()
        try:
            results = measure(server, root, index_path, tasks, args.budget)
        finally:
            server.stop()
    results.update({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "repo": args.repo})
    results["load"] = {"before": load_before, "after": uptime()}
    report(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1))
    print(f"\nwritten: {args.json}")


def measure(
    server: PostgresServer,
    root: Path,
    index_path: Path,
    tasks: list[str],
    budget: int,
) -> dict[str, Any]:
    publish_s, commit_id, rows = publish_index(server, root, index_path)
    sources = WorkspaceSources(root)
    counter = TokenCounter()
    # The first task loads the tokenizer and warms every cache: it is packed, never timed.
    record_and_pack(index_path, tasks[:1], budget, sources, counter)
    recorded, local_packs, local_ms = record_and_pack(index_path, tasks, budget, sources, counter)
    local = tantivy_engine("tantivy (local)", local_reader(index_path))
    results = [(local, replay(local, recorded))]
    with psycopg.connect(server.url(), autocommit=True) as connection:
        commit = lexical.searched_commit(connection, commit_id)
        rows_build_s = build_posting_rows(connection)
        sizes = table_bytes(
            connection,
            [*(f"smartctx.{table}" for table in SEARCH_TABLES), *(table for table, _ in _ROW_TABLES)],
        )
        posting_rows = posting_rows_engine(connection, commit)
        uncached = postgres_engine("PostgreSQL, term lists (team/lexical.py)", connection, commit, None)
        cached = postgres_engine(
            "PostgreSQL, term lists, the commit's cache warm", connection, commit, lexical.ListCache()
        )
        # The baseline and the lists take turns, so that a change of load falls on both.
        for engine in (posting_rows, uncached, cached):
            results.append((engine, replay(engine, recorded)))
        counts_same = counts_equal(uncached, local, recorded)
        full_text_build_s = build_full_text(connection, commit)
        full_text = full_text_engine(connection, commit)
        results.append((full_text, replay(full_text, recorded)))
        reader = PostgresReader(connection, commit)
        pg_packs, pg_ms = search_packs(index_path, reader, tasks, budget, sources, counter)

    def different(packs: list[ContextPack], reference: list[ContextPack]) -> list[int]:
        pairs = enumerate(zip(packs, reference, strict=True))
        return [number for number, (ours, theirs) in pairs if pack_key(ours) != pack_key(theirs)]

    engines: dict[str, Any] = {}
    for engine, result in results:
        engines[engine.name] = {
            "task_ms": result.task_ms(),
            "call_ms": {kind: result.calls(kind) for kind in ("counts", "symbols", "files")},
            "agreement": agreement(result, results[0][1]),
        }
    return {
        "tasks": len(tasks),
        "budget": budget,
        "publish_s": publish_s,
        "rows": rows,
        "bytes": sizes,
        "posting_rows_build_s": rows_build_s,
        "full_text_build_s": full_text_build_s,
        "counts_equal": counts_same,
        "engines": engines,
        "packs": {
            "postgres_vs_local": different(pg_packs, local_packs),
            "local_ms": local_ms,
            "postgres_ms": pg_ms,
        },
    }


def report(results: dict[str, Any]) -> None:
    print(f"## Lexical search in PostgreSQL against tantivy ({results['repo']}, {results['tasks']} tasks)\n")
    print(f"load: {results['load']['before']}\n")
    sizes = results["bytes"]
    total_bytes = sum(size["table"] + size["indexes"] for size in sizes.values())
    counted = ", ".join(f"{table} {results['rows'][table]:,} rows" for table in SEARCH_TABLES)
    print(f"publish {results['publish_s']:.1f} s; search tables {total_bytes / 1e6:.1f} MB ({counted})")
    for table, size in sizes.items():
        print(f"  {table}: table {size['table'] / 1e6:.1f} MB, indexes {size['indexes'] / 1e6:.1f} MB")
    print(f"document counts equal to tantivy's: {results['counts_equal']:.3f}\n")
    print(f"\n### Answers against tantivy (local), latency best of {ROUNDS}\n")
    print(
        "| engine | task p50 / p95 ms | counts p50 / p95 | symbols p50 / p95 | files p50 / p95"
        " | symbols top 10 / top 50 / identical | files top 10 / top 50 / identical | max score diff |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, engine in results["engines"].items():
        p50, p95 = median_and_p95(engine["task_ms"])
        cells = [f"{p50:.1f} / {p95:.1f}"]
        for kind in ("counts", "symbols", "files"):
            values = engine["call_ms"][kind]
            cells.append(f"{statistics.median(values):.2f} / {percentile(values, 0.95):.2f}")
        found = engine["agreement"]
        for kind in ("symbols", "files"):
            shares = (found[kind]["top10"], found[kind]["top50"], found[kind]["identical"])
            cells.append(" / ".join(f"{share:.3f}" for share in shares))
        gap = max(found[kind]["max_relative_score_difference"] for kind in ("symbols", "files"))
        cells.append(f"{gap:.1e}")
        print(f"| {name} | {' | '.join(cells)} |")
    packs = results["packs"]
    local_p50, local_p95 = median_and_p95(packs["local_ms"])
    pg_p50, pg_p95 = median_and_p95(packs["postgres_ms"])
    tasks = results["tasks"]
    print(
        f"\npacks that differ, of {tasks}: PostgreSQL against local {len(packs['postgres_vs_local'])}"
        f"\nbuild_context p50 / p95 ms: local {local_p50:.0f} / {local_p95:.0f},"
        f" with PostgreSQL's search {pg_p50:.0f} / {pg_p95:.0f}"
        f"\nthe baseline's rows built in {results['posting_rows_build_s']:.1f} s,"
        f" full-text tables in {results['full_text_build_s']:.1f} s"
    )


if __name__ == "__main__":
    main()
