"""What a task pastes about the reporter's machine: version reports and interpreter banners.

Bug reports carry the reporter's environment: an issue template's "Versions" section, the output of
a project's ``show_versions()``, ``pip freeze``, an interpreter's start-up banner. None of it says
where the bug is, yet its words are the words of the one file that prints such a report (xarray's
``print_versions.py`` names every package its report lists; sympy's ``interactive/session.py``
quotes IPython's banner), and that file took the first place. The task is read without them.

A version report is recognised by its shape, not by project: a run of ``name: value`` lines (or
``name==version``, or ``name version``) in which at least ``MIN_VERSION_LINES`` give a version
number. Within such a run the ``name: value`` lines, the section heads and the commands that print
versions go; a line whose value names a dotted module path ("Sphinx extensions:
sphinx.ext.autodoc") stays, as it names code. A shorter run ("Timeout: 3.5" in a pasted
configuration) is the task's own text and stays whole. An interpreter's banner goes wherever it is.
"""

from __future__ import annotations

import re
from enum import Enum, auto
from itertools import islice

# The fewest lines giving a version number that make a run of ``name: value`` lines a report.
MIN_VERSION_LINES = 3
# Lines longer than this are prose or data, never a line of a version report.
MAX_REPORT_LINE_CHARS = 200

# Space within a line. Never ``\s``: the patterns also run over a whole text (below), where a ``\s*``
# at each line's start would run on through every blank line after it, a quadratic search on a text
# of many blank lines.
_SPACE = r"[ \t\r]"
_NAME = rf"(?:[-*+]{_SPACE}+)?[A-Za-z][\w.+/() -]{{0,40}}?"
_VERSION = r"v?\d+\.\d+"
# ``numpy: 1.17.3``, ``Python version:   3.8.2 (default, …)``, ``attrs==19.3.0``, ``astropy 5.1``. Not
# ``alpha = 1.5``: a line of code.
_VERSION_LINE = re.compile(
    rf"{_SPACE}*{_NAME}{_SPACE}*(?::|==){_SPACE}*{_VERSION}.*"
    rf"|{_SPACE}*(?:[-*+]{_SPACE}+)?[A-Za-z][\w.-]{{0,40}}{_SPACE}+{_VERSION}\S*{_SPACE}*"
)
# ``machine: Linux-4.15.0-x86_64``, ``executable: /usr/bin/python``, ``scipy: None``.
_VALUE_LINE = re.compile(rf"{_SPACE}*{_NAME}{_SPACE}*:{_SPACE}*\S.*")
# ``System:``, ``Python deps:``, ``INSTALLED VERSIONS``, ``------------------``.
_HEAD_LINE = re.compile(rf"{_SPACE}*(?:[A-Za-z][\w .-]{{0,40}}:|[A-Z][A-Z ]{{2,40}}|[-= ]{{3,}}){_SPACE}*")
# ``>>> import numpy; print(numpy.__version__)``, ``$ pip freeze``, ``>>> xr.show_versions()``.
_REPORT_COMMAND = re.compile(
    r".*(?:__version__|\bsys\.version\b|show_versions\(|\bpip (?:freeze|list)\b|--version\b).*"
)
_DOTTED_NAME = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}\b")
# An interpreter's start-up banner: CPython's first lines, IPython's greeting and its help lines.
_BANNER_LINE = re.compile(
    rf"{_SPACE}*(?:>>>{_SPACE}*)?(?:"
    rf"Python \d+\.\d+(?:\.\d+)?\S*{_SPACE}*(?:\|[^|\n]{{0,80}}\|{_SPACE}*)?\([^()\n]{{0,80}}\).*"
    rf"|\[(?:GCC|Clang|MSC|PyPy)\b[^\]\n]{{0,120}}\](?:{_SPACE}+on{_SPACE}+\w+)?"
    r"|Type [\"'](?:help|copyright)[\"'],.{0,80}for more information.*"
    r"|IPython \d[\w.]* -- An enhanced Interactive Python.*"
    rf"|(?:\?|%quickref|help|object\?){_SPACE}+-> .*"
    rf"){_SPACE}*"
)

# The same lines found anywhere in a text: most tasks have no banner and fewer than
# MIN_VERSION_LINES version lines, and are returned as they are without a look at each line.
_ANY_BANNER_LINE = re.compile(rf"^(?:{_BANNER_LINE.pattern})$", re.MULTILINE)
_ANY_VERSION_LINE = re.compile(rf"^(?:{_VERSION_LINE.pattern})$", re.MULTILINE)


class _Line(Enum):
    BANNER = auto()
    VERSION = auto()
    VALUE = auto()
    HEAD = auto()
    COMMAND = auto()
    BLANK = auto()
    TEXT = auto()


def _kind(line: str) -> _Line:
    """What a line is to a report, the most specific kind first."""
    if not line.strip():
        return _Line.BLANK
    if len(line) > MAX_REPORT_LINE_CHARS:
        return _Line.TEXT
    if _BANNER_LINE.fullmatch(line):
        return _Line.BANNER
    if _VERSION_LINE.fullmatch(line):
        return _Line.VERSION
    if _REPORT_COMMAND.fullmatch(line):
        return _Line.COMMAND
    if _HEAD_LINE.fullmatch(line):
        return _Line.HEAD
    if _VALUE_LINE.fullmatch(line):
        return _Line.VALUE
    return _Line.TEXT


def without_environment(text: str) -> str:
    """``text`` with its version reports and interpreter banners blanked (each such line left empty,
    so that the lines around keep their places and their code fences)."""
    versions = islice(_ANY_VERSION_LINE.finditer(text), MIN_VERSION_LINES)
    if sum(1 for _ in versions) < MIN_VERSION_LINES and not _ANY_BANNER_LINE.search(text):
        return text
    lines = text.split("\n")
    kinds = [_kind(line) for line in lines]
    kept = [line if kind is not _Line.BANNER else "" for line, kind in zip(lines, kinds, strict=True)]
    start = 0
    while start < len(lines):
        if kinds[start] is _Line.TEXT:
            start += 1
            continue
        end = start
        while end < len(lines) and kinds[end] is not _Line.TEXT:
            end += 1
        if sum(kind is _Line.VERSION for kind in kinds[start:end]) >= MIN_VERSION_LINES:
            for place in range(start, end):
                if kinds[place] is not _Line.BLANK and not _names_code(lines[place], kinds[place]):
                    kept[place] = ""
        start = end
    return "\n".join(kept)


def _names_code(line: str, kind: _Line) -> bool:
    """Whether a line of a version report names a module path (``sphinx.ext.autodoc``), which the
    task's search should still read."""
    return kind is _Line.VALUE and _DOTTED_NAME.search(line) is not None
