"""The parser never raises on what an editor or a repository can hand it, and what it recovers from
broken input is still well-formed: half-typed code, binary files, other encodings, NUL bytes.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smartctx.core.files import lf_line_ends
from smartctx.core.model import ParseResult, RefKind, SymbolKind
from smartctx.parsing.extract import (
    MAX_DEFINITION_DEPTH,
    MAX_QUALIFIED_NAME_CHARS,
    MAX_QUERY_START_DEPTH,
    MAX_UNCLOSED_BRACKETS,
    SourceParser,
)
from smartctx.parsing.languages import LANGUAGES
from smartctx.parsing.summary import MAX_SIGNATURE_CHARS

FIXTURES = Path(__file__).parents[1] / "fixtures" / "languages"
GOLDEN_NAME = "expected.json"
LANGUAGE_NAMES = sorted(LANGUAGES)
PREFIX_COUNT = 24
RANDOM_SEED = 20240611
RANDOM_BYTES = random.Random(RANDOM_SEED).randbytes(4096)
# Enough unclosed brackets to trip MAX_UNCLOSED_BRACKETS; Bash's own parser needs seconds for
# much deeper floods, which the guard cannot save it from.
DEEP_NESTING = 5_000

HOSTILE_INPUTS = {
    "empty": b"",
    "nul-bytes": b"\x00" * 256,
    "random-bytes": RANDOM_BYTES,
    "invalid-utf8": b"def \xff\xfe(\x80):\n    return '\xc3\x28'\nclass \xe2\x82(X): pass\n",
    "latin-1": "class Café:\n    def résumé(self): return 'naïve'\n".encode("latin-1"),
    "utf-16": "class Widget { void render() {} }\n".encode("utf-16"),
    "deep-nesting": b"(" * DEEP_NESTING + b"{" * DEEP_NESTING,
    "long-line": b"x = " + b"a + " * 20_000 + b"1\n",
    "only-newlines": b"\n\r\n\r" * 1000,
}


def fixture_bytes(language: str) -> bytes:
    (source,) = (path for path in (FIXTURES / language).iterdir() if path.name != GOLDEN_NAME)
    return source.read_bytes()


def assert_well_formed(result: ParseResult, language: str, source: bytes) -> None:
    # A lone CR ends a line as LF does (as in editors).
    line_count = lf_line_ends(source).count(b"\n") + 1
    assert result.language == language
    assert isinstance(result.has_errors, bool)
    for symbol in result.symbols:
        assert isinstance(symbol.kind, SymbolKind)
        assert symbol.name and symbol.name == symbol.name.strip()
        expected_qualified = f"{symbol.parent}.{symbol.name}" if symbol.parent else symbol.name
        assert symbol.qualified_name == expected_qualified
        assert 1 <= symbol.span.start_line <= symbol.span.end_line <= line_count
        assert len(symbol.signature) <= MAX_SIGNATURE_CHARS
        assert "\n" not in symbol.signature and "\n" not in symbol.doc
    for reference in result.references:
        assert isinstance(reference.kind, RefKind)
        assert reference.name
        assert 1 <= reference.line <= line_count
        assert reference.source is None or reference.source


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
def test_half_typed_code(language: str, source_parser: SourceParser) -> None:
    source = fixture_bytes(language)
    cuts = [len(source) * index // PREFIX_COUNT for index in range(PREFIX_COUNT)]
    results = [source_parser.parse(source[:cut], language) for cut in cuts]

    for cut, result in zip(cuts, results, strict=True):
        assert_well_formed(result, language, source[:cut])
    assert any(result.has_errors for result in results), "no prefix of the fixture was reported broken"


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
def test_hostile_bytes(language: str, name: str, source_parser: SourceParser) -> None:
    source = HOSTILE_INPUTS[name]
    assert_well_formed(source_parser.parse(source, language), language, source)


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
def test_a_flood_of_unclosed_brackets_yields_nothing(language: str, source_parser: SourceParser) -> None:
    source = fixture_bytes(language) + b"f(" * (2 * MAX_UNCLOSED_BRACKETS)
    assert source_parser.parse(source, language) == ParseResult(language, (), (), has_errors=True)


@pytest.mark.parametrize("language", LANGUAGE_NAMES)
def test_nul_bytes_inside_real_code(language: str, source_parser: SourceParser) -> None:
    source = fixture_bytes(language).replace(b"\n\n", b"\n\x00\n")
    assert_well_formed(source_parser.parse(source, language), language, source)


# Hypothesis draws the languages whose grammars differ most: indentation, braces, keywords.
HYPOTHESIS_LANGUAGES = ("python", "cpp", "ruby", "tsx")


@settings(max_examples=150, deadline=None)
@given(language=st.sampled_from(HYPOTHESIS_LANGUAGES), source=st.binary(max_size=2048))
def test_random_bytes(language: str, source: bytes, source_parser: SourceParser) -> None:
    assert_well_formed(source_parser.parse(source, language), language, source)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), language=st.sampled_from(HYPOTHESIS_LANGUAGES))
def test_shuffled_lines_of_real_code(data: st.DataObject, language: str, source_parser: SourceParser) -> None:
    # Lines of real code in random order give definitions cut off, nested oddly and unbalanced,
    # which random bytes rarely do.
    lines = fixture_bytes(language).splitlines(keepends=True)
    source = b"".join(data.draw(st.lists(st.sampled_from(lines), max_size=60)))
    assert_well_formed(source_parser.parse(source, language), language, source)


NESTED_FUNCTIONS = 10_000


# A level of nesting past MAX_DEFINITION_DEPTH, but well within MAX_QUERY_START_DEPTH.
FOLDED_CALL_LEVEL = 30


def nested_functions(count: int) -> bytes:
    """``count`` JavaScript functions each inside the previous one; one past the depth cap calls
    ``deepCall``."""
    opening = "".join(
        f"function f{level}() {{\n" + ("deepCall();\n" if level == FOLDED_CALL_LEVEL else "")
        for level in range(count)
    )
    return f"{opening}{'}' * count}\n".encode()


def test_deeply_nested_definitions_fold_into_the_deepest_kept_ancestor(source_parser: SourceParser) -> None:
    result = source_parser.parse(nested_functions(NESTED_FUNCTIONS), "javascript")
    deepest = ".".join(f"f{level}" for level in range(MAX_DEFINITION_DEPTH))
    assert [symbol.qualified_name for symbol in result.symbols][-1] == deepest
    assert len(result.symbols) == MAX_DEFINITION_DEPTH
    assert all(len(symbol.qualified_name) <= MAX_QUALIFIED_NAME_CHARS for symbol in result.symbols)
    # The folded part's calls still count, as calls of the deepest kept function.
    (call,) = (reference for reference in result.references if reference.name == "deepCall")
    assert call.source == deepest
    # Its span still reaches the end of everything folded into it, the line of closing braces.
    assert result.symbols[-1].span.end_line == NESTED_FUNCTIONS + 2


def test_every_folded_definition_is_named_with_its_kept_ancestor_however_deep(
    source_parser: SourceParser,
) -> None:
    """Issue 22: a name folded past the query's depth (f9999 here) vanished without a word."""
    result = source_parser.parse(nested_functions(NESTED_FUNCTIONS), "javascript")
    deepest = ".".join(f"f{level}" for level in range(MAX_DEFINITION_DEPTH))

    assert [fold.name for fold in result.folded] == [
        f"f{level}" for level in range(MAX_DEFINITION_DEPTH, NESTED_FUNCTIONS)
    ]
    assert {fold.holder for fold in result.folded} == {deepest}
    # Its line: one per function above it, and the line of the call at FOLDED_CALL_LEVEL.
    assert result.folded[-1].line == NESTED_FUNCTIONS + 1
    # Only definitions are looked for below the query depth: the calls there stay unmatched.
    assert [reference.name for reference in result.references] == ["deepCall"]


def test_a_name_too_long_to_qualify_folds_what_it_would_name(source_parser: SourceParser) -> None:
    outer = "A" * (MAX_QUALIFIED_NAME_CHARS // 2)
    inner = "B" * (MAX_QUALIFIED_NAME_CHARS // 2 + 1)
    source = f"class {outer}:\n    class {inner}:\n        def method(self):\n            helper()\n"
    result = source_parser.parse(source.encode(), "python")
    assert [symbol.qualified_name for symbol in result.symbols] == [outer]
    assert {(reference.name, reference.source) for reference in result.references} == {("helper", outer)}
    assert [(fold.name, fold.line, fold.holder) for fold in result.folded] == [
        (inner, 2, outer),
        ("method", 3, outer),
    ]


def test_nesting_up_to_the_cap_keeps_every_definition(source_parser: SourceParser) -> None:
    source = "".join(f"{'    ' * level}def f{level}():\n" for level in range(MAX_DEFINITION_DEPTH))
    source += f"{'    ' * MAX_DEFINITION_DEPTH}pass\n"
    result = source_parser.parse(source.encode(), "python")
    assert len(result.symbols) == MAX_DEFINITION_DEPTH


def test_nothing_below_the_query_depth_is_matched(source_parser: SourceParser) -> None:
    # Each call nests two levels (call_expression, arguments), so the innermost call lies deeper
    # than the bound while the outermost is near the top.
    depth = MAX_QUERY_START_DEPTH
    source = f"outer({'wrap(' * depth}innermost(){')' * depth});\n"
    names = {reference.name for reference in source_parser.parse(source.encode(), "javascript").references}
    assert "outer" in names and "wrap" in names
    assert "innermost" not in names


# curl's lib/cf-haproxy.c in small: an #ifdef that opens a brace in one branch leaves tree-sitter-c
# with one ERROR node over the rest of the file (and extern "C" opened in another #ifdef does the
# same to curl's public headers).
UNBALANCED_C = b"""#ifdef __cplusplus
extern "C" {
#endif

#ifdef USE_UNIX_SOCKETS
static int open_socket(int unix_socket) {
  if(unix_socket)
    return 1;
  else {
#endif
  return 0;
#ifdef USE_UNIX_SOCKETS
  }
#endif
}

/* A key, as the server sent it. */
struct api_key {
  const char *key;
};

enum api_status { API_GOOD, API_BAD };

API_EXTERN int api_init(struct api_key *key);

#ifdef __cplusplus
}
#endif
"""


def test_c_types_and_prototypes_in_an_error_region_are_symbols(source_parser: SourceParser) -> None:
    result = source_parser.parse(UNBALANCED_C, "c")
    assert result.has_errors
    symbols = {(symbol.kind, symbol.qualified_name, symbol.span.start_line) for symbol in result.symbols}
    assert {
        (SymbolKind.STRUCT, "api_key", 18),
        (SymbolKind.ENUM, "api_status", 22),
        (SymbolKind.FUNCTION, "api_init", 24),
    } <= symbols
    (key,) = (symbol for symbol in result.symbols if symbol.name == "api_key")
    assert key.doc == "A key, as the server sent it."
