"""The rows one file contributes to the index, as plain tuples.

Building them is the CPU-heavy half of writing (search words, reference keys), and plain tuples of
str and int cross a process boundary several times cheaper than dataclasses and enums, so parser
worker processes call :func:`file_rows` and the single writer only assigns ids and inserts.
"""

from __future__ import annotations

from dataclasses import dataclass

from smartctx.core.files import FileEntry, IndexedFile
from smartctx.core.identifiers import search_words
from smartctx.store.resolution import reference_key

# (kind, name, qualified_name, start_line, end_line, signature, doc, content_hash, parent or "",
#  search name, search qualified name, search signature, search doc, search body)
NodeRow = tuple[str, str, str, int, int, str, str, str, str, str, str, str, str, str]
# (source qualified name or "", kind, name, key, line)
RefRow = tuple[str, str, str, str, int]


@dataclass(frozen=True, slots=True)
class FileRows:
    entry: FileEntry
    path_words: str
    nodes: tuple[NodeRow, ...]
    refs: tuple[RefRow, ...]


def file_rows(indexed: IndexedFile) -> FileRows:
    nodes = tuple(
        (
            symbol.kind.value,
            symbol.name,
            symbol.qualified_name,
            symbol.span.start_line,
            symbol.span.end_line,
            symbol.signature,
            symbol.doc,
            symbol_hash,
            symbol.parent or "",
            search_words(symbol.name),
            search_words(symbol.qualified_name),
            search_words(symbol.signature),
            search_words(symbol.doc),
            search_words(own_text),
        )
        for symbol, symbol_hash, own_text in zip(
            indexed.symbols, indexed.symbol_hashes, indexed.own_texts, strict=True
        )
    )
    refs = tuple(
        (ref.source or "", ref.kind.value, ref.name, reference_key(ref.kind, ref.name), ref.line)
        for ref in indexed.references
    )
    return FileRows(indexed.entry, search_words(indexed.entry.path), nodes, refs)
