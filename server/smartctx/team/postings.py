"""The postings a published index holds for lexical search, from a file's stored search words.

Each definition and each file is one document whose words are the local engine's weighted text
(store/lexical.py: a column's words repeated by its weight), so a term's frequency here is the one
tantivy scores with BM25 locally, and a document's length is its number of words. The words are
already split and lowercased identifier words (core/identifiers.py) joined by single spaces, so
splitting on spaces is the local tokenizer's split. Whether a postings table scored in SQL is the way
to search in PostgreSQL is for measurement to decide (issue 26); this is the data either way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from smartctx.store.export import SearchWordsRecord
from smartctx.store.lexical import file_text, symbol_text


@dataclass(frozen=True, slots=True)
class Document:
    """One searchable document: term frequencies and length in words."""

    frequencies: dict[str, int]
    length: int


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
