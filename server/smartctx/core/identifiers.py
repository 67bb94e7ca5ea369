"""How identifiers become search words, shared by the index writer and the query parser.

Both sides must split the same way, or a query for ``http response`` would never meet a symbol
called ``HttpResponse``; keeping the one rule here makes that impossible to get wrong.
"""

from __future__ import annotations

import re
from functools import lru_cache

# A run of capitals followed by a capitalised word ("HTTPResponse" -> "HTTP", "Response"), a
# capitalised or lower-case word, or a number.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def split_identifier(identifier: str) -> list[str]:
    """Lower-case words of one identifier: ``parseHTTPResponse_v2`` -> parse, http, response, v, 2."""
    return [word.lower() for word in _WORD.findall(identifier)]


def whole_word(identifier: str) -> str:
    """An identifier as one search word: lower case, underscores dropped (``bulk_create`` ->
    ``bulkcreate``), since the index's tokenizer would split at an underscore."""
    return identifier.lower().replace("_", "")


def search_words(text: str) -> str:
    """The text the lexical index stores for a field: each identifier whole and split into words.

    Whole identifiers are kept so an exact name (``get_queryset``) outranks text that merely
    contains its words; the split words let prose find code.
    """
    return " ".join(map(_identifier_words, _IDENTIFIER.findall(text)))


@lru_cache(maxsize=200_000)
def _identifier_words(identifier: str) -> str:
    # Cached: code repeats the same identifiers (self, value, return …) thousands of times.
    whole = whole_word(identifier)
    parts = split_identifier(identifier)
    if whole and (len(parts) != 1 or parts[0] != whole):
        parts.insert(0, whole)
    return " ".join(parts)
