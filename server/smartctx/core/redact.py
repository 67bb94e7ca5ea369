"""Secret-looking strings are replaced by ``[REDACTED]`` in everything that leaves the process
(design.md §5).

Secret files are never indexed; this catches what sits inside ordinary code, docs, commit messages
and log lines. Detection is gitleaks' rule set, ported as data (``secret_rules.json`` names its
origin, commit and licence; ``bench/port_gitleaks_rules.py`` refreshes it), plus a few forms those
rules miss that code written by hand is full of: secret-named assignments with random-looking values
(kept from smartctx's first redactor, with its entropy check), passwords inside URLs, bearer tokens
and private key blocks cut off by a pack. The corpus and the figures that chose this set are in
``bench/secrets_bench.py`` and bench/RESULTS.md.

Every exit calls :func:`redact_tree` on what it sends (the language server's outgoing messages, the
MCP server's, the command line's output, log records); retrieval calls :func:`redact` earlier on
pack text so that the budget counts the text as sent and the pack can warn that it redacted.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any, TypeVar

REDACTED = "[REDACTED]"
# A value assigned to a secret-sounding name is redacted only when it looks random: short or
# low-entropy strings ("changeme", "", "test") are left so that code still reads naturally.
MIN_SECRET_VALUE_CHARS = 12
MIN_SECRET_ENTROPY_BITS_PER_CHAR = 3.0
# Short strings (ids, names, citations, signatures, docs) recur in every pack and every exit pass:
# their answers are kept, at most this many of at most this length (a few MB).
MAX_CACHED_CHARS = 2_000
CACHED_STRINGS = 4_096
# Long strings (pack text, packed bodies) are redacted by the pipeline and then again by the exit
# pass over the message that carries them, the pack text twice in an MCP result (as text and as
# structured content). A scan of a 56 kB message costs tens of milliseconds; a second look-up of the
# same string costs its hash. The answers of at most this many characters of long text are kept.
MAX_LONG_CACHE_CHARS = 16_000_000

_SECRET_NAME = (
    r"(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|private_?key|credential|auth)"
)
_SECRET_WORD = r"[\w.-]*" + _SECRET_NAME + r"[\w.-]*"


# Every spelling of _SECRET_NAME holds one of these (lower case): a line without any cannot hold a
# secret-named assignment, so those rules run only on the lines that have one.
_SECRET_NAME_KEYWORDS = ("passw", "pwd", "secret", "token", "api", "access", "private", "credential", "auth")


@dataclass(frozen=True)
class _OwnRule:
    """A form gitleaks' rules miss; ``random`` asks the value to look random (long, high entropy).

    The secret is group ``group`` of a match, or its first non-empty group when that is 0. A rule
    with ``line_keywords`` matches within one line holding one of them; else, when ``literal`` is
    set, the text must hold it.
    """

    literal: str
    pattern: re.Pattern[str]
    random: bool
    group: int = 0
    line_keywords: tuple[str, ...] = ()


_OWN_RULES = (
    # A private key block, to its end or to the end of the text: a body cut to fit the budget can
    # end inside one, where gitleaks' rule (which wants the END line) would miss it.
    _OwnRule(
        "-----begin",
        re.compile(
            r"-----BEGIN [A-Z0-9 _-]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 _-]*-----|\Z)", re.S
        ),
        random=False,
    ),
    # A password in a URL's user information: postgres://user:PASSWORD@host. Any value but a
    # placeholder counts: people put weak passwords there too, and the URL reads well without it.
    _OwnRule(
        "://", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@'\"`<>]+:([^\s@/'\"`<>]{3,})@[\w.-]", re.I), False
    ),
    _OwnRule("bearer", re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=-]+)", re.I), random=True),
    # A value assigned to a secret-sounding name, quoted with any of the three quotes, or bare as in
    # shell, .env, YAML, INI and properties files; ``cfg['password'] = …`` and ``'password' => …``
    # included.
    _OwnRule(
        "",
        re.compile(
            r"\b"
            + _SECRET_WORD
            + r"""["'`]?\]?[ \t]*"""
            + r"""(?:(?::=|=>|[:=])[ \t]*["'`]([^"'`\s]+)["'`]|[:=][ \t]*([^\s"'`,;()\[\]{}<>]+))""",
            re.I,
        ),
        random=True,
        line_keywords=_SECRET_NAME_KEYWORDS,
    ),
    # The default of a secret-named environment variable: ENV.fetch("API_KEY", "…"), os.getenv(…).
    _OwnRule(
        "",
        re.compile(
            r"""\b(?:fetch|get|getenv|getEnv|env|getProperty)\s*\(\s*["']"""
            + _SECRET_WORD
            + r"""["']\s*,\s*["'`]([^"'`\s]+)["'`]""",
            re.I,
        ),
        random=True,
    ),
    # An XML element named like a secret: <password>…</password>.
    _OwnRule("<", re.compile(r"<(" + _SECRET_WORD + r")>([^<\s]+)</\1>", re.I), random=True, group=2),
)
# Placeholders are not secrets: ${VAR}, {{ var }}, %(name)s, <password>, ****, $VAR, PASSWORD.
_PLACEHOLDER = re.compile(
    r"^(?:\$\{.*\}|\{\{.*\}\}|\{\w*\}|%\(?\w*\)?s|<[^>]*>|\*+|\$\w+|x+|\.+|[A-Z_]+|pass(?:word)?|passwd|pwd)$",
    re.I,
)
# A value made only of letters and separators is a name, not a key (gitleaks' generic rule agrees).
_NAME_LIKE = re.compile(r"^[A-Za-z_.-]+$|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# Keywords are ASCII; lower-casing only ASCII keeps every offset of the text valid in its lower case.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

Text = TypeVar("Text", str, Any)


@dataclass(frozen=True)
class _Allowlist:
    target: str
    regexes: tuple[re.Pattern[str], ...]
    stopwords: tuple[str, ...]
    all: bool

    def allows(self, secret: str, match: str, line: str) -> bool:
        text = {"secret": secret, "match": match, "line": line}[self.target]
        checks = []
        if self.regexes:
            checks.append(any(pattern.search(text) for pattern in self.regexes))
        if self.stopwords:
            lowered = secret.lower()
            checks.append(any(word in lowered for word in self.stopwords))
        return all(checks) if self.all else any(checks)


@dataclass(frozen=True)
class _Rule:
    id: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    entropy: float
    secret_group: int
    allowlists: tuple[_Allowlist, ...]
    # Whether a match can span lines; the others are tried only on lines holding a keyword.
    multiline: bool


@dataclass(frozen=True)
class _RuleSet:
    rules: tuple[_Rule, ...]
    allowlist: _Allowlist
    # Every rule's keywords, once each: a text is searched for each of them once, not once per rule
    # that names it (the common ones, "key" and "token", are named by dozens).
    keywords: tuple[str, ...]


def _allowlist(data: dict[str, Any]) -> _Allowlist:
    return _Allowlist(
        data["target"], tuple(re.compile(r) for r in data["regexes"]), tuple(data["stopwords"]), data["all"]
    )


@cache
def _rule_set() -> _RuleSet:
    """gitleaks' rules, compiled once per process (about 200 expressions, a few milliseconds)."""
    data = json.loads(resources.files("smartctx.core").joinpath("secret_rules.json").read_text("utf-8"))
    rules = tuple(
        _Rule(
            rule["id"],
            re.compile(rule["regex"]),
            tuple(rule["keywords"]),
            rule["entropy"],
            rule["secretGroup"],
            tuple(_allowlist(a) for a in rule["allowlists"]),
            "[\\s\\S" in rule["regex"] or "\\r\\n" in rule["regex"],
        )
        for rule in data["rules"]
    )
    keywords = tuple(sorted({keyword for rule in rules for keyword in rule.keywords}))
    return _RuleSet(rules, _allowlist(data["allowlist"]), keywords)


def entropy_bits_per_char(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _line_around(text: str, start: int, end: int) -> str:
    return text[text.rfind("\n", 0, start) + 1 : (text.find("\n", end) + 1 or len(text) + 1) - 1]


def _secret_span(match: re.Match[str], group: int) -> tuple[int, int]:
    """Where the secret is in a match: the chosen group, else the first non-empty one, else all."""
    if group:
        return match.span(group)
    for index in range(1, (match.re.groups or 0) + 1):
        if match.group(index):
            return match.span(index)
    return match.span()


class _KeywordLines:
    """Where a text's keywords are: which occur at all, and the lines holding each, found once per
    text for all the rules that name them."""

    def __init__(self, text: str, lowered: str, keywords: tuple[str, ...]) -> None:
        self._text = text
        self._lowered = lowered
        self.present = frozenset(keyword for keyword in keywords if keyword in lowered)
        self._line_starts: dict[str, list[int]] = {}

    def line_starts(self, keyword: str) -> list[int]:
        starts = self._line_starts.get(keyword)
        if starts is None:
            starts = []
            at = self._lowered.find(keyword)
            while at != -1:
                starts.append(self._text.rfind("\n", 0, at) + 1)
                end = self._text.find("\n", at)
                at = -1 if end == -1 else self._lowered.find(keyword, end)
            self._line_starts[keyword] = starts
        return starts

    def lines(self, keywords: Iterable[str]) -> list[tuple[int, int]]:
        """The (start, end) of each line that holds one of ``keywords``, in order."""
        starts = sorted({start for keyword in keywords for start in self.line_starts(keyword)})
        return [(start, (self._text.find("\n", start) + 1 or len(self._text) + 1) - 1) for start in starts]


def _matches(rule: _Rule, text: str, where: _KeywordLines) -> Iterable[re.Match[str]]:
    """The rule's matches in ``text``: a line-local rule runs only on the lines with a keyword.

    Most rules begin with a bounded run of any word character, so an expression tried at every
    offset of a long text costs much more than the few lines that can match at all.
    """
    if not rule.keywords:
        yield from rule.pattern.finditer(text)
        return
    found = [keyword for keyword in rule.keywords if keyword in where.present]
    if not found:
        return
    if rule.multiline:
        yield from rule.pattern.finditer(text)
    else:
        for start, end in where.lines(found):
            yield from rule.pattern.finditer(text, start, end)


def _gitleaks_spans(text: str, where: _KeywordLines) -> Iterable[tuple[int, int]]:
    rule_set = _rule_set()
    for rule in rule_set.rules:
        for match in _matches(rule, text, where):
            start, end = _secret_span(match, rule.secret_group)
            secret = text[start:end]
            if not secret or REDACTED in secret:
                continue
            if rule.entropy and entropy_bits_per_char(secret) <= rule.entropy:
                continue
            line = _line_around(text, start, end)
            if any(a.allows(secret, match.group(0), line) for a in (rule_set.allowlist, *rule.allowlists)):
                continue
            yield start, end


def looks_random(value: str) -> bool:
    """Long, high-entropy and not a name: how an assigned value is told from a secret."""
    return (
        len(value) >= MIN_SECRET_VALUE_CHARS
        and entropy_bits_per_char(value) >= MIN_SECRET_ENTROPY_BITS_PER_CHAR
        and not _NAME_LIKE.match(value)
    )


def _own_matches(rule: _OwnRule, text: str, lowered: str, where: _KeywordLines) -> Iterable[re.Match[str]]:
    if rule.line_keywords:
        for start, end in where.lines(keyword for keyword in rule.line_keywords if keyword in lowered):
            yield from rule.pattern.finditer(text, start, end)
    elif not rule.literal or rule.literal in lowered:
        yield from rule.pattern.finditer(text)


def _own_spans(text: str, lowered: str, where: _KeywordLines) -> Iterable[tuple[int, int]]:
    for rule in _OWN_RULES:
        for match in _own_matches(rule, text, lowered, where):
            start, end = _secret_span(match, rule.group)
            secret = text[start:end]
            if not secret or REDACTED in secret or _PLACEHOLDER.match(secret):
                continue
            if rule.random and not looks_random(secret):
                continue
            yield start, end


def secret_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every secret in ``text``, overlapping finds merged, in order."""
    lowered = text.translate(_ASCII_LOWER)
    where = _KeywordLines(text, lowered, _rule_set().keywords)
    spans = sorted([*_gitleaks_spans(text, where), *_own_spans(text, lowered, where)])
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


class _LongTextAnswers:
    """The answers for the most recently redacted long strings, bounded by their total length."""

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._answers: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._chars = 0
        # Query threads and the event loop redact at once.
        self._lock = threading.Lock()

    def get(self, text: str) -> tuple[str, int] | None:
        with self._lock:
            answer = self._answers.get(text)
            if answer is not None:
                self._answers.move_to_end(text)
            return answer

    def put(self, text: str, answer: tuple[str, int]) -> None:
        if len(text) > self._max_chars:
            return
        with self._lock:
            if text in self._answers:
                return
            self._answers[text] = answer
            self._chars += len(text)
            while self._chars > self._max_chars:
                oldest, _ = self._answers.popitem(last=False)
                self._chars -= len(oldest)


_long_text_answers = _LongTextAnswers(MAX_LONG_CACHE_CHARS)


def redact(text: str) -> tuple[str, int]:
    """The text with secrets replaced, and how many were replaced.

    A replaced span keeps its line breaks, so packed lines still match their citation.
    """
    if len(text) <= MAX_CACHED_CHARS:
        return _redact_short(text)
    answer = _long_text_answers.get(text)
    if answer is None:
        answer = _redact(text)
        _long_text_answers.put(text, answer)
    return answer


@lru_cache(maxsize=CACHED_STRINGS)
def _redact_short(text: str) -> tuple[str, int]:
    return _redact(text)


def _redact(text: str) -> tuple[str, int]:
    spans = secret_spans(text)
    if not spans:
        return text, 0
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        pieces += [text[done:start], REDACTED, "\n" * text.count("\n", start, end)]
        done = end
    pieces.append(text[done:])
    return "".join(pieces), len(spans)


def redact_tree(value: Text) -> Text:
    """``value`` with every string inside it redacted: a string, or JSON-shaped lists and dicts.

    Dict keys are field names chosen by smartctx, so only values are read. This is the one call
    every exit makes on what it sends.
    """
    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, dict):
        return {key: redact_tree(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_tree(item) for item in value]
    return value


class RedactingFormatter(logging.Formatter):
    """Formats log records, then redacts the whole line, traceback included: stderr reaches editors'
    output panels and bug reports, so it leaves the process as surely as a reply does."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))[0]
