"""Scoring a published commit's term lists (team/lexical.py's ``top``) and keeping them
(``ListCache``): the order a base's search hands retrieval, and the memory an editor spends on it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")

from smartctx.team.lexical import FILE_LISTS, SYMBOL_LISTS, ListCache, TermList, bm25, top

AVERAGE = 10.0


def term_list(*postings: tuple[int, int, int]) -> TermList:
    """A list of (id, frequency, norm) postings."""
    ids, frequencies, norms = zip(*postings, strict=True)
    return TermList(*(np.array(column, dtype=np.int32) for column in (ids, frequencies, norms)))


def test_documents_are_ranked_by_their_summed_score_and_ties_by_id() -> None:
    lists = {
        "refund": term_list((7, 1, 10), (3, 1, 10), (5, 2, 10)),
        "order": term_list((3, 1, 10), (9, 1, 10)),
    }
    weights = {"refund": 2.0, "order": 1.0}

    found = top(lists, weights, AVERAGE, None, 10)

    # 3 holds both terms, 5 the heavier one twice, 7 it once, 9 only the lighter one.
    expected = {
        3: bm25(2.0, 1, 10, AVERAGE) + bm25(1.0, 1, 10, AVERAGE),
        5: bm25(2.0, 2, 10, AVERAGE),
        7: bm25(2.0, 1, 10, AVERAGE),
        9: bm25(1.0, 1, 10, AVERAGE),
    }
    assert [document for document, _ in found] == sorted(expected, key=lambda key: (-expected[key], key))
    assert dict(found) == pytest.approx(expected, rel=1e-12)


def test_equal_scores_at_the_limit_are_cut_by_id() -> None:
    lists = {"refund": term_list(*((document, 1, 10) for document in (40, 8, 23, 15, 4)))}

    found = top(lists, {"refund": 1.0}, AVERAGE, None, 3)

    assert [document for document, _ in found] == [4, 8, 15]


def test_hidden_documents_are_left_out_and_longer_ones_rank_lower() -> None:
    lists = {"refund": term_list((1, 1, 10), (2, 1, 40), (3, 1, 5))}

    found = top(lists, {"refund": 1.0}, AVERAGE, np.array([3], dtype=np.int32), 10)

    assert [document for document, _ in found] == [1, 2]


def test_a_term_without_a_weight_or_a_list_scores_nothing() -> None:
    lists = {"refund": term_list((1, 1, 10))}

    assert top(lists, {"order": 1.0}, AVERAGE, None, 10) == []
    assert top({}, {"refund": 1.0}, AVERAGE, None, 10) == []
    assert top(lists, {"refund": 1.0}, AVERAGE, None, 0) == []


def test_the_cache_keeps_the_lists_used_last_within_its_bytes() -> None:
    one = term_list(*((document, 1, 10) for document in range(100)))
    cache = ListCache(capacity=2 * one.bytes)

    cache.put(SYMBOL_LISTS, "refund", one)
    cache.put(SYMBOL_LISTS, "order", one)
    assert cache.get(SYMBOL_LISTS, "refund") is one
    cache.put(FILE_LISTS, "refund", one)

    # "order" was used longest ago; a file list is not a definition list of the same term.
    assert cache.get(SYMBOL_LISTS, "order") is None
    assert cache.get(SYMBOL_LISTS, "refund") is one
    assert cache.get(FILE_LISTS, "refund") is one
    # A list larger than the whole cache is never kept.
    huge = term_list(*((document, 1, 10) for document in range(300)))
    cache.put(SYMBOL_LISTS, "huge", huge)
    assert cache.get(SYMBOL_LISTS, "huge") is None
    assert cache.get(FILE_LISTS, "refund") is one
