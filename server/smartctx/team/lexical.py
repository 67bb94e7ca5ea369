"""Lexical search over a published commit: each term's list read from PostgreSQL, scored here as
tantivy scores locally.

A published commit holds, for each term, the definitions and the files holding it, each with the
term's frequency in the local engine's weighted words and the document's length as tantivy scores
it (postings.py), as one row of packed arrays per term (schema_pg_v4.sql). This module answers the
three questions the local snapshot asks its lexical index (store/snapshot.py): the top-k definitions
and the top-k files for a set of weighted terms, and how many definitions hold a term. A search reads
its terms' lists, one index lookup each, and scores them with numpy. It replaced BM25 summed in SQL
over one row per posting, which took 5 to 10 times as long on django and grew with the corpus
(bench/latency/pg_search.py; architecture.md, *The team index*); PostgreSQL's full-text search was
measured before that and left, since its ``ts_rank`` has no inverse document frequency and no
per-term weight, so cannot rank as BM25 does.

The score is tantivy's BM25 (``src/query/bm25.rs``), term by term, summed over the query's terms:

    weight(t) = boost(t) * idf(t) * (1 + K1),  idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
    score(d)  = sum over t of weight(t) * tf / (tf + K1 * (1 - B + B * norm(d) / average))

with the details of tantivy's that decide ties and near ties copied:

* **The length is bucketed.** ``norm(d)`` is the bottom of the bucket of the document's length
  (postings.py), while the average is the exact total of words over the number of documents.
* **The marker document counts.** Each local tantivy index holds one document without words that
  records its generation (store/lexical.py); it counts in ``N`` and in the average's denominator.
* **Ties by id.** The local top-k orders equal scores by row id, as :func:`top` does.

Tantivy computes in 32-bit floats and this in 64-bit ones, so scores agree to about seven digits,
and two documents whose scores differ only in the last bit of a 32-bit float may swap places.

A commit's rows never change once it is complete, so its corpus (documents and words) is read once,
by :func:`searched_commit`, and the lists read recently are kept for its later searches
(:class:`ListCache`).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from smartctx.store.reader import ReaderUnavailableError

# Tantivy's BM25 parameters (src/query/bm25.rs).
K1 = 1.2
B = 0.75
# The documents a local tantivy index counts besides its rows: its generation marker
# (store/lexical.py), which has no words.
LOCAL_EXTRA_DOCUMENTS = 1
# Scores are compared to this many decimal places. Two documents with the same frequencies and norms
# are tied in tantivy and ordered by id; here their sums may add the same parts in another order and
# differ in the last bits of a 64-bit float, about 1e-14 of the score, which the rounding removes.
# Tantivy itself tells scores apart only to about 1e-7 of their value (32 bits).
SCORE_PLACES = 9
# How the lists' arrays are packed (schema_pg_v4.sql): 32-bit big-endian integers, int4send's bytes.
PACKED = np.dtype(">i4")
# The bytes of lists a commit's cache keeps: a few searches' worth of common terms' lists (django's
# longest list, "self" in its files, is 2,600 documents, 31 kB; a 100k-file monorepo's longest are
# a few hundred thousand, a few MB).
LIST_CACHE_BYTES = 64 * 2**20

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Corpus:
    """One kind of document of a commit (definitions or files) as BM25 counts it."""

    documents: int
    words: int

    @property
    def average_length(self) -> float:
        return self.words / self.documents


@dataclass(frozen=True, slots=True)
class SearchedCommit:
    """A complete published commit and its two corpora."""

    commit_id: int
    symbols: Corpus
    files: Corpus


def searched_commit(connection: psycopg.Connection[TupleRow], commit_id: int) -> SearchedCommit:
    """The corpora of a complete commit, read once for all its searches."""

    def corpus(lengths: str) -> Corpus:
        row = connection.execute(
            sql.SQL("SELECT count(*), coalesce(sum(length), 0) FROM smartctx.{} WHERE commit_id = %s").format(
                sql.Identifier(lengths)
            ),
            (commit_id,),
        ).fetchone()
        assert row is not None
        return Corpus(int(row[0]) + LOCAL_EXTRA_DOCUMENTS, int(row[1]))

    return SearchedCommit(commit_id, corpus("symbol_lengths"), corpus("file_lengths"))


class TermList(NamedTuple):
    """The documents of a commit holding one term: their ids, the term's frequency in each and each
    one's norm, position by position."""

    ids: IntArray
    frequencies: IntArray
    norms: IntArray

    @property
    def bytes(self) -> int:
        return self.ids.nbytes + self.frequencies.nbytes + self.norms.nbytes


@dataclass(frozen=True, slots=True)
class ListsTable:
    """One kind of a commit's documents (definitions or files): the table of its lists."""

    name: str
    select: sql.Composed
    counts: sql.Composed


def _lists_table(name: str) -> ListsTable:
    table = sql.Identifier(name)
    return ListsTable(
        name,
        # A term's parts (one per shard it was published in) in order, so that the joined list is
        # the same on every read.
        sql.SQL(
            "SELECT term, ids, frequencies, norms FROM smartctx.{} WHERE commit_id = %s AND term = ANY(%s)"
            " ORDER BY term, part"
        ).format(table),
        sql.SQL(
            "SELECT term, sum(documents) FROM smartctx.{} WHERE commit_id = %s AND term = ANY(%s)"
            " GROUP BY term"
        ).format(table),
    )


SYMBOL_LISTS = _lists_table("symbol_lists")
FILE_LISTS = _lists_table("file_lists")


class ListCache:
    """The lists of one commit read most recently, up to ``capacity`` bytes, for any thread: a
    published commit never changes, so a list read once holds for every later search of it."""

    def __init__(self, capacity: int = LIST_CACHE_BYTES) -> None:
        self._capacity = capacity
        self._lists: OrderedDict[tuple[str, str], TermList] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, table: ListsTable, term: str) -> TermList | None:
        with self._lock:
            found = self._lists.get((table.name, term))
            if found is not None:
                self._lists.move_to_end((table.name, term))
            return found

    def put(self, table: ListsTable, term: str, found: TermList) -> None:
        if found.bytes > self._capacity:
            return
        with self._lock:
            if (table.name, term) in self._lists:
                return
            self._lists[(table.name, term)] = found
            self._bytes += found.bytes
            while self._bytes > self._capacity:
                _, dropped = self._lists.popitem(last=False)
                self._bytes -= dropped.bytes


def term_lists(
    connection: psycopg.Connection[TupleRow],
    table: ListsTable,
    commit_id: int,
    terms: Iterable[str],
    cache: ListCache | None = None,
) -> dict[str, TermList]:
    """The list of each of ``terms`` some document holds (those none holds are left out), from
    ``cache`` where it has them, else read in one statement (and kept there)."""
    found: dict[str, TermList] = {}
    missing: list[str] = []
    for term in sorted(set(terms)):
        cached = cache.get(table, term) if cache is not None else None
        if cached is None:
            missing.append(term)
        else:
            found[term] = cached
    if not missing:
        return found
    parts: dict[str, list[tuple[bytes, bytes, bytes]]] = {}
    for term, ids, frequencies, norms in connection.execute(table.select, (commit_id, missing)):
        arrays = (bytes(ids), bytes(frequencies), bytes(norms))
        sizes = {len(array) for array in arrays}
        if len(sizes) != 1 or sizes.pop() % PACKED.itemsize:
            # A damaged row (a bad restore, a hand edit) fails this read, and so the base, which the
            # editor then answers without, rather than a search that scores positions apart.
            lengths = ", ".join(str(len(array)) for array in arrays)
            raise ReaderUnavailableError(
                f"the published list of {term!r} in smartctx.{table.name} is damaged (arrays of {lengths}"
                " bytes, not as long as each other in whole integers): publish the commit again"
            )
        parts.setdefault(str(term), []).append(arrays)
    for term, packed in parts.items():
        read = TermList(*(_unpacked([part[column] for part in packed]) for column in range(3)))
        found[term] = read
        if cache is not None:
            cache.put(table, term, read)
    return found


def _unpacked(parts: Sequence[bytes]) -> IntArray:
    return np.concatenate([np.frombuffer(part, PACKED) for part in parts]).astype(np.int32)


def document_counts(
    connection: psycopg.Connection[TupleRow], commit: SearchedCommit, terms: Iterable[str], at_most: int
) -> dict[str, int]:
    """How many of the commit's definitions hold each term, up to ``at_most``; a term in none is left
    out, as the local snapshot leaves it out. Read from the lists' counts, not their arrays."""
    wanted = sorted(set(terms))
    if not wanted or at_most <= 0:
        return {}
    rows = connection.execute(SYMBOL_LISTS.counts, (commit.commit_id, wanted))
    return {str(term): min(at_most, int(count)) for term, count in rows if count}


def search_symbols(
    connection: psycopg.Connection[TupleRow],
    commit: SearchedCommit,
    weighted_terms: Mapping[str, float],
    limit: int,
    cache: ListCache | None = None,
) -> list[tuple[int, float]]:
    """The ``limit`` definitions of the commit best matching any of the terms, as (node id, BM25
    score), best first, ties by id; a term's weight multiplies its part of the score."""
    return _search(connection, SYMBOL_LISTS, commit.commit_id, commit.symbols, weighted_terms, limit, cache)


def search_files(
    connection: psycopg.Connection[TupleRow],
    commit: SearchedCommit,
    weighted_terms: Mapping[str, float],
    limit: int,
    cache: ListCache | None = None,
) -> list[tuple[int, float]]:
    """The ``limit`` files of the commit best matching any of the terms by their whole text, as
    (file id, BM25 score), best first, ties by id."""
    return _search(connection, FILE_LISTS, commit.commit_id, commit.files, weighted_terms, limit, cache)


def _search(
    connection: psycopg.Connection[TupleRow],
    table: ListsTable,
    commit_id: int,
    corpus: Corpus,
    weighted_terms: Mapping[str, float],
    limit: int,
    cache: ListCache | None,
) -> list[tuple[int, float]]:
    if limit <= 0 or not weighted_terms or not corpus.words:
        return []
    lists = term_lists(connection, table, commit_id, weighted_terms, cache)
    weights = {
        term: weighted_terms[term] * idf(corpus.documents, len(found.ids)) * (1 + K1)
        for term, found in lists.items()
    }
    return top(lists, weights, corpus.average_length, None, limit)


def term_frequencies(
    connection: psycopg.Connection[TupleRow],
    table: ListsTable,
    commit_id: int,
    terms: Iterable[str],
    hidden: IntArray,
    cache: ListCache | None = None,
) -> dict[str, tuple[int, int]]:
    """For each term some document holds: how many hold it, and how many of those are ``hidden``
    (ids, sorted)."""
    return {
        term: (len(found.ids), int(np.isin(found.ids, hidden, assume_unique=True).sum()))
        for term, found in term_lists(connection, table, commit_id, terms, cache).items()
    }


def top_weighted(
    connection: psycopg.Connection[TupleRow],
    table: ListsTable,
    commit_id: int,
    weights: Mapping[str, float],
    average: float,
    hidden: IntArray,
    limit: int,
    cache: ListCache | None = None,
) -> list[tuple[int, float]]:
    """The ``limit`` documents best matching terms of the given weights (boost * idf * (1 + K1)),
    scored against the ``average`` length, leaving out ``hidden``: best first, ties by id."""
    if limit <= 0 or not weights:
        return []
    return top(term_lists(connection, table, commit_id, weights, cache), weights, average, hidden, limit)


def top(
    lists: Mapping[str, TermList],
    weights: Mapping[str, float],
    average: float,
    hidden: IntArray | None,
    limit: int,
) -> list[tuple[int, float]]:
    """The ``limit`` documents of ``lists`` best scored with the terms' ``weights`` against the
    ``average`` length, but ``hidden``, as (id, score): best first, ties (to SCORE_PLACES) by id."""
    ids: list[IntArray] = []
    parts: list[FloatArray] = []
    for term in sorted(weights.keys() & lists.keys()):
        found = lists[term]
        frequencies = found.frequencies.astype(np.float64)
        norms = found.norms.astype(np.float64)
        ids.append(found.ids)
        parts.append(weights[term] * frequencies / (frequencies + K1 * (1 - B + B * norms / average)))
    if limit <= 0 or not ids:
        return []
    documents, positions = np.unique(np.concatenate(ids), return_inverse=True)
    scores = np.bincount(positions, weights=np.concatenate(parts))
    if hidden is not None and len(hidden):
        # Left out once summed: one pass over the documents found, not one over each term's list.
        shown = ~np.isin(documents, hidden, assume_unique=True)
        documents, scores = documents[shown], scores[shown]
    keys = np.round(scores * 10.0**SCORE_PLACES)
    if len(documents) > limit:
        # Every document scoring at least the limit-th best; ties at the edge are cut by id below.
        kept = keys >= np.partition(keys, len(keys) - limit)[len(keys) - limit]
        documents, scores, keys = documents[kept], scores[kept], keys[kept]
    order = np.lexsort((documents, -keys))[:limit]
    return [(int(documents[place]), float(scores[place])) for place in order]


def idf(documents: int, frequency: int) -> float:
    """Tantivy's inverse document frequency of a term in ``frequency`` of ``documents`` documents."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def bm25(weight: float, frequency: int, norm: int, average: float) -> float:
    """One term's part of a document's score, ``weight`` being the term's boost times its idf times
    (1 + K1)."""
    return weight * frequency / (frequency + K1 * (1 - B + B * norm / average))
