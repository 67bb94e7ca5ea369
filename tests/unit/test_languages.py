"""Every language against one realistic fixture and its hand-reviewed golden.

Each ``tests/fixtures/languages/<language>/`` holds one source file and ``expected.json``: every
symbol the file defines and every reference it makes, compared exactly. After a deliberate change,
``pytest tests/unit/test_languages.py --update-golden`` rewrites the goldens; read the diff line by
line against the fixture before keeping it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smartctx.core.model import ParseResult, Reference
from smartctx.parsing.extract import SourceParser
from smartctx.parsing.languages import LANGUAGES, language_for_path
from smartctx.parsing.summary import (
    MAX_SIGNATURE_CHARS,
    doc_from_comments,
    doc_from_docstring,
    signature_from_header,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "languages"
GOLDEN_NAME = "expected.json"
FIXTURE_LANGUAGES = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())


def fixture_source(language: str) -> Path:
    (source,) = (path for path in (FIXTURES / language).iterdir() if path.name != GOLDEN_NAME)
    return source


def render(result: ParseResult) -> dict[str, Any]:
    """The golden's shape: symbols as objects, references as ``[kind, name, line, source]`` rows."""
    return {
        "symbols": [
            {
                "kind": symbol.kind.value,
                "name": symbol.name,
                "qualified_name": symbol.qualified_name,
                "parent": symbol.parent,
                "start_line": symbol.span.start_line,
                "end_line": symbol.span.end_line,
                "signature": symbol.signature,
                "doc": symbol.doc,
            }
            for symbol in result.symbols
        ],
        "references": [
            [reference.kind.value, reference.name, reference.line, reference.source]
            for reference in sorted(result.references, key=reference_order)
        ],
    }


def reference_order(reference: Reference) -> tuple[int, str, str, str]:
    """Line first, so that a golden reads along with its fixture."""
    return (reference.line, reference.kind.value, reference.name, reference.source or "")


def dump_golden(golden: dict[str, Any]) -> str:
    """One symbol or reference per line, so that a golden reads (and diffs) like a table."""
    symbols = ",\n".join(f"    {json.dumps(symbol, ensure_ascii=False)}" for symbol in golden["symbols"])
    references = ",\n".join(
        f"    {json.dumps(reference, ensure_ascii=False)}" for reference in golden["references"]
    )
    return f'{{\n  "symbols": [\n{symbols}\n  ],\n  "references": [\n{references}\n  ]\n}}\n'


def test_every_language_has_a_fixture() -> None:
    assert sorted(LANGUAGES) == FIXTURE_LANGUAGES


@pytest.mark.parametrize("language", FIXTURE_LANGUAGES)
def test_language(language: str, source_parser: SourceParser, update_golden: bool) -> None:
    source = fixture_source(language)
    golden_path = FIXTURES / language / GOLDEN_NAME
    result = source_parser.parse(source.read_bytes(), language)
    actual = render(result)

    if update_golden:
        golden_path.write_text(dump_golden(actual), encoding="utf-8")
    expected = json.loads(golden_path.read_text(encoding="utf-8"))

    assert language_for_path(source.name) == language
    assert not result.has_errors
    assert actual["symbols"] == expected["symbols"]
    assert actual["references"] == expected["references"]


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/app.py", "python"),
        ("stubs/os.pyi", "python"),
        ("web/index.mjs", "javascript"),
        ("web/legacy.cjs", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/api.ts", "typescript"),
        ("web/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/Main.java", "java"),
        ("include/list.h", "c"),
        ("src/list.c", "c"),
        ("src/list.cc", "cpp"),
        ("src/list.cxx", "cpp"),
        ("include/list.hpp", "cpp"),
        ("include/list.hh", "cpp"),
        ("src/Program.cs", "csharp"),
        ("lib/task.rb", "ruby"),
        ("src/Task.php", "php"),
        ("src/Main.kt", "kotlin"),
        ("src/Main.scala", "scala"),
        ("scripts/build.sh", "bash"),
        ("plugin/init.lua", "lua"),
        ("SRC/MAIN.PY", "python"),
        ("README.md", None),
        ("Makefile", None),
        (".gitignore", None),
    ],
)
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_unknown_language_is_a_value_error(source_parser: SourceParser) -> None:
    with pytest.raises(ValueError, match="cobol"):
        source_parser.parse(b"IDENTIFICATION DIVISION.", "cobol")


@pytest.mark.parametrize(
    ("comments", "doc"),
    [
        (["# Saves it.", "# Twice."], "Saves it. Twice."),
        (["/**\n * Saves it.\n *\n * Details.\n */"], "Saves it."),
        (["/** Saves it.\n * @param force whether to\n */"], "Saves it."),
        (["/// <summary>", "/// Saves it.", "/// </summary>", '/// <param name="x">X.</param>'], "Saves it."),
        (["/// <summary>Saves it.</summary>"], "Saves it."),
        (["// ----------", "// Saves it.", "// ----------", "// Details."], "Saves it."),
        (["--- Saves it.", "-- Twice."], "Saves it. Twice."),
        (["--[[ Saves it.\nTwice. ]]"], "Saves it. Twice."),
        (["//! Saves it."], "Saves it."),
        (["#"], ""),
    ],
)
def test_doc_comment_styles(comments: list[str], doc: str) -> None:
    assert doc_from_comments(comments) == doc


@pytest.mark.parametrize(
    ("literal", "doc"),
    [
        ('"""Saves it.\n\n    Details.\n    """', "Saves it."),
        ("r'''Saves\n    it.'''", "Saves it."),
        ('"Saves it."', "Saves it."),
        ('"""\n    Saves it.\n    """', "Saves it."),
    ],
)
def test_docstrings(literal: str, doc: str) -> None:
    assert doc_from_docstring(literal) == doc


@pytest.mark.parametrize(
    ("header", "signature"),
    [
        ("def save(\n    self,\n    force=False,\n) -> None:", "def save(self, force=False,) -> None"),
        ("public void close() {", "public void close()"),
        ("override fun find(name: String): Product? =", "override fun find(name: String): Product?"),
        ("def " + "x" * 400 + "():", "def " + "x" * (MAX_SIGNATURE_CHARS - 5) + "…"),
    ],
)
def test_signatures(header: str, signature: str) -> None:
    assert signature_from_header(header) == signature
