"""Long bodies after the first, shown by the lines near the task's words when the budget needs it.

Bodies fill most of a pack, and a few long ones fill most of that: on SWE-bench Lite at 8k, one
body in six is over 800 tokens, and those take half the tokens of all bodies. What the task is about
is usually a few places in such a body. So when the chosen bodies would not fit the budget whole, a
body after the pack's first one, longer than ``LONG_BODY_LINES`` lines, is shown by its first lines
(the signature and how it begins), its last lines, the lines around each line that holds one of the
task's search words, and the line that opens each block those sit in (a method's ``def``, an
``if``); each run of other lines gives way to one comment that names them
(``# [lines 120-161 not shown]``). The last bodies are shortened first, and only as many as the
budget needs: with room for them whole, bodies are whole. The lines left out are reported
(``BodyItem.left_out``), and the citation still spans the whole definition.

The first body is always shown whole: it is the definition likeliest to change, and when the task's
words miss the lines to change, only a whole body still holds them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from smartctx.core.identifiers import search_words
from smartctx.retrieval.shown_lines import ShownLines, indent_width

# A body of more lines than this (as shown, after its long docstrings are shortened) may leave out
# the lines far from the task's words. On SWE-bench Lite at 8k a pack then holds about 1.7 more
# bodies, and the share of the changed lines the pack's bodies show rises 58.1 -> 60.2 %; the commit
# dev set, the traceback set and the changelog entries no rule was tuned on gain too
# (bench/HISTORY.md). At 60 lines more bodies fit but fewer changed lines are shown; at 100 fewer
# bodies fit.
LONG_BODY_LINES = 80
# The first lines always shown: the signature, and where the body begins.
HEAD_LINES = 6
# The last lines always shown: what the body returns, and where it ends.
TAIL_LINES = 2
# The lines shown on each side of a line holding one of the task's words.
CONTEXT_LINES = 3
# A run of fewer lines than this is shown anyway: its note would cost about as much.
MIN_LEFT_OUT_LINES = 4
# A body is shortened only when that leaves out at least this share of its lines (each note counted
# as a line): a body that holds the task's words all over is about the task all over.
MIN_SAVED_SHARE = 0.2
# Whether the bodies fit is judged before their tokens are counted: a body's characters over this,
# plus its heading and fences. Only which bodies are shortened depends on it; the pack counts every
# token exactly. Code runs 3.6 (TypeScript) to 5.0 (Django's Python) characters to an o200k token.
CHARS_PER_TOKEN = 4.0
HEADING_TOKENS = 30
# How a comment to the end of the line begins, by language; the others write ``//``.
_LINE_COMMENTS = {"python": "#", "ruby": "#", "bash": "#", "lua": "--"}
_DEFAULT_LINE_COMMENT = "//"


def shortened_to_fit(
    bodies: Sequence[tuple[str, ShownLines]],
    words: frozenset[str],
    room: int,
    body_cap: int,
    whole: Collection[int] = (),
) -> list[ShownLines]:
    """Each of ``bodies`` (its language and its lines, in pack order) as it is to be shown: while
    their estimated tokens exceed ``room``, the last long one not yet shortened, never the first nor
    one whose place is in ``whole``, is shown near the task's ``words``. A body counts at most
    ``body_cap`` tokens, where the pack cuts it anyway."""
    shown = [lines for _, lines in bodies]
    estimates = [_estimated_tokens(lines, body_cap) for lines in shown]
    total = sum(estimates)
    for position in range(len(shown) - 1, 0, -1):
        if total <= room:
            break
        if position in whole:
            continue
        shorter = near_task_words(bodies[position][0], shown[position], words)
        if shorter is shown[position]:
            continue
        estimate = _estimated_tokens(shorter, body_cap)
        total -= estimates[position] - estimate
        estimates[position], shown[position] = estimate, shorter
    return shown


def near_task_words(language: str, shown: ShownLines, words: frozenset[str]) -> ShownLines:
    """``shown`` with its runs of lines far from every line holding one of ``words`` (search words,
    as ``core.identifiers.search_words`` makes them) left out, when it is longer than
    ``LONG_BODY_LINES``; otherwise, or when too little would be left out, ``shown`` itself."""
    lines = shown.lines
    if len(lines) <= LONG_BODY_LINES or not words:
        return shown
    kept = _kept(lines, words)
    runs = [run for run in _runs_left_out(kept) if run[1] - run[0] >= MIN_LEFT_OUT_LINES]
    # Each run's note is a line too.
    if sum(end - first - 1 for first, end in runs) < MIN_SAVED_SHARE * len(lines):
        return shown
    comment = _LINE_COMMENTS.get(language, _DEFAULT_LINE_COMMENT)
    out: list[str] = []
    numbers: list[int] = []
    left_out = list(shown.left_out)
    index = 0
    for first, end in runs:
        out += lines[index:first]
        numbers += shown.numbers[index:first]
        # The file's lines from the one after the last shown to the last of the run: a docstring's
        # note in the run stands for more lines than itself, and the range takes them all in.
        hidden = (shown.numbers[first - 1] + 1, shown.numbers[end - 1])
        out.append(f"{_indent_of(lines[first:end])}{comment} [lines {hidden[0]}-{hidden[1]} not shown]\n")
        numbers.append(hidden[1])
        left_out = [span for span in left_out if not hidden[0] <= span[0] <= hidden[1]]
        left_out.append(hidden)
        index = end
    out += lines[index:]
    numbers += shown.numbers[index:]
    return ShownLines(out, numbers, tuple(sorted(left_out)))


def _estimated_tokens(shown: ShownLines, body_cap: int) -> float:
    return min(sum(map(len, shown.lines)) / CHARS_PER_TOKEN + HEADING_TOKENS, body_cap)


def _kept(lines: Sequence[str], words: frozenset[str]) -> list[bool]:
    """Which lines are shown: the first and last ones, those near a line with a task word, and the
    line that opens each block those are in."""
    kept = [index < HEAD_LINES or index >= len(lines) - TAIL_LINES for index in range(len(lines))]
    finder = _finder(words)
    for index, line in enumerate(lines):
        # A search word of the line is a part of one of its names or a whole name without its
        # underscores, so a line without any word as text holds none; most lines are told so
        # by one scan.
        maybe = finder.search(line.lower().replace("_", "")) is not None
        if maybe and not words.isdisjoint(search_words(line).split()):
            for near in range(max(0, index - CONTEXT_LINES), min(len(lines), index + CONTEXT_LINES + 1)):
                kept[near] = True
    outermost = next((indent_width(line) for line in lines[1:] if line.strip()), 0)
    openers = _openers(lines)
    for index in range(HEAD_LINES, len(lines)):
        if kept[index] and not kept[index - 1]:
            first = next((below for below in range(index, len(lines)) if lines[below].strip()), None)
            if first is not None:
                _keep_openers(lines, first, openers, outermost, kept)
    return kept


def _keep_openers(
    lines: Sequence[str], index: int, openers: Sequence[int | None], outermost: int, kept: list[bool]
) -> None:
    """Keep the lines that open the blocks around line ``index``, innermost out. A line at depth
    ``outermost`` (the body's own statements, a class's members) needs none: the head shows what
    opens it. The chain is as long as the code is deep, however long the body."""
    inner, opener = index, openers[index]
    while opener is not None and opener > 0 and indent_width(lines[inner]) > outermost:
        kept[opener] = True
        inner, opener = opener, openers[opener]


@lru_cache(maxsize=8)
def _finder(words: frozenset[str]) -> re.Pattern[str]:
    """A pattern that finds any of ``words`` as text, compiled once for a pack's bodies."""
    return re.compile("|".join(sorted(map(re.escape, words))))


def _openers(lines: Sequence[str]) -> list[int | None]:
    """For each line that is not blank, the nearest line above it that is not blank and is indented
    less: the line that opens its block (a ``def``, an ``if``, a ``match`` arm), None for an
    outermost one. One pass, keeping the lines that may still open a block below."""
    openers: list[int | None] = []
    open_above: list[tuple[int, int]] = []
    for index, line in enumerate(lines):
        if not line.strip():
            # A blank line opens nothing and is never asked about.
            openers.append(None)
            continue
        depth = indent_width(line)
        while open_above and open_above[-1][0] >= depth:
            open_above.pop()
        openers.append(open_above[-1][1] if open_above else None)
        open_above.append((depth, index))
    return openers


def _runs_left_out(kept: Sequence[bool]) -> list[tuple[int, int]]:
    """The runs of lines not kept, as 0-based ranges (first, one past the last), in order."""
    runs: list[tuple[int, int]] = []
    first: int | None = None
    for index, keep in enumerate(kept):
        if not keep and first is None:
            first = index
        elif keep and first is not None:
            runs.append((first, index))
            first = None
    if first is not None:
        runs.append((first, len(kept)))
    return runs


def _indent_of(lines: Sequence[str]) -> str:
    """The indent of the first line that is not blank, so the note sits at the depth of its code."""
    line = next((line for line in lines if line.strip()), "")
    return line[: indent_width(line)]
