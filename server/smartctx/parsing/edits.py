"""The change between two versions of a document as one tree-sitter edit, for incremental parsing.

An editor's ``didChange`` ranges arrive debounced, several at a time, and the buffer the indexer
sees is their sum. The bytes the two versions share at the start and at the end bound everything
that changed, so one edit from the end of the common prefix to the start of the common suffix
describes the change exactly enough for tree-sitter: it re-parses what the edit touches and reuses
the rest of the old tree, and the result equals a fresh parse of the new text.
"""

from __future__ import annotations

from dataclasses import dataclass

Point = tuple[int, int]


@dataclass(frozen=True, slots=True)
class ByteEdit:
    """Old ``[start_byte, old_end_byte)`` became new ``[start_byte, new_end_byte)``; points are
    (row, byte column), as tree-sitter's ``Tree.edit`` takes them."""

    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: Point
    old_end_point: Point
    new_end_point: Point


def edit_between(old: bytes, new: bytes) -> ByteEdit | None:
    """The one edit that turns ``old`` into ``new``, or None when they are equal."""
    if old == new:
        return None
    shorter = min(len(old), len(new))
    start = _common_prefix(old, new, shorter)
    # The common suffix may not reach into the common prefix of either version.
    suffix = _common_suffix(old, new, shorter - start)
    old_end = len(old) - suffix
    new_end = len(new) - suffix
    return ByteEdit(start, old_end, new_end, _point(old, start), _point(old, old_end), _point(new, new_end))


def _common_prefix(old: bytes, new: bytes, limit: int) -> int:
    """The length of the longest common prefix, at most ``limit``: a binary search over slice
    comparisons, which run at memcmp speed where a loop over bytes would run at Python's."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(old: bytes, new: bytes, limit: int) -> int:
    low, high = 0, limit
    old_length, new_length = len(old), len(new)
    while low < high:
        middle = (low + high + 1) // 2
        if old[old_length - middle : old_length - low] == new[new_length - middle : new_length - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _point(text: bytes, offset: int) -> Point:
    row = text.count(b"\n", 0, offset)
    return row, offset - (text.rfind(b"\n", 0, offset) + 1)
