"""Secret-looking strings are replaced by ``[REDACTED]`` in everything that leaves the process
(architecture.md, *Safety*).

Secret files are never indexed; this catches what sits inside ordinary code, docs, commit messages
and log lines (``rules.py`` says what counts as a secret, ``scan.py`` where it is). Every exit calls
:func:`redact_tree` on what it sends (the language server's outgoing messages, the MCP server's, the
command line's output, log records); retrieval calls :func:`redact` earlier on pack text so that the
budget counts the text as sent and the pack can warn that it redacted.

The exit's pass is over everything that leaves, and it is cheap because most of what leaves was
scanned before: all but a few rules are tried one line at a time, so their answer for a line is
the line's own, and the lines on which they found nothing are remembered. A pack is made of lines
the pipeline scanned (bodies, summaries, file-map lines) joined by smartctx's headings; the exit
tries those rules only on the lines it has not seen, all the strings of a message at once, and the
few rules whose matches can span lines on each whole string. The answer is the one a scan of
everything would give (tests/unit/test_redact.py checks it against a fresh process's).
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable
from itertools import accumulate
from typing import Any, TypeVar

from smartctx.secrets.rules import REDACTED
from smartctx.secrets.scan import line_local_spans, lower_ascii, text_spans

# Strings are redacted by the pipeline and then again by the exit pass over the message that
# carries them (the pack text twice in an MCP result, as text and as structured content), and ids,
# names and citations recur in every message: a look-up costs the string's hash, a scan much more.
# The answers for the latest strings are kept, at most this many characters of them, each string
# counted as at least this long (a short string's entry costs more than its characters).
MAX_ANSWER_CHARS = 16_000_000
ANSWER_OVERHEAD_CHARS = 100
# Every rule but a few is tried one line at a time, so its answer for a line depends on that line
# alone. A pack is made of lines the pipeline has already scanned (each body, summary and file-map
# line), joined by smartctx's own headings: remembering the lines those rules found nothing on lets
# the exit's pass over the whole pack try them only on the lines it has not seen, with the same
# answer as a pass over everything. At most this many characters of such lines are kept.
MAX_CLEAN_LINE_CHARS = 8_000_000


Text = TypeVar("Text", str, Any)


class _CleanLines:
    """Lines on which the line rules found nothing, bounded by their total length.

    Two generations: lines are added to the young set; when it holds half the bound, it becomes the
    old set and the oldest lines go. A line found in the old set moves back to the young one, so
    the lines every pack repeats (fences, common code) stay.
    """

    def __init__(self, max_chars: int) -> None:
        self._generation_chars = max_chars // 2
        self._young: set[str] = set()
        self._old: set[str] = set()
        self._chars = 0
        # Query threads and the event loop redact at once.
        self._lock = threading.Lock()

    def unknown(self, lines: list[str]) -> list[int]:
        """The indexes of the lines not known to be clean."""
        with self._lock:
            young, old = self._young, self._old
            found = [line in young or line in old for line in lines]
        revived = [line for line, hit in zip(lines, found, strict=True) if hit and line not in young]
        if revived:
            self.add(revived)
        return [index for index, hit in enumerate(found) if not hit]

    def add(self, lines: Iterable[str]) -> None:
        with self._lock:
            for line in lines:
                if line in self._young:
                    continue
                self._young.add(line)
                self._chars += len(line) + 1
                if self._chars > self._generation_chars:
                    self._old, self._young, self._chars = self._young, set(), 0


_clean_lines = _CleanLines(MAX_CLEAN_LINE_CHARS)


def _line_spans(texts: list[str]) -> list[list[tuple[int, int]]]:
    """:func:`~smartctx.secrets.scan.line_local_spans` of each text, tried only on the lines not known
    to be clean.

    The unknown lines of all the texts are joined into one text and scanned as one. Each rule sees
    each line as in its own text: the same characters after a line break (or at the start, where a
    line rule's ``^`` matches too), ending where the line ends. So each answer is that of a scan of
    the whole text, for a few hundred keyword searches in all instead of a few hundred per text.
    """
    split = [text.split("\n") for text in texts]
    numbered = [(number, line) for number, lines in enumerate(split) for line in range(len(lines))]
    rows = [numbered[row] for row in _clean_lines.unknown([line for lines in split for line in lines])]
    found: list[list[tuple[int, int]]] = [[] for _ in texts]
    if not rows:
        return found
    scanned_lines = [split[number][line] for number, line in rows]
    scanned = "\n".join(scanned_lines)
    scanned_starts = [0, *accumulate(len(line) + 1 for line in scanned_lines)]
    dirty: set[int] = set()
    line_starts: dict[int, list[int]] = {}
    for start, end in line_local_spans(scanned, lower_ascii(scanned)):
        row = bisect_right(scanned_starts, start) - 1
        number, line = rows[row]
        if number not in line_starts:
            line_starts[number] = [0, *accumulate(len(text_line) + 1 for text_line in split[number])]
        shift = line_starts[number][line] - scanned_starts[row]
        found[number].append((start + shift, end + shift))
        dirty.add(row)
    _clean_lines.add(line for row, line in enumerate(scanned_lines) if row not in dirty)
    return found


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _secret_spans_of(texts: list[str]) -> list[list[tuple[int, int]]]:
    """The (start, end) of every secret in each text, overlapping finds merged, in order; the line
    rules tried on all of the texts at once."""
    return [
        _merged([*lines, *spanning]) if lines or spanning else []
        for lines, spanning in zip(_line_spans(texts), text_spans(texts), strict=True)
    ]


class _Answers:
    """The answers for the most recently redacted strings, bounded by their total length."""

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._answers: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._chars = 0
        # Query threads and the event loop redact at once.
        self._lock = threading.Lock()

    def get(self, texts: Iterable[str]) -> dict[str, tuple[str, int]]:
        """The answers known for any of ``texts``; the strings of a message are looked up at once."""
        found: dict[str, tuple[str, int]] = {}
        with self._lock:
            for text in texts:
                answer = self._answers.get(text)
                if answer is not None:
                    self._answers.move_to_end(text)
                    found[text] = answer
        return found

    def put(self, answers: dict[str, tuple[str, int]]) -> None:
        with self._lock:
            for text, answer in answers.items():
                size = len(text) + ANSWER_OVERHEAD_CHARS
                if size > self._max_chars or text in self._answers:
                    continue
                self._answers[text] = answer
                self._chars += size
            while self._chars > self._max_chars:
                oldest, _ = self._answers.popitem(last=False)
                self._chars -= len(oldest) + ANSWER_OVERHEAD_CHARS


_answers = _Answers(MAX_ANSWER_CHARS)


def _replaced(text: str, spans: list[tuple[int, int]]) -> tuple[str, int]:
    if not spans:
        return text, 0
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        pieces += [text[done:start], REDACTED, "\n" * text.count("\n", start, end)]
        done = end
    pieces.append(text[done:])
    return "".join(pieces), len(spans)


def redact_all(texts: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Each distinct text with its secrets replaced, and how many were replaced.

    The texts not redacted lately are scanned together (see :func:`_line_spans`); the answers are
    the ones :func:`redact` gives each text alone.
    """
    distinct = list(dict.fromkeys(texts))
    answers = _answers.get(distinct)
    new = [text for text in distinct if text not in answers]
    if new:
        fresh = {text: _replaced(text, spans) for text, spans in zip(new, _secret_spans_of(new), strict=True)}
        _answers.put(fresh)
        answers.update(fresh)
    return answers


def redact_once(texts: list[str]) -> list[tuple[str, int]]:
    """Each of ``texts`` with its secrets replaced, and how many were replaced, for texts met once
    (a file's words as it is indexed), with :func:`redact_all`'s answers.

    Nothing is remembered, neither answers nor clean lines: indexing a workspace would push out
    those of what the exits send again and again, and a file's lines are mostly its own, so looking
    them up and keeping them cost more than scanning them (django's files: 0.8 s against 1.3 s).
    The texts are joined into one and scanned as one, as :func:`_line_spans` joins lines.
    """
    joined = "\n".join(texts)
    starts = [0, *accumulate(len(text) + 1 for text in texts)]
    lines: list[list[tuple[int, int]]] = [[] for _ in texts]
    for start, end in line_local_spans(joined, lower_ascii(joined)):
        number = bisect_right(starts, start) - 1
        lines[number].append((start - starts[number], end - starts[number]))
    return [
        _replaced(text, _merged([*found, *spanning]) if found or spanning else [])
        for text, found, spanning in zip(texts, lines, text_spans(texts), strict=True)
    ]


def redact(text: str) -> tuple[str, int]:
    """The text with secrets replaced, and how many were replaced.

    A replaced span keeps its line breaks, so packed lines still match their citation.
    """
    return redact_all([text])[text]


def redact_tree(value: Text) -> Text:
    """``value`` with every string inside it redacted: a string, or JSON-shaped lists and dicts
    (a ``TypeError`` for anything else inside it).

    Dict keys are field names chosen by smartctx, so only values are read. This is the one call
    every exit makes on what it sends; the strings of one message are redacted together. A value
    that holds no secret comes back as itself, not copied.
    """
    answers = redact_all(_strings(value))
    # A string is replaced only where a secret was found: with none, the value is sent as it is.
    if not any(count for _, count in answers.values()):
        return value
    rebuilt: Text = _rebuilt(value, answers)
    return rebuilt


def _strings(value: Any) -> list[str]:
    """Every string inside ``value``, in no particular order (a pack's message holds a few thousand
    values: a loop over them costs half of a recursive walk)."""
    found: list[str] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif item is not None and not isinstance(item, (int, float)):
            # Any other object could hold strings this walk cannot see: it must not leave unread.
            raise TypeError(f"only JSON values are redacted, not {type(item).__name__}")
    return found


def _rebuilt(value: Any, answers: dict[str, tuple[str, int]]) -> Any:
    if isinstance(value, str):
        return answers[value][0]
    if isinstance(value, dict):
        return {key: _rebuilt(item, answers) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rebuilt(item, answers) for item in value]
    return value
