"""How a definition is summarised in one line: its signature and the first paragraph of its doc.

These are pure string functions, shared by every language, so that a summary reads the same whether
it came from a Python docstring, a Javadoc block or a run of ``///`` lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_SIGNATURE_CHARS = 300
"""Long enough for a full parameter list, short enough to list dozens of summaries in a pack."""

_ELLIPSIS = "…"

# A signature is cut before its body; these are what the language writes between the two.
_SIGNATURE_TERMINATORS = "{:="
# The first line of a definition without a body node may still open a brace ("type T interface {").
_FIRST_LINE_TERMINATORS = ";{"
_OPENING_BRACKETS = ("(", "[")
_CLOSING_BRACKETS = (")", "]")

_BLOCK_COMMENT = re.compile(r"^/\*+!?(?P<body>.*?)\*+/$", re.DOTALL)
_LUA_BLOCK_COMMENT = re.compile(r"^--\[(?P<eq>=*)\[(?P<body>.*?)\](?P=eq)\]$", re.DOTALL)
_LINE_COMMENT_MARKER = re.compile(r"^(?://[/!]?|#+|--+)")
_BLOCK_COMMENT_LINE_STAR = re.compile(r"^\*+")
_STRING_LITERAL = re.compile(r"^[rRuUbBfF]*(?P<quote>\"\"\"|'''|\"|')(?P<body>.*)(?P=quote)$", re.DOTALL)

# Javadoc/JSDoc/PHPDoc block tags and C# XML sections after the summary end the first paragraph.
_DOC_SECTION_START = re.compile(
    r"^(?:@[A-Za-z]|<(?:param|typeparam|returns|remarks|exception|example|seealso|value)\b)"
)
# C# wraps the first paragraph in <summary>; the wrapper tags are markup, not prose.
_DOC_WRAPPER_TAG = re.compile(r"</?(?:summary|para)\s*>")
# Banner lines such as "// -----" or "# =====" separate paragraphs like blank lines do.
_RULER_LINE = re.compile(r"^[-=*#/_~+]+$")


def signature_from_header(header: str) -> str:
    """The one-line signature of a definition whose source up to its body is ``header``."""
    signature = _one_line(header)
    while signature and signature[-1] in _SIGNATURE_TERMINATORS:
        signature = signature[:-1].rstrip()
    return _capped(signature)


def signature_from_first_line(line: str) -> str:
    """The signature of a definition without a body (a constant, an alias, a prototype)."""
    signature = _one_line(line)
    while signature and signature[-1] in _FIRST_LINE_TERMINATORS:
        signature = signature[:-1].rstrip()
    return _capped(signature)


def doc_from_docstring(literal: str) -> str:
    """The first paragraph of a string literal used as a docstring, quotes and prefixes removed."""
    match = _STRING_LITERAL.match(literal.strip())
    body = match.group("body") if match else literal
    return _first_paragraph(body.splitlines())


def doc_from_comments(comments: Iterable[str]) -> str:
    """The first paragraph of consecutive comments, with their comment markers removed."""
    lines: list[str] = []
    for comment in comments:
        lines.extend(_comment_lines(comment.strip()))
    return _first_paragraph(lines)


def _comment_lines(comment: str) -> list[str]:
    block = _BLOCK_COMMENT.match(comment) or _LUA_BLOCK_COMMENT.match(comment)
    if block:
        return [_BLOCK_COMMENT_LINE_STAR.sub("", line.strip()) for line in block.group("body").splitlines()]
    return [_LINE_COMMENT_MARKER.sub("", line.strip()) for line in comment.splitlines()]


def _first_paragraph(lines: Iterable[str]) -> str:
    paragraph: list[str] = []
    for raw_line in lines:
        line = _DOC_WRAPPER_TAG.sub("", raw_line).strip()
        if not line or _RULER_LINE.match(line):
            if paragraph:
                break
            continue
        if _DOC_SECTION_START.match(line):
            break
        paragraph.append(line)
    return " ".join(paragraph)


def _one_line(text: str) -> str:
    """Joins ``text``'s lines with single spaces, without a space just inside brackets."""
    joined = ""
    for raw_line in text.splitlines():
        line = " ".join(raw_line.split())
        if not line:
            continue
        if joined and not joined.endswith(_OPENING_BRACKETS) and not line.startswith(_CLOSING_BRACKETS):
            joined += " "
        joined += line
    return joined


def _capped(signature: str) -> str:
    if len(signature) <= MAX_SIGNATURE_CHARS:
        return signature
    return signature[: MAX_SIGNATURE_CHARS - len(_ELLIPSIS)].rstrip() + _ELLIPSIS
