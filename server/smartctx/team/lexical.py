"""Lexical search over a published commit: BM25 in SQL over its postings, scored as tantivy scores locally.

A published commit holds, per definition and per file, each term's frequency in the local engine's
weighted words, the document's length and its length as tantivy scores it (postings.py). This module
answers the three questions the local snapshot asks its lexical index (store/snapshot.py): the top-k
definitions and the top-k files for a set of weighted terms, and how many definitions hold a term.
It was chosen by measurement over PostgreSQL's full-text search, whose ``ts_rank`` has no inverse
document frequency and no per-term weight, so cannot rank as BM25 does (``bench/latency/pg_search.py``;
architecture.md, *The team index*).

The score is tantivy's BM25 (``src/query/bm25.rs``), term by term, summed over the query's terms:

    weight(t) = boost(t) * idf(t) * (1 + K1),  idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
    score(d)  = sum over t of weight(t) * tf / (tf + K1 * (1 - B + B * norm(d) / average))

with the details of tantivy's that decide ties and near ties copied:

* **The length is bucketed.** ``norm(d)`` is the bottom of the bucket of the document's length
  (postings.py), while the average is the exact total of words over the number of documents.
* **The marker document counts.** Each local tantivy index holds one document without words that
  records its generation (store/lexical.py); it counts in ``N`` and in the average's denominator.
* **Ties by id.** The local top-k orders equal scores by row id, as the SQL here does.

Tantivy computes in 32-bit floats and this in 64-bit ones, so scores agree to about seven digits,
and two documents whose scores differ only in the last bit of a 32-bit float may swap places.

A commit's rows never change once it is complete, so its corpus (documents and words) is read once,
by :func:`searched_commit`, and passed to every search of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

# Tantivy's BM25 parameters (src/query/bm25.rs).
K1 = 1.2
B = 0.75
# The documents a local tantivy index counts besides its rows: its generation marker
# (store/lexical.py), which has no words.
LOCAL_EXTRA_DOCUMENTS = 1
# Scores are compared to this many decimal places. Two documents with the same frequencies and norms
# are tied in tantivy and ordered by id; here their sums may add the same parts in another order (the
# plan decides) and differ in the last bits of a 64-bit float, about 1e-14 of the score, which the
# rounding removes. Tantivy itself tells scores apart only to about 1e-7 of their value (32 bits).
SCORE_PLACES = 9


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


# One statement per search: each query term's document frequency and weight, then every posting of
# those terms scored and summed per document. The postings' key holds frequency and norm, so both
# passes read that one index. Scores are ordered to SCORE_PLACES decimal places, then by id.
_TOP_SQL = """
WITH weights AS (
    SELECT q.term, q.boost * ln(1 + (%(documents)s - count(*) + 0.5) / (count(*) + 0.5)) * (1 + %(k1)s)
        AS weight
    FROM unnest(%(terms)s::text[], %(boosts)s::float8[]) AS q (term, boost)
    JOIN smartctx.{postings} p ON p.commit_id = %(commit)s AND p.term = q.term
    GROUP BY q.term, q.boost
)
SELECT {id}, score FROM (
    SELECT p.{id}, sum(
        w.weight * p.frequency / (p.frequency + %(k1)s * (1 - %(b)s + %(b)s * p.norm / %(average)s))
    ) AS score
    FROM weights w
    JOIN smartctx.{postings} p ON p.commit_id = %(commit)s AND p.term = w.term
    GROUP BY p.{id}
) AS scored
ORDER BY round(score * %(scale)s) DESC, {id}
LIMIT %(limit)s
"""
_SYMBOLS_TOP = sql.SQL(_TOP_SQL).format(
    postings=sql.Identifier("symbol_postings"), id=sql.Identifier("node_id")
)
_FILES_TOP = sql.SQL(_TOP_SQL).format(postings=sql.Identifier("file_postings"), id=sql.Identifier("file_id"))
# A term's count stops at ``at_most`` postings: the caller only tells rare terms from common ones.
_COUNTS_SQL = """
SELECT q.term, (
    SELECT count(*) FROM (
        SELECT 1 FROM smartctx.symbol_postings p
        WHERE p.commit_id = %(commit)s AND p.term = q.term LIMIT %(at_most)s
    ) AS found
)
FROM unnest(%(terms)s::text[]) AS q (term)
"""


def search_symbols(
    connection: psycopg.Connection[TupleRow],
    commit: SearchedCommit,
    weighted_terms: Mapping[str, int],
    limit: int,
) -> list[tuple[int, float]]:
    """The ``limit`` definitions of the commit best matching any of the terms, as (node id, BM25
    score), best first, ties by id; a term's weight multiplies its part of the score."""
    return _top(connection, _SYMBOLS_TOP, commit.commit_id, commit.symbols, weighted_terms, limit)


def search_files(
    connection: psycopg.Connection[TupleRow],
    commit: SearchedCommit,
    weighted_terms: Mapping[str, int],
    limit: int,
) -> list[tuple[int, float]]:
    """The ``limit`` files of the commit best matching any of the terms by their whole text, as
    (file id, BM25 score), best first, ties by id."""
    return _top(connection, _FILES_TOP, commit.commit_id, commit.files, weighted_terms, limit)


def document_counts(
    connection: psycopg.Connection[TupleRow], commit: SearchedCommit, terms: Iterable[str], at_most: int
) -> dict[str, int]:
    """How many of the commit's definitions hold each term, up to ``at_most``; a term in none is left
    out, as the local snapshot leaves it out."""
    wanted = sorted(set(terms))
    if not wanted or at_most <= 0:
        return {}
    rows = connection.execute(_COUNTS_SQL, {"commit": commit.commit_id, "terms": wanted, "at_most": at_most})
    return {str(term): int(count) for term, count in rows if count}


def _top(
    connection: psycopg.Connection[TupleRow],
    statement: sql.Composed,
    commit_id: int,
    corpus: Corpus,
    weighted_terms: Mapping[str, int],
    limit: int,
) -> list[tuple[int, float]]:
    if limit <= 0 or not weighted_terms or not corpus.words:
        return []
    terms = sorted(weighted_terms)
    rows = connection.execute(
        statement,
        {
            "commit": commit_id,
            "terms": terms,
            "boosts": [float(weighted_terms[term]) for term in terms],
            "documents": corpus.documents,
            "average": corpus.average_length,
            "k1": K1,
            "b": B,
            "scale": 10.0**SCORE_PLACES,
            "limit": limit,
        },
    )
    return [(int(row_id), float(score)) for row_id, score in rows]


def idf(documents: int, frequency: int) -> float:
    """Tantivy's inverse document frequency of a term in ``frequency`` of ``documents`` documents."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def bm25(weight: float, frequency: int, norm: int, average: float) -> float:
    """One term's part of a document's score, ``weight`` being the term's boost times its idf times
    (1 + K1)."""
    return weight * frequency / (frequency + K1 * (1 - B + B * norm / average))


# The documents of a commit holding each term, and how many of them are among some left out (an
# overlay's shadowed ones).
_FREQUENCIES_SQL = """
SELECT p.term, count(*), count(*) FILTER (WHERE p.{id} = ANY(%(hidden)s))
FROM smartctx.{postings} p
WHERE p.commit_id = %(commit)s AND p.term = ANY(%(terms)s)
GROUP BY p.term
"""
# The top documents for terms whose weights the caller gives, leaving some documents out.
_TOP_WEIGHTED_SQL = """
SELECT {id}, score FROM (
    SELECT p.{id}, sum(
        w.weight * p.frequency / (p.frequency + %(k1)s * (1 - %(b)s + %(b)s * p.norm / %(average)s))
    ) AS score
    FROM unnest(%(terms)s::text[], %(weights)s::float8[]) AS w (term, weight)
    JOIN smartctx.{postings} p ON p.commit_id = %(commit)s AND p.term = w.term
    WHERE p.{id} <> ALL(%(hidden)s)
    GROUP BY p.{id}
) AS scored
ORDER BY round(score * %(scale)s) DESC, {id}
LIMIT %(limit)s
"""


@dataclass(frozen=True, slots=True)
class Postings:
    """One kind of a commit's documents (definitions or files) as statements over its postings."""

    frequencies: sql.Composed
    top: sql.Composed


def _postings(table: str, id_column: str) -> Postings:
    names = {"postings": sql.Identifier(table), "id": sql.Identifier(id_column)}
    return Postings(sql.SQL(_FREQUENCIES_SQL).format(**names), sql.SQL(_TOP_WEIGHTED_SQL).format(**names))


SYMBOL_POSTINGS = _postings("symbol_postings", "node_id")
FILE_POSTINGS = _postings("file_postings", "file_id")


def term_frequencies(
    connection: psycopg.Connection[TupleRow],
    postings: Postings,
    commit_id: int,
    terms: Iterable[str],
    hidden: Sequence[int],
) -> dict[str, tuple[int, int]]:
    """For each term some document holds: how many hold it, and how many of those are ``hidden``."""
    wanted = sorted(set(terms))
    if not wanted:
        return {}
    rows = connection.execute(
        postings.frequencies, {"commit": commit_id, "terms": wanted, "hidden": list(hidden)}
    )
    return {str(term): (int(count), int(among)) for term, count, among in rows}


def top_weighted(
    connection: psycopg.Connection[TupleRow],
    postings: Postings,
    commit_id: int,
    weights: Mapping[str, float],
    average: float,
    hidden: Sequence[int],
    limit: int,
) -> list[tuple[int, float]]:
    """The ``limit`` documents best matching terms of the given weights (boost * idf * (1 + K1)),
    scored against the ``average`` length, leaving out ``hidden``: best first, ties by id."""
    if limit <= 0 or not weights:
        return []
    terms = sorted(weights)
    rows = connection.execute(
        postings.top,
        {
            "commit": commit_id,
            "terms": terms,
            "weights": [weights[term] for term in terms],
            "average": average,
            "hidden": list(hidden),
            "k1": K1,
            "b": B,
            "scale": 10.0**SCORE_PLACES,
            "limit": limit,
        },
    )
    return [(int(row_id), float(score)) for row_id, score in rows]
