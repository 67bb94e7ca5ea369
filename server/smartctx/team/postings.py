"""The postings a published index holds for lexical search, from a file's stored search words.

Each definition and each file is one document whose words are the local engine's weighted text
(store/lexical.py: a column's words repeated by its weight), so a term's frequency here is the one
tantivy scores with BM25 locally, and a document's length is its number of words. The words are
already split and lowercased identifier words (core/identifiers.py) joined by single spaces, so
splitting on spaces is the local tokenizer's split.

Tantivy does not score with a document's length but with the bottom of the bucket it falls in, the
length it keeps in one byte per document (``src/fieldnorm/code.rs``): exact up to 40 words, then
eight buckets per power of two, each twice as wide as the last. That is a document's ``norm`` here,
which team/lexical.py scores with, as tantivy does.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass

from smartctx.store.export import SearchWordsRecord
from smartctx.store.lexical import file_text, symbol_text

# Tantivy's one-byte encoding of a document's length: lengths below this are exact; above, buckets
# of doubling width, this many per width, up to this many codes in all.
EXACT_NORMS = 41
NORM_BUCKETS_PER_WIDTH = 8
NORM_CODES = 256


def _norm_bounds() -> tuple[int, ...]:
    """The length at the bottom of each of tantivy's 256 length buckets, ascending."""
    bounds = list(range(EXACT_NORMS))
    width = 1
    while len(bounds) < NORM_CODES:
        width *= 2
        low = bounds[-1]
        bounds.extend(low + width * step for step in range(1, NORM_BUCKETS_PER_WIDTH + 1))
    return tuple(bounds[:NORM_CODES])


NORM_BOUNDS = _norm_bounds()


def norm(length: int) -> int:
    """The length tantivy scores a document of ``length`` words with: the bottom of its bucket."""
    return NORM_BOUNDS[bisect_right(NORM_BOUNDS, length) - 1]


@dataclass(frozen=True, slots=True)
class Document:
    """One searchable document: term frequencies and length in words."""

    frequencies: dict[str, int]
    length: int

    @property
    def norm(self) -> int:
        return norm(self.length)


def document(text: str) -> Document:
    words = text.split()
    return Document(dict(Counter(words)), len(words))


def symbol_documents(record: SearchWordsRecord) -> list[tuple[int, Document]]:
    """Each of the file's definitions (module nodes included) as a document, by node id."""
    return [
        (node_id, document(symbol_text(words, record.path_words)))
        for node_id, words in zip(record.node_ids, record.nodes, strict=True)
    ]


def file_document(record: SearchWordsRecord) -> Document:
    """The whole file as one document."""
    return document(file_text(record.nodes, record.path_words))
