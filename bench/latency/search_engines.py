"""Where a query's time goes, and the pipeline's own lexical searches on three engines side by side.

Two parts, one run:

1. **Profile.** Every SWE-bench Lite problem statement of one repository goes through
   ``build_context`` on a real index, with the snapshot's lexical calls timed (exclusive time, so a
   call nested in another is counted once): the per-term document counts that weigh the terms, the
   BM25 query over definitions, and the BM25 query over whole files. The calls the pipeline makes are
   recorded: the exact FTS5 query strings, limits and counted terms.
2. **Engines.** The recorded calls are replayed, task by task, on the same rows (read back from
   ``search_words``, never re-parsed) loaded into each engine: FTS5 as the index held it before
   store/lexical.py (SQLite of the ``sqlite3`` module), FTS5 of the SQLite that the ``apsw`` wheel
   bundles (with ``contentless_delete=1``), and tantivy (block-max WAND top-k), per column and with
   one weighted field as store/lexical.py has it. Each engine is built from the same rows, timed,
   and measured on disk. Per engine: p50/p95 of each task's lexical work and of each
   kind of call, and how much of FTS5's answer it returns (top-k overlap).

    .venv/bin/pip install -e ".[bench]"    # tantivy and apsw
    .venv/bin/python -m bench.latency.search_engines /work/benchrepos/engine-django/django \\
        --index-dir /work/benchrepos/engine-django/index --work /work/benchrepos/engine-django/engines

A third part re-indexes growing shares of the files (with the same text) in the tantivy index and
compares its answers with the fresh build's: what a live index, which deletes and adds documents,
would answer differently from a fresh one.

The engines' answers are compared by node id; scores differ by engine (FTS5's bm25 sums a weighted
term frequency over all columns under one length norm, tantivy sums per-field BM25), so only the
order and membership are compared.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import statistics
import time
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from bench.repository import indexed_store
from bench.stats import percentile
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.database import connect
from smartctx.store.rows import unpack_search_words
from smartctx.store.snapshot import IndexSnapshot

SYMBOL_COLUMNS = ("name", "qualified_name", "signature", "doc", "body", "path")
# The column weights of IndexSnapshot.search and .search_files, in column order.
SYMBOL_WEIGHTS = (10.0, 4.0, 2.0, 1.0, 1.0, 2.0)
FILE_COLUMNS = ("body", "path")
FILE_WEIGHTS = (1.0, 3.0)
# Overlap is reported over the whole answer and over its head, which decides the candidates.
HEAD = {"symbols": 50, "files": 10}
# Replays of the whole recorded workload per engine; the best of them per call is reported.
ROUNDS = 2


# ---------------------------------------------------------------------------------------------------
# Part 1: the pipeline, profiled


@dataclass
class TaskCalls:
    """What one task asked the lexical index, in order, and how long each kind of call took."""

    counts: list[tuple[str, int]] = field(default_factory=list)
    symbols: list[tuple[str, int]] = field(default_factory=list)
    files: list[tuple[str, int]] = field(default_factory=list)
    ms: Counter[str] = field(default_factory=Counter)


class Recorder:
    """Wraps the snapshot's lexical methods: records their calls and their exclusive time."""

    def __init__(self) -> None:
        self.task = TaskCalls()
        self._stack: list[float] = []

    def install(self) -> None:
        originals = {
            "counts": IndexSnapshot.document_counts,
            "symbols": IndexSnapshot.search,
            "files": IndexSnapshot.search_files,
        }

        def timed(kind: str, original: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(snapshot: IndexSnapshot, *args: Any) -> Any:
                self._stack.append(0.0)
                began = time.perf_counter()
                result = original(snapshot, *args)
                elapsed = (time.perf_counter() - began) * 1000
                nested = self._stack.pop()
                self.task.ms[kind] += elapsed - nested
                if self._stack:
                    self._stack[-1] += elapsed
                self._record(kind, snapshot, args)
                return result

            return wrapper

        for kind, original in originals.items():
            setattr(
                IndexSnapshot,
                {"counts": "document_counts", "symbols": "search", "files": "search_files"}[kind],
                timed(kind, original),
            )

    def _record(self, kind: str, snapshot: IndexSnapshot, args: tuple[Any, ...]) -> None:
        if kind == "counts":
            terms, at_most = args
            self.task.counts.extend((term, at_most) for term in sorted(set(terms)))
            return
        weighted, limit = args
        # The terms the snapshot chose (memoised there), written as the FTS5 query the index used to
        # run: each term quoted, repeated by its weight.
        terms = snapshot._query_terms(weighted, keep_common=kind == "files")
        if terms and limit > 0:
            query = " OR ".join(f'"{term}"' for term, weight in sorted(terms.items()) for _ in range(weight))
            getattr(self.task, kind).append((query, limit))


def profile(
    root: Path, index_dir: Path, tasks: list[str], budget: int
) -> tuple[list[dict[str, Any]], list[TaskCalls]]:
    store = indexed_store(root, index_dir)
    sources = WorkspaceSources(root)
    counter = TokenCounter()
    recorder = Recorder()
    recorder.install()
    rows: list[dict[str, Any]] = []
    calls: list[TaskCalls] = []
    for task in tasks:
        recorder.task = TaskCalls()
        began = time.perf_counter()
        with store.snapshot() as snapshot:
            pack = build_context(
                ContextRequest(task, ContextOptions(budget_tokens=budget)), snapshot, counter, sources
            )
        total = (time.perf_counter() - began) * 1000
        rows.append({"total_ms": total, "stages_ms": pack.timings_ms, "lexical_ms": dict(recorder.task.ms)})
        calls.append(recorder.task)
    store.close()
    return rows, calls


# ---------------------------------------------------------------------------------------------------
# Part 2: the engines


@dataclass(frozen=True)
class Rows:
    """The full-text rows of the index, as the writer inserted them."""

    symbols: list[tuple[int, tuple[str, ...]]]
    files: list[tuple[int, tuple[str, ...]]]
    # The file id of each symbol row, for re-indexing a share of the files.
    file_of: dict[int, int]


def read_rows(index_path: Path) -> Rows:
    db = connect(index_path, read_only=True)
    file_of = {int(node_id): int(file_id) for node_id, file_id in db.execute("SELECT id, file_id FROM nodes")}
    symbols: list[tuple[int, tuple[str, ...]]] = []
    files: list[tuple[int, tuple[str, ...]]] = []
    for file_id, packed_ids, packed_words in db.execute(
        "SELECT file_id, node_ids, words FROM search_words ORDER BY file_id"
    ):
        node_ids = array("q")
        node_ids.frombytes(packed_ids)
        path_words, nodes = unpack_search_words(packed_words)
        for node_id, words in zip(node_ids, nodes, strict=True):
            symbols.append((node_id, (*words, path_words)))
        files.append((file_id, (" ".join(words[4] for words in nodes), path_words)))
    db.close()
    return Rows(symbols, files, file_of)


def parse_match(query: str) -> dict[str, int]:
    """The terms of a ``"a" OR "a" OR "b"`` query, each with how often it is repeated (its weight)."""
    return dict(Counter(part.strip().strip('"') for part in query.split(" OR ")))


class Engine(Protocol):
    name: str

    def build(self, rows: Rows, folder: Path) -> None: ...
    def counts(self, term: str, at_most: int) -> int: ...
    def symbols(self, query: str, limit: int) -> list[int]: ...
    def files(self, query: str, limit: int) -> list[int]: ...
    def close(self) -> None: ...


_SYMBOL_SQL = (
    "SELECT rowid, rank FROM (SELECT rowid, bm25(search, {weights}) AS rank"
    " FROM search WHERE search MATCH ?) ORDER BY rank, rowid LIMIT ?"
)
_FILE_SQL = (
    "SELECT rowid FROM (SELECT rowid, bm25(file_search, {weights}) AS rank"
    " FROM file_search WHERE file_search MATCH ? ORDER BY rank LIMIT ?) ORDER BY rank, rowid"
)
_COUNT_SQL = "SELECT count(*) FROM (SELECT rowid FROM search WHERE search MATCH ? LIMIT ?)"


class Fts5:
    """FTS5 contentless tables, as schema_v1.sql declares them, on the given SQLite binding."""

    def __init__(self, name: str, connect_to: Callable[[Path], Any], table_options: str) -> None:
        self.name = name
        self._connect_to = connect_to
        self._options = table_options
        self._db: Any = None

    def build(self, rows: Rows, folder: Path) -> None:
        folder.mkdir(parents=True)
        db = self._connect_to(folder / "fts.sqlite")
        tokenize = "tokenize = 'unicode61 remove_diacritics 2'"
        db.execute(
            f"CREATE VIRTUAL TABLE search USING fts5({', '.join(SYMBOL_COLUMNS)},"
            f" {self._options}, {tokenize})"
        )
        db.execute(
            f"CREATE VIRTUAL TABLE file_search USING fts5({', '.join(FILE_COLUMNS)},"
            f" {self._options}, {tokenize})"
        )
        db.execute("BEGIN")
        db.executemany(
            f"INSERT INTO search(rowid, {', '.join(SYMBOL_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(node_id, *words) for node_id, words in rows.symbols],
        )
        db.executemany(
            "INSERT INTO file_search(rowid, body, path) VALUES (?, ?, ?)", [(i, *w) for i, w in rows.files]
        )
        db.execute("INSERT INTO search(search) VALUES ('optimize')")
        db.execute("INSERT INTO file_search(file_search) VALUES ('optimize')")
        db.execute("COMMIT")
        self._db = db

    def counts(self, term: str, at_most: int) -> int:
        return int(next(iter(self._db.execute(_COUNT_SQL, (f'"{term}"', at_most))))[0])

    def symbols(self, query: str, limit: int) -> list[int]:
        sql = _SYMBOL_SQL.format(weights=", ".join(map(str, SYMBOL_WEIGHTS)))
        return [int(rowid) for rowid, _ in self._db.execute(sql, (query, limit))]

    def files(self, query: str, limit: int) -> list[int]:
        sql = _FILE_SQL.format(weights=", ".join(map(str, FILE_WEIGHTS)))
        return [int(rowid) for (rowid,) in self._db.execute(sql, (query, limit))]

    def close(self) -> None:
        self._db.close()


def _stdlib_connection(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA cache_size=-65536")
    return db


def _apsw_connection(path: Path) -> Any:
    import apsw

    db = apsw.Connection(str(path))
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA cache_size=-65536")
    return db


class Tantivy:
    """One tantivy index per table, queried as a pure disjunction of term scorers (all SHOULD),
    which tantivy answers with block-max WAND for a top-k.

    Per column (``weighted=False``): a term query per (term, column), boosted by the column's
    weight times the term's repeats; tantivy then sums a BM25 per column, each saturating on its
    own. Weighted (``weighted=True``): one field holding each column's words repeated by the
    column's weight, so a term's frequency there is FTS5's weighted frequency (the sum over columns
    of weight times count) under one saturation, as FTS5's bm25() computes it; only the length norm
    differs (tantivy's is of the weighted text, FTS5's of the plain one). Document frequency is then
    that one field's, which is FTS5's (rows holding the term in any column).
    """

    def __init__(self, *, weighted: bool) -> None:
        self.name = "tantivy, one weighted field" if weighted else "tantivy, field per column"
        self.weighted = weighted
        self._indexes: dict[str, Any] = {}
        self._searchers: dict[str, Any] = {}
        self._rows = Rows([], [], {})

    def build(self, rows: Rows, folder: Path) -> None:
        import tantivy

        self._rows = rows
        for table, columns, table_rows in (
            ("search", SYMBOL_COLUMNS, rows.symbols),
            ("file_search", FILE_COLUMNS, rows.files),
        ):
            fields = ("words",) if self.weighted else columns
            builder = tantivy.SchemaBuilder()
            builder.add_integer_field("id", stored=False, indexed=False, fast=True)
            builder.add_integer_field("file", stored=False, indexed=True)
            for name in fields:
                builder.add_text_field(name, stored=False, index_option="freq", tokenizer_name="words")
            schema = builder.build()
            (folder / table).mkdir(parents=True)
            index = tantivy.Index(schema, path=str(folder / table))
            index.register_tokenizer(
                "words",
                tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
                .filter(tantivy.Filter.lowercase())
                .filter(tantivy.Filter.ascii_fold())
                .build(),
            )
            self._indexes[table] = (index, schema, fields)
            writer = index.writer(heap_size=128_000_000, num_threads=1)
            for row_id, words in table_rows:
                writer.add_document(self._document(table, row_id, words))
            writer.commit()
            writer.wait_merging_threads()
            index.reload()
            self._searchers[table] = index.searcher()

    def _document(self, table: str, row_id: int, words: tuple[str, ...]) -> Any:
        import tantivy

        columns, weights = (
            (SYMBOL_COLUMNS, SYMBOL_WEIGHTS) if table == "search" else (FILE_COLUMNS, FILE_WEIGHTS)
        )
        file_id = self._rows.file_of[row_id] if table == "search" else row_id
        if not self.weighted:
            return tantivy.Document(id=row_id, file=file_id, **dict(zip(columns, words, strict=True)))
        text = " ".join(
            " ".join([column_words] * int(weight))
            for column_words, weight in zip(words, weights, strict=True)
            if column_words
        )
        return tantivy.Document(id=row_id, file=file_id, words=text)

    def reindex(self, file_ids: set[int]) -> None:
        """Delete these files' documents and add the same ones again, as a live update does: the
        text is unchanged, so any change in an answer comes from the index statistics alone."""
        for table, table_rows in (("search", self._rows.symbols), ("file_search", self._rows.files)):
            index, _, _ = self._indexes[table]
            writer = index.writer(heap_size=128_000_000, num_threads=1)
            for file_id in sorted(file_ids):
                writer.delete_documents_by_term("file", file_id)
            for row_id, words in table_rows:
                if (self._rows.file_of[row_id] if table == "search" else row_id) in file_ids:
                    writer.add_document(self._document(table, row_id, words))
            writer.commit()
            writer.wait_merging_threads()
            index.reload()
            self._searchers[table] = index.searcher()

    def _query(self, table: str, query: str, weights: tuple[float, ...]) -> Any:
        import tantivy

        _, schema, fields = self._indexes[table]
        field_weights = (1.0,) if self.weighted else weights
        clauses = [
            (
                tantivy.Occur.Should,
                tantivy.Query.boost_query(tantivy.Query.term_query(schema, name, term), weight * repeats),
            )
            for term, repeats in parse_match(query).items()
            for name, weight in zip(fields, field_weights, strict=True)
        ]
        return tantivy.Query.boolean_query(clauses)

    def _top(self, table: str, query: str, weights: tuple[float, ...], limit: int) -> list[int]:
        searcher = self._searchers[table]
        hits = searcher.search(self._query(table, query, weights), limit=limit, count=False).hits
        # Ties are broken by id, as FTS5's ORDER BY rank, rowid does.
        ids = searcher.fast_field_values("id", [address for _, address in hits])
        return [row_id for _, row_id in sorted(zip((-score for score, _ in hits), ids, strict=True))]

    def counts(self, term: str, at_most: int) -> int:
        import tantivy

        searcher = self._searchers["search"]
        if self.weighted:
            return min(at_most, int(searcher.doc_freq("words", term)))
        _, schema, fields = self._indexes["search"]
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, name, term)) for name in fields]
        )
        return min(at_most, int(searcher.search(query, limit=1, count=True).count))

    def symbols(self, query: str, limit: int) -> list[int]:
        return self._top("search", query, SYMBOL_WEIGHTS, limit)

    def files(self, query: str, limit: int) -> list[int]:
        return self._top("file_search", query, FILE_WEIGHTS, limit)

    def close(self) -> None:
        self._searchers.clear()
        self._indexes.clear()


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def overlap(answer: list[int], reference: list[int], head: int | None = None) -> float:
    ours, theirs = (answer, reference) if head is None else (answer[:head], reference[:head])
    return len(set(ours) & set(theirs)) / len(theirs) if theirs else 1.0


@dataclass
class EngineResult:
    build_s: float
    bytes: int
    task_ms: list[float]
    call_ms: dict[str, list[float]]
    answers: list[dict[str, list[list[int]]]]


def replay(
    engine: Engine, calls: list[TaskCalls]
) -> tuple[list[float], dict[str, list[float]], list[dict[str, list[list[int]]]]]:
    """Best of ``ROUNDS`` per call; a task's time is the sum of its calls' best times."""
    best: list[dict[str, list[float]]] = []
    answers: list[dict[str, list[list[int]]]] = []
    for round_number in range(ROUNDS):
        for task_number, task in enumerate(calls):
            if round_number == 0:
                best.append({"counts": [], "symbols": [], "files": []})
                answers.append({"symbols": [], "files": []})
            timing = best[task_number]
            for kind, run in (
                ("counts", lambda call: engine.counts(*call)),
                ("symbols", lambda call: engine.symbols(*call)),
                ("files", lambda call: engine.files(*call)),
            ):
                for position, call in enumerate(getattr(task, kind)):
                    began = time.perf_counter()
                    answer = run(call)
                    elapsed = (time.perf_counter() - began) * 1000
                    if round_number == 0:
                        timing[kind].append(elapsed)
                        if kind != "counts":
                            answers[task_number][kind].append(answer)
                    else:
                        timing[kind][position] = min(timing[kind][position], elapsed)
    task_ms = [sum(sum(values) for values in timing.values()) for timing in best]
    call_ms = {kind: [sum(timing[kind]) for timing in best] for kind in ("counts", "symbols", "files")}
    return task_ms, call_ms, answers


def engines() -> list[Engine]:
    return [
        Fts5(f"FTS5 (SQLite {sqlite3.sqlite_version}, as now)", _stdlib_connection, "content = ''"),
        Fts5(_apsw_name(), _apsw_connection, "content = '', contentless_delete = 1"),
        Tantivy(weighted=False),
        Tantivy(weighted=True),
    ]


def _apsw_name() -> str:
    import apsw

    return f"FTS5 (SQLite {apsw.sqlite_lib_version()} via apsw, contentless_delete)"


def counts_agree(engine: Engine, reference: Engine, calls: list[TaskCalls]) -> float:
    pairs = {pair for task in calls for pair in task.counts}
    same = sum(engine.counts(*pair) == reference.counts(*pair) for pair in sorted(pairs))
    return same / len(pairs) if pairs else 1.0


# Shares of the files re-indexed, one after the other, to see how far tantivy's answers drift from
# those of a fresh build of the same rows.
DRIFT_SHARES = (0.01, 0.05, 0.30)
DRIFT_SEED = 12


def drift(
    engine: Tantivy, rows: Rows, calls: list[TaskCalls], fresh: list[dict[str, list[list[int]]]]
) -> list[dict[str, float]]:
    """Re-index growing shares of the files (same text) and compare the answers with the fresh ones.

    Tantivy's BM25 statistics (document frequency, average length) count deleted documents until
    a merge drops them, and the Python binding cannot ask for a merge."""
    drawn = random.Random(DRIFT_SEED)
    files = sorted({file_id for file_id, _ in rows.files})
    drawn.shuffle(files)
    found: list[dict[str, float]] = []
    done = 0
    for share in DRIFT_SHARES:
        upto = int(share * len(files))
        began = time.perf_counter()
        engine.reindex(set(files[done:upto]))
        update_s = time.perf_counter() - began
        done = upto
        same = {"symbols": 0, "files": 0}
        heads = {"symbols": [], "files": []}
        total = {"symbols": 0, "files": 0}
        for task, answers in zip(calls, fresh, strict=True):
            for kind, run in (("symbols", engine.symbols), ("files", engine.files)):
                for call, expected in zip(getattr(task, kind), answers[kind], strict=True):
                    answer = run(*call)
                    same[kind] += answer == expected
                    total[kind] += 1
                    heads[kind].append(overlap(answer, expected, HEAD[kind]))
        found.append(
            {
                "share": share,
                "files": upto,
                "update_s": update_s,
                **{f"{kind}_identical": same[kind] / max(1, total[kind]) for kind in same},
                **{f"{kind}_head_overlap": statistics.mean(heads[kind]) for kind in heads},
            }
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path)
    parser.add_argument("--repo", default="django/django")
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True, help="a scratch folder for the engines' indexes")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "search_engines.json")
    parser.add_argument(
        "--calls",
        type=Path,
        help="replay the calls recorded in this earlier JSON output instead of profiling again",
    )
    parser.add_argument(
        "--engine", action="append", help="only engines whose name starts with this (repeatable)"
    )
    args = parser.parse_args()
    tasks = problem_statements(args.repo, args.data)
    root = args.root.resolve()

    if args.calls:
        recorded = json.loads(args.calls.read_text())
        profiled = recorded["profile"]
        calls = [
            TaskCalls(
                [tuple(c) for c in task["counts"]],
                [tuple(c) for c in task["symbols"]],
                [tuple(c) for c in task["files"]],
            )
            for task in recorded["calls"]
        ]
    else:
        profiled, calls = profile(root, args.index_dir, tasks, args.budget)
    warm = profiled[1:]
    print(f"## Where a query's time goes ({args.repo}, {len(warm)} warm tasks, budget {args.budget})\n")
    print("| measure | p50 ms | p95 ms | mean ms |\n|---|---|---|---|")

    def line(label: str, values: list[float]) -> None:
        print(
            f"| {label} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f}"
            f" | {statistics.mean(values):.1f} |"
        )

    line("contextForTask", [row["total_ms"] for row in warm])
    for stage in warm[0]["stages_ms"]:
        line(f"· {stage}", [row["stages_ms"].get(stage, 0.0) for row in warm])
    for kind, label in (
        ("counts", "term document counts"),
        ("symbols", "BM25 over definitions"),
        ("files", "BM25 over files"),
    ):
        line(f"·· search: {label}", [row["lexical_ms"].get(kind, 0.0) for row in warm])
    line("·· search: all lexical calls", [sum(row["lexical_ms"].values()) for row in warm])
    line(
        "·· search: the rest (names, frames, node rows)",
        [row["stages_ms"]["search"] - sum(row["lexical_ms"].values()) for row in warm],
    )

    rows = read_rows(args.index_dir / "index-v1.sqlite")
    if args.work.exists():
        shutil.rmtree(args.work)
    results: dict[str, EngineResult] = {}
    built: list[Engine] = []
    for engine in engines():
        if args.engine and not any(engine.name.startswith(prefix) for prefix in args.engine):
            continue
        began = time.perf_counter()
        folder = args.work / f"engine-{len(built)}"
        engine.build(rows, folder)
        build_s = time.perf_counter() - began
        task_ms, call_ms, answers = replay(engine, calls[1:])
        results[engine.name] = EngineResult(build_s, folder_bytes(folder), task_ms, call_ms, answers)
        built.append(engine)
    reference_name = built[0].name
    reference = results[reference_name]
    agreement = {engine.name: counts_agree(engine, built[0], calls[1:]) for engine in built}
    drifted = [
        drift(engine, rows, calls[1:], results[engine.name].answers)
        for engine in built
        if isinstance(engine, Tantivy) and engine.weighted
    ]
    for engine in built:
        engine.close()

    print(
        f"\n## The pipeline's lexical calls replayed per engine ({len(calls) - 1} tasks, best of {ROUNDS})\n"
    )
    print(
        "| engine | build s | size MB | task p50 ms | task p95 ms | counts p95 | symbols p95 | files p95"
        f" | symbols overlap all / top {HEAD['symbols']} | files overlap all / top {HEAD['files']}"
        " | counts equal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    summary: dict[str, Any] = {}
    for name, result in results.items():
        overlaps: dict[str, tuple[float, float]] = {}
        for kind in ("symbols", "files"):
            whole, head = [], []
            for ours, theirs in zip(result.answers, reference.answers, strict=True):
                for answer, expected in zip(ours[kind], theirs[kind], strict=True):
                    whole.append(overlap(answer, expected))
                    head.append(overlap(answer, expected, HEAD[kind]))
            overlaps[kind] = (statistics.mean(whole), statistics.mean(head))
        print(
            f"| {name} | {result.build_s:.1f} | {result.bytes / 1e6:.1f}"
            f" | {statistics.median(result.task_ms):.1f}"
            f" | {percentile(result.task_ms, 0.95):.1f} | {percentile(result.call_ms['counts'], 0.95):.1f}"
            f" | {percentile(result.call_ms['symbols'], 0.95):.1f}"
            f" | {percentile(result.call_ms['files'], 0.95):.1f}"
            f" | {overlaps['symbols'][0]:.3f} / {overlaps['symbols'][1]:.3f}"
            f" | {overlaps['files'][0]:.3f} / {overlaps['files'][1]:.3f} | {agreement[name]:.3f} |"
        )
        summary[name] = {
            "build_s": result.build_s,
            "bytes": result.bytes,
            "task_ms": result.task_ms,
            "call_ms": result.call_ms,
            "overlap": overlaps,
            "counts_equal": agreement[name],
        }
    for found in drifted:
        print("\n## tantivy (one weighted field) after re-indexing some files with the same text\n")
        print(
            "| files re-indexed (cumulative) | update s | answers identical to a fresh build, symbols / files"
            f" | top {HEAD['symbols']} / top {HEAD['files']} overlap |"
        )
        print("|---|---|---|---|")
        for step in found:
            print(
                f"| {step['share']:.0%} ({step['files']}) | {step['update_s']:.2f}"
                f" | {step['symbols_identical']:.3f} / {step['files_identical']:.3f}"
                f" | {step['symbols_head_overlap']:.4f} / {step['files_head_overlap']:.4f} |"
            )
        summary["drift"] = found
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M"),
                "repo": args.repo,
                "profile": profiled,
                "calls": [{"counts": c.counts, "symbols": c.symbols, "files": c.files} for c in calls],
                "engines": summary,
            },
            indent=1,
        )
    )
    print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
