"""A body's long Python docstrings are shown by their first paragraph (retrieval/docstrings.py): the
code stays whole and valid, the lines left out are reported, and a pack holds more bodies."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from tests.node_rows import function_row

from smartctx.core.files import line_offsets, span_digest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.diversify import Selection
from smartctx.retrieval.docstrings import MAX_DOCSTRING_LINES, shortened
from smartctx.retrieval.pack import pack
from smartctx.retrieval.score import ScoredNode

PARAMETERS = "".join(f"    p{number} : int\n        The {number}th part.\n" for number in range(20))
TWELVE_LINES = "line\n" * 12
METHOD = f'''    @property
    async def total(self, first,
                    second):
        """Add the parts up.

        Parameters
        ----------
{textwrap.indent(PARAMETERS, "    ")}        """
        text = """a string that is no docstring,
{TWELVE_LINES}"""
        return first + second
'''
CLASS = f'''class Ledger:
    \'\'\'A book of entries.
    It keeps them in order.
    Each has an amount.
    And a date.
{PARAMETERS}    \'\'\'

    def short(self):
        """One line."""
        return 1

    def long(self):
        r"""Sum
{PARAMETERS}        with a closing line of text."""
        return 2
'''


def test_a_long_docstring_keeps_its_first_paragraph_and_its_closing_line() -> None:
    lines = METHOD.splitlines(keepends=True)
    shown = shortened("python", 100, lines)
    opening = lines.index('        """Add the parts up.\n')
    closing = len(lines) - 1 - lines[::-1].index('        """\n')
    assert shown.left_out == ((100 + opening + 1, 100 + closing - 1),)
    note = f"        [docstring lines {100 + opening + 1}-{100 + closing - 1} not shown]\n"
    assert shown.lines == [*lines[: opening + 1], note, *lines[closing:]]
    # Each shown line names its line in the file; the note, the last line it stands for.
    assert shown.numbers == [
        *range(100, 101 + opening),
        100 + closing - 1,
        *range(100 + closing, 100 + len(lines)),
    ]
    # The string assigned to ``text`` is no docstring, and the code is still Python.
    assert "".join(lines[closing + 1 :]) in "".join(shown.lines)
    ast.parse("if True:\n" + "".join(shown.lines))


def test_each_long_docstring_of_a_class_is_shortened_and_a_short_one_kept() -> None:
    lines = CLASS.splitlines(keepends=True)
    shown = shortened("python", 1, lines)
    text = "".join(shown.lines)
    assert len(shown.left_out) == 2
    # The class's first paragraph is its first three lines; the method's ends with its closing line.
    kept = "    '''A book of entries.\n    It keeps them in order.\n    Each has an amount.\n"
    assert kept + "    [docstring lines 5-" in text
    assert '        """One line."""\n' in text
    assert '        with a closing line of text."""\n' in text
    assert "The 7th part" not in text
    ast.parse(text)
    for start, end in shown.left_out:
        assert not [line for line in lines[start - 1 : end] if "def " in line or "return" in line]


@pytest.mark.parametrize(
    ("language", "source"),
    [
        # A docstring of the longest length kept whole.
        ("python", 'def f():\n    """' + "x\n" * (MAX_DOCSTRING_LINES - 1) + '    """\n    return 1\n'),
        # Not Python: the same text is left as it is.
        ("ruby", METHOD),
        # Python that does not parse (an unclosed string) is left as it is.
        ("python", 'def f():\n    """never closed\n' + "x\n" * 20),
        # A null byte, which the parser refuses.
        ("python", 'def f():\n    """' + "x\0\n" * 20 + '    """\n    return 1\n'),
        # The content of a long string that looks like a definition and its docstring.
        ("python", "x = '''\ndef g():\n    \"\"\"" + "y\n" * 20 + "    \"\"\"\n'''\n"),
        # A string that is not the block's first statement.
        ("python", "def f():\n    x = 1\n    '''" + "y\n" * 20 + "'''\n"),
    ],
)
def test_what_is_not_a_long_docstring_is_left_as_it_is(language: str, source: str) -> None:
    lines = source.splitlines(keepends=True)
    shown = shortened(language, 7, lines)
    assert shown.lines == lines
    assert shown.numbers == list(range(7, 7 + len(lines)))
    assert shown.left_out == ()


BODY_FILE = "lib/parts.py"
FUNCTIONS = 4
DOC = "".join(f"    Example {number}: ``total(parts, {number})`` gives the sum.\n" for number in range(60))


def parts_source() -> bytes:
    """``FUNCTIONS`` functions, each a long docstring over three lines of code."""
    return "".join(
        f'def total{number}(parts):\n    """Sum the parts.\n\n{DOC}    """\n'
        f"    result = sum(parts) * {number}\n    return result\n"
        for number in range(FUNCTIONS)
    ).encode()


def test_a_pack_holds_every_body_whose_docstring_alone_would_not_fit() -> None:
    """Four functions whose docstrings take most of their lines: at 2,000 tokens the whole four
    would not fit, and shortened all four are bodies, each cited by its whole span, with the lines
    left out said in the text and in the item."""
    data = parts_source()
    offsets = line_offsets(data)
    span = 3 + len(DOC.splitlines()) + 3
    rows = []
    for number in range(FUNCTIONS):
        start = 1 + number * span
        row = function_row(number, BODY_FILE, f"total{number}", start, start + span - 1)
        rows.append(row._replace(content_hash=span_digest(data, offsets, start, start + span - 1)))
    counter = TokenCounter("o200k_base")
    whole = counter.count(data.decode())
    assert whole > 2_000
    sources = WorkspaceSources(Path("/nonexistent-workspace"), {BODY_FILE: data})
    chosen = Selection(tuple(ScoredNode(row, 5.0 - row.id, {"bm25": 1.0}) for row in rows), ())
    packed = pack(chosen, "sum the parts", 2_000, counter, sources, include_blobs=True)
    assert [body.name for body in packed.bodies] == [f"total{number}" for number in range(FUNCTIONS)]
    assert not [warning for warning in packed.warnings if warning.code.startswith("body-")]
    for body, row in zip(packed.bodies, rows, strict=True):
        assert (body.start_line, body.end_line) == (row.start_line, row.end_line)
        assert body.left_out == ((row.start_line + 2, row.end_line - 3),)
        assert f"[docstring lines {row.start_line + 2}-{row.end_line - 3} not shown]" in body.source
        assert f"result = sum(parts) * {row.id}" in body.source
    assert packed.tokens_used <= 2_000


def test_at_every_budget_a_body_shows_its_cited_lines_but_those_it_names_as_left_out() -> None:
    """A class with two long docstrings, cut anywhere: its source and its ``leftOut`` still account
    for every line its citation names, one note line for each range, and a range the cut passes
    over is not named."""
    data = CLASS.encode()
    end = len(CLASS.splitlines())
    row = function_row(1, BODY_FILE, "Ledger", 1, end)._replace(
        content_hash=span_digest(data, line_offsets(data), 1, end)
    )
    counter = TokenCounter("o200k_base")
    sources = WorkspaceSources(Path("/nonexistent-workspace"), {BODY_FILE: data})
    chosen = Selection((ScoredNode(row, 1.0, {"bm25": 1.0}),), ())
    ranges_when_cut = set()
    for budget in range(100, 400, 2):
        packed = pack(chosen, "sum the parts", budget, counter, sources, include_blobs=True)
        for body in packed.bodies:
            hidden = sum(last - first + 1 for first, last in body.left_out)
            shown = body.source.count("\n")
            assert shown - len(body.left_out) + hidden == body.end_line - body.start_line + 1
            assert all(body.start_line < first <= last <= body.end_line for first, last in body.left_out)
            if any(warning.code == "body-cut" for warning in packed.warnings):
                ranges_when_cut.add(len(body.left_out))
    assert ranges_when_cut == {1, 2}
