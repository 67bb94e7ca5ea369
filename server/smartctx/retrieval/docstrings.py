"""A body's long Python docstrings, shortened to their first paragraph.

A body is there for its code. A Python docstring is part of the definition's lines, and in
libraries written for readers (numpydoc's Parameters, Returns and Examples sections) it is often
longer than the code: SymPy's ``latex`` takes 2,759 tokens, most of them its docstring. Such a
docstring is shown by its first lines, then one line that names the lines left out, then its
closing line; the code stays valid Python, since the note is inside the string. The lines left
out are reported (``BodyItem.left_out``), so a reader knows the body's lines are not all shown.

Other languages write their documentation comments before the definition, outside its lines.
"""

from __future__ import annotations

import ast
import itertools
import re
import warnings
from collections.abc import Sequence

from smartctx.retrieval.shown_lines import ShownLines, all_lines, indent_width

# A docstring of more lines than this is shortened: a summary line, a blank one and a few lines of
# detail stay whole. On SWE-bench Lite at 8k, a pack then holds 1.8 more bodies (11.1 -> 12.9), and
# body hit rises 61.3 -> 64.3 % with no task lost; limits from 5 to 20 lines, and keeping 1 to 6
# lines, measured the same (bench/HISTORY.md).
MAX_DOCSTRING_LINES = 8
# A shortened docstring keeps its first paragraph, at most this many lines of it.
KEPT_DOCSTRING_LINES = 3
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TRIPLE_QUOTES = ('"""', "'''")
_TRIPLE_QUOTE = re.compile("|".join(_TRIPLE_QUOTES))
# A docstring's opening line: a string prefix, if any, then its triple quote.
_OPENING = re.compile(r"\s*[rRuUbBfF]{0,2}(\"\"\"|''')")
# The last line of a definition's header, before its block: a colon, then perhaps a comment.
_HEADER_END = re.compile(r":\s*(#.*)?$")
_HEADER_START = re.compile(r"\s*(async\s+def|def|class)\b")
# The file name bodies are parsed under. The parser warns of what it reads in the workspace's code
# (an invalid escape such as "\d" in a string), which is no concern of the user's: such warnings
# from this name are ignored, and only they.
_PARSED_NAME = "<smartctx docstrings>"
warnings.filterwarnings("ignore", category=SyntaxWarning, module=re.escape(_PARSED_NAME))
warnings.filterwarnings("ignore", category=DeprecationWarning, module=re.escape(_PARSED_NAME))


def shortened(language: str, start: int, lines: list[str]) -> ShownLines:
    """``lines`` (the first at line ``start``) with each docstring longer than
    ``MAX_DOCSTRING_LINES`` shortened; unchanged when they are not Python or do not parse."""
    if language != "python":
        return all_lines(start, lines)
    spans = _long_docstrings(lines)
    if not spans:
        return all_lines(start, lines)
    shown: list[str] = []
    numbers: list[int] = []
    left_out: list[tuple[int, int]] = []
    index = 0
    for first, last in spans:
        kept = _first_paragraph(lines[first:last])
        end_of_kept = first + kept
        shown += lines[index:end_of_kept]
        numbers += range(start + index, start + end_of_kept)
        indent = lines[first][: indent_width(lines[first])]
        # Everything between the first paragraph and the closing line.
        hidden = (start + end_of_kept, start + last - 2)
        shown.append(f"{indent}[docstring lines {hidden[0]}-{hidden[1]} not shown]\n")
        numbers.append(hidden[1])
        left_out.append(hidden)
        index = last - 1
    shown += lines[index:]
    numbers += range(start + index, start + len(lines))
    return ShownLines(shown, numbers, tuple(left_out))


def _first_paragraph(docstring: Sequence[str]) -> int:
    """How many first lines of a docstring to keep: up to its first blank line, at most
    ``KEPT_DOCSTRING_LINES`` (a long docstring has more), and at least its opening line."""
    for count, line in enumerate(docstring[1:KEPT_DOCSTRING_LINES], start=1):
        if not line.strip():
            return count
    return KEPT_DOCSTRING_LINES


def _long_docstrings(lines: Sequence[str]) -> list[tuple[int, int]]:
    """The docstrings of more than ``MAX_DOCSTRING_LINES`` lines, as 0-based ranges of ``lines``
    from the opening line to the one after the closing one, in order.

    A long docstring's opening and closing lines hold the same triple quote, with no line between
    holding it. Each such pair far enough apart is checked by parsing only the definition's header
    and the string (a whole class would take ten times as long): it is a docstring when the string
    is the first statement of the ``def`` or ``class`` and spans exactly those lines.
    """
    pairs = [
        (opening, closing)
        for quote in _TRIPLE_QUOTES
        for opening, closing in itertools.pairwise(index for index, line in enumerate(lines) if quote in line)
        if closing - opening + 1 > MAX_DOCSTRING_LINES
    ]
    # Most bodies have no pair far enough apart, and then no line needs to be told inside a string.
    if not pairs:
        return []
    outside = _lines_outside_strings(lines)
    spans = [
        (opening, closing + 1)
        for opening, closing in pairs
        if opening in outside and _is_docstring(lines, opening, closing)
    ]
    # Two docstrings never overlap; should the check of strings above be fooled (a triple quote inside
    # a one-line string), the later of two overlapping ones is dropped rather than shown twice.
    kept: list[tuple[int, int]] = []
    for span in sorted(spans):
        if not kept or kept[-1][1] <= span[0]:
            kept.append(span)
    return kept


def _is_docstring(lines: Sequence[str], opening: int, closing: int) -> bool:
    """Whether lines ``opening`` to ``closing`` are a string that is the first statement of the
    definition whose header ends just above them."""
    if not _OPENING.match(lines[opening]):
        return False
    above = opening - 1
    while above >= 0 and (not lines[above].strip() or lines[above].lstrip().startswith("#")):
        above -= 1
    if above < 0 or not _HEADER_END.search(lines[above]):
        return False
    depth = indent_width(lines[opening])
    header = next(
        (
            index
            for index in range(above, -1, -1)
            if _HEADER_START.match(lines[index]) and indent_width(lines[index]) < depth
        ),
        None,
    )
    if header is None:
        return False
    # An indented header parses as the block of an ``if``, one line down.
    offset = 1 if indent_width(lines[header]) else 0
    snippet = "".join(lines[header : closing + 1])
    try:
        tree = ast.parse("if 1:\n" + snippet if offset else snippet, _PARSED_NAME)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # Not code (a string's content, a broken buffer, another Python's syntax, a null byte).
        return False
    statements = tree.body[0].body if offset and isinstance(tree.body[0], ast.If) else tree.body
    definition = statements[0] if len(statements) == 1 else None
    if not isinstance(definition, _DEFINITIONS):
        return False
    first = definition.body[0]
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and first.lineno == opening - header + 1 + offset
        and first.end_lineno == closing - header + 1 + offset
    )


def _lines_outside_strings(lines: Sequence[str]) -> frozenset[int]:
    """The lines that begin outside every triple-quoted string above them (a template or a doctest
    in a string can hold what looks like a definition and its docstring)."""
    outside = set()
    inside = None
    for index, line in enumerate(lines):
        if inside is None:
            outside.add(index)
        for match in _TRIPLE_QUOTE.finditer(line):
            if inside is None:
                inside = match.group()
            elif inside == match.group():
                inside = None
    return frozenset(outside)
