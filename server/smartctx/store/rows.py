"""The rows one file contributes to the index, as plain tuples.

Building them is the CPU-heavy half of writing (search words, reference keys), and plain tuples of
str and int cross a process boundary several times cheaper than dataclasses and enums, so parser
worker processes call :func:`file_rows` and the single writer only assigns ids and inserts.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from smartctx.core.files import FileEntry, IndexedFile
from smartctx.core.identifiers import search_words
from smartctx.store.resolution import reference_key

# (kind, name, qualified_name, start_line, end_line, signature, doc, content_hash, parent or "",
#  search name, search qualified name, search signature, search doc, search body)
NodeRow = tuple[str, str, str, int, int, str, str, str, str, str, str, str, str, str]
# (source qualified name or "", kind, name, key, line)
RefRow = tuple[str, str, str, str, int]
# (search name, search qualified name, search signature, search doc, search body)
NodeWords = tuple[str, str, str, str, str]
# A folded definition: (name, line, qualified name of the kept ancestor holding it or "" for the module)
FoldedRow = tuple[str, int, str]

# Search words are identifier words joined by single spaces (core/identifiers.py), so a tab and a
# newline can never occur in them and serve to pack them. Level 1 compresses django's 26 MB of words
# to 4.7 MB; higher levels save a tenth more at two to three times the cost, paid in the parsers.
_FIELD_SEPARATOR = "\t"
_NODE_SEPARATOR = "\n"
SEARCH_WORDS_COMPRESSION = 1


@dataclass(frozen=True, slots=True)
class FileRows:
    entry: FileEntry
    path_words: str
    nodes: tuple[NodeRow, ...]
    refs: tuple[RefRow, ...]
    # pack_search_words(path_words, the search columns of ``nodes``): what the writer keeps, and
    # what the lexical index (lexical.py) is built from again without parsing.
    packed_words: bytes
    folded: tuple[FoldedRow, ...] = ()


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
    path_words = search_words(indexed.entry.path)
    packed = pack_search_words(path_words, [node[9:14] for node in nodes])
    folded = tuple((fold.name, fold.line, fold.holder or "") for fold in indexed.folded)
    return FileRows(indexed.entry, path_words, nodes, refs, packed, folded)


def pack_search_words(path_words: str, nodes: Sequence[Sequence[str]]) -> bytes:
    """A file's full-text values in one compressed blob: the path's words, then each node's five
    search columns, in the order given."""
    lines = [path_words, *(_FIELD_SEPARATOR.join(words) for words in nodes)]
    return zlib.compress(_NODE_SEPARATOR.join(lines).encode(), SEARCH_WORDS_COMPRESSION)


def unpack_search_words(packed: bytes) -> tuple[str, list[NodeWords]]:
    """The path's words and each node's search columns, as :func:`pack_search_words` got them."""
    path_words, *lines = zlib.decompress(packed).decode().split(_NODE_SEPARATOR)
    nodes: list[NodeWords] = []
    for line in lines:
        name, qualified, signature, doc, body = line.split(_FIELD_SEPARATOR)
        nodes.append((name, qualified, signature, doc, body))
    return path_words, nodes
