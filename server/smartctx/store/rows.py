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
from smartctx.secrets.redaction import redact_once
from smartctx.secrets.rules import REDACTED, rules_digest
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
# The one word the replacement marker adds to a redacted text's search words.
_MARKER_WORD = search_words(REDACTED)
# Raised when the words an unchanged file gives change (core/identifiers.py's rule, or what is
# left out of them), so that an index of other words is built again (store/database.py).
# 2: secrets are left out.
SEARCH_WORDS_VERSION = 2


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
    # Each definition's five search texts, in the order of its search columns, after the path's.
    texts = [indexed.entry.path]
    for symbol, own_text in zip(indexed.symbols, indexed.own_texts, strict=True):
        texts += (symbol.name, symbol.qualified_name, symbol.signature, symbol.doc, own_text)
    path_words, *words = secret_free_words(texts)
    nodes: list[NodeRow] = []
    for at, (symbol, symbol_hash) in enumerate(zip(indexed.symbols, indexed.symbol_hashes, strict=True)):
        name, qualified, signature, doc, body = words[5 * at : 5 * at + 5]
        nodes.append(
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
                name,
                qualified,
                signature,
                doc,
                body,
            )
        )
    refs = tuple(
        (ref.source or "", ref.kind.value, ref.name, reference_key(ref.kind, ref.name), ref.line)
        for ref in indexed.references
    )
    packed = pack_search_words(path_words, [node[9:14] for node in nodes])
    folded = tuple((fold.name, fold.line, fold.holder or "") for fold in indexed.folded)
    return FileRows(indexed.entry, path_words, tuple(nodes), refs, packed, folded)


def search_words_stamp() -> str:
    """What the index's search words were made by: their version and the secret rules."""
    return f"{SEARCH_WORDS_VERSION}-{rules_digest()}"


def secret_free_words(texts: list[str]) -> list[str]:
    """The search words of each text without the words of its secrets (architecture.md, *Safety*):
    a key or password in a string literal never becomes terms, in the local index or a published
    one, so the two hold the same words. A text whose secrets are replaced by ``[REDACTED]`` has the
    words of the text with those secrets cut out, plus one marker word per replacement (the
    brackets keep it a word of its own), which is dropped."""
    words = []
    for text, (redacted, replaced) in zip(texts, redact_once(texts), strict=True):
        if not replaced:
            words.append(search_words(text))
            continue
        kept = search_words(redacted).split()
        for _ in range(replaced):
            kept.remove(_MARKER_WORD)
        words.append(" ".join(kept))
    return words


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
