"""The postings of a published commit one row each, as SQL over its packed lists (schema_pg_v4.sql).

A published term's list is three arrays of 32-bit big-endian integers in bytea columns; the tests
read them back in SQL, so that their queries can join and filter postings like any other rows.
"""

from __future__ import annotations


def _integer_at(column: str) -> str:
    """The ``i``-th 32-bit big-endian integer of a bytea column."""
    return f"('x' || encode(substring({column} FROM 4 * i + 1 FOR 4), 'hex'))::bit(32)::integer"


def postings(kind: str) -> str:
    """A query of the postings of ``kind`` ("symbol", whose ids are node_id, or "file", file_id):
    commit_id, term, the id, frequency and norm, a row per posting."""
    id_column = {"symbol": "node_id", "file": "file_id"}[kind]
    return (
        f"SELECT commit_id, term, {_integer_at('ids')} AS {id_column},"
        f" {_integer_at('frequencies')} AS frequency, {_integer_at('norms')} AS norm"
        f" FROM smartctx.{kind}_lists, generate_series(0, documents - 1) AS i"
    )
