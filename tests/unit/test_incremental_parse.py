"""A document parsed incrementally (its previous tree edited, then parsed again) yields exactly what a
fresh parse of the same text yields, whatever the edits: typing, deleting, pasting, breaking the
syntax and repairing it, in every language."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smartctx.parsing.edits import edit_between
from smartctx.parsing.extract import DOCUMENT_TREES, SourceParser
from smartctx.parsing.languages import LANGUAGES

FIXTURES = Path(__file__).parents[1] / "fixtures" / "languages"
LANGUAGE_NAMES = sorted(LANGUAGES)
# What an edit inserts: identifiers, a new definition's start, brackets that unbalance, line breaks.
SNIPPETS = [
    b"x",
    b"value",
    b"\n",
    b"(",
    b")",
    b"{",
    b"}",
    b"def f():\n    pass\n",
    b"class C",
    b" ",
    b"\xc3\xa9",
]


def fixture_source(language: str) -> bytes:
    return next(path for path in (FIXTURES / language).iterdir() if path.name != "expected.json").read_bytes()


edit_steps = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 40), st.sampled_from(SNIPPETS)), min_size=1, max_size=8
)


def apply(source: bytes, at: float, removed: int, inserted: bytes) -> bytes:
    start = int(at * len(source))
    return source[:start] + inserted + source[start + removed :]


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
@settings(max_examples=15, deadline=None)
@given(steps=edit_steps)
def test_incremental_parse_equals_a_fresh_parse(language: str, steps: list[tuple[float, int, bytes]]) -> None:
    source = fixture_source(language)
    incremental = SourceParser()
    incremental.parse(source, language, document="doc")
    for at, removed, inserted in steps:
        source = apply(source, at, removed, inserted)
        assert incremental.parse(source, language, document="doc") == SourceParser().parse(source, language)


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
@settings(max_examples=10, deadline=None)
@given(positions=st.lists(st.floats(0, 1), min_size=1, max_size=6), letter=st.sampled_from(b"qzk"))
def test_incremental_parse_of_edits_that_keep_the_syntax_equals_a_fresh_parse(
    language: str, positions: list[float], letter: int
) -> None:
    """Renaming inside identifiers keeps the text valid, so the edited old tree is what gets used."""
    source = fixture_source(language)
    incremental = SourceParser()
    incremental.parse(source, language, document="doc")
    inner_letters = [
        index
        for index in range(1, len(source) - 1)
        if all(chr(byte).isalpha() and byte < 128 for byte in source[index - 1 : index + 2])
    ]
    for at in positions:
        index = inner_letters[int(at * (len(inner_letters) - 1))]
        source = source[:index] + bytes([letter]) + source[index + 1 :]
        assert incremental.parse(source, language, document="doc") == SourceParser().parse(source, language)


def test_a_document_that_changes_language_is_parsed_afresh() -> None:
    parser = SourceParser()
    python = fixture_source("python")
    parser.parse(python, "python", document="doc")
    ruby = fixture_source("ruby")
    assert parser.parse(ruby, "ruby", document="doc") == SourceParser().parse(ruby, "ruby")


def test_only_the_most_recent_documents_keep_their_trees() -> None:
    parser = SourceParser()
    source = fixture_source("python")
    for number in range(DOCUMENT_TREES + 5):
        parser.parse(source, "python", document=f"doc{number}")
    edited = source + b"\ndef added():\n    return 1\n"
    assert parser.parse(edited, "python", document="doc0") == SourceParser().parse(edited, "python")
    assert len(parser._documents) == DOCUMENT_TREES


@given(old=st.binary(max_size=40), new=st.binary(max_size=40))
def test_the_edit_between_two_texts_spans_exactly_what_differs(old: bytes, new: bytes) -> None:
    edit = edit_between(old, new)
    if edit is None:
        assert old == new
        return
    assert old[: edit.start_byte] == new[: edit.start_byte]
    assert old[edit.old_end_byte :] == new[edit.new_end_byte :]
    # Nothing more is shared: one more byte at either end would differ or overlap.
    shared_after = len(old) - edit.old_end_byte
    assert edit.start_byte == min(len(old), len(new)) - shared_after or (
        old[edit.start_byte : edit.start_byte + 1] != new[edit.start_byte : edit.start_byte + 1]
    )
    assert edit.start_point == (
        old.count(b"\n", 0, edit.start_byte),
        edit.start_byte - (old.rfind(b"\n", 0, edit.start_byte) + 1),
    )
