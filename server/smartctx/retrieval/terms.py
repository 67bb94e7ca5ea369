"""The query's terms: the task's words, weighed by how rare each is in this index.

A long task has more words than a query can take; which of them are kept follows their document
frequency in the index (IDF), not their place in the text, so a name mentioned once in a forty-line
report stays in its query while the commonest words go. Words in too many rows are never searched
(they rank nothing and cost most of the query's time), and a plain word quoted as code that is
common in the index (``type``) does not name a definition.

A prose word the code does not use also stands for its base forms ("registering" for
``register``), found with the Snowball English stemmer and kept only when the index holds them;
names from code are never stemmed, since ``registered`` and ``register`` are different functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from smartctx.retrieval.query import ParsedTask, repeat_factor
from smartctx.store.reader import IndexReader

# A query has at most this many terms; when a task has more, the rarest are kept, whatever their
# place in the text. On SWE-bench Lite's stratified 60, capping prose words lower (24) or weighting
# rare prose words up (a repeat or two) lost file hits: a bug report's rarest prose words are as
# often names of people and products as the library that matters.
MAX_TERMS = 64
# The whole-file search also takes the task's words too common for the definitions' index, up to
# MAX_TERMS in all, in an index of at most this many rows: there, a few thousand files cost little
# even for words in every file, while in Django's (40k rows) they tripled the file query's time.
MAX_ROWS_FOR_COMMON_FILE_TERMS = 20_000
# A plain word the task writes as code (``type``, ``update``) names a definition only when it is
# this rare in the index; an everyday English word is not a name however it is quoted.
MAX_NAMED_WORD_SHARE = 0.003
# Only words this long are stemmed ("uses" -> "us" helps nobody), and only when the index holds the
# word itself in at most this many rows: a form the code uses already needs no other ("deleting" is
# in Django's docs; its stem's forms there are ``deleter`` and the like, noise to the query).
MIN_STEMMED_CHARS = 5
MAX_STEMMED_WORD_DOCUMENTS = 3
# Endings tried on a stem for the base form code names things by ("registering" -> ``register``,
# "ignored" -> ``ignore``, "serialization" -> ``serialize``); a form counts only when it stems back
# to the same stem and the index holds it. Few on purpose: each is one more lookup per request.
_BASE_ENDINGS = ("", "e", "er", "ize")


@dataclass(frozen=True)
class QueryTerms:
    """What search asks the index for, and which plain words are too common to be names."""

    weights: dict[str, int]
    common_words: frozenset[str]
    # For the whole-file search: the same terms and, in a small index, the task's words too common
    # for the definitions' index (at most ``MAX_TERMS`` in all), each weighed more the more times the
    # task says it (``query.repeat_factor``), less those only its stack frames say (unless no other
    # is left).
    file_weights: dict[str, float]


def query_terms(snapshot: IndexReader, task: ParsedTask) -> QueryTerms:
    rows = max(1, snapshot.row_count())
    common_above = snapshot.common_cutoff()
    plain_names = {name.lower() for name in task.identifiers if name.isalpha() and name.islower()}
    counts = snapshot.document_counts({*task.words, *plain_names}, common_above + 1)
    # Only a prose word the code hardly uses is stemmed, so its forms are counted after the words.
    forms = {
        word: _inflections(word) for word in task.prose if counts.get(word, 0) <= MAX_STEMMED_WORD_DOCUMENTS
    }
    counts.update(
        snapshot.document_counts({form for found in forms.values() for form in found}, common_above + 1)
    )
    present = {word: weight for word, weight in task.words.items() if counts.get(word)}
    kept = {word: weight for word, weight in present.items() if counts[word] <= common_above} or present
    weights = dict(kept)
    # A prose word the code does not use stands for its base forms, at its own weight.
    for word in sorted(forms):
        if counts.get(word, 0) <= MAX_STEMMED_WORD_DOCUMENTS:
            for form in forms[word]:
                if 0 < counts.get(form, 0) <= common_above:
                    weights.setdefault(form, task.words[word])
    # Every word the index holds is too common: search with them all rather than with nothing.
    weights = weights or dict(present)
    strongest = sorted(weights, key=lambda word: (-weights[word], counts.get(word, 0), word))[:MAX_TERMS]
    named_limit = MAX_NAMED_WORD_SHARE * rows
    chosen = {word: weights[word] for word in strongest}
    common = sorted((word for word in present if word not in chosen), key=lambda word: (counts[word], word))
    if rows > MAX_ROWS_FOR_COMMON_FILE_TERMS:
        common = []
    file_terms: dict[str, float] = {
        **chosen,
        **{word: present[word] for word in common[: MAX_TERMS - len(chosen)]},
    }
    repeated = {
        word: weight * repeat_factor(times)
        for word, weight in file_terms.items()
        if (times := task.said.get(word, 1))
    }
    return QueryTerms(
        chosen,
        frozenset(word for word in plain_names if counts.get(word, 0) > named_limit),
        # A task that is nothing but a stack trace searches whole files with its frames' words.
        repeated or file_terms,
    )


@lru_cache(maxsize=8192)
def _inflections(word: str) -> tuple[str, ...]:
    """The base forms an inflected prose word may stand for, by its Snowball stem (the index
    decides which exist); none for a word that is one already."""
    if len(word) < MIN_STEMMED_CHARS or not word.isalpha():
        return ()
    base = stem(word)
    forms = {base + ending for ending in _BASE_ENDINGS}
    if word in forms:
        return ()
    return tuple(sorted(form for form in forms if stem(form) == base))


@lru_cache(maxsize=1)
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (cached)."""
    return str(_stemmer().stemWord(word))
