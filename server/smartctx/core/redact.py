"""Secret-looking strings are replaced by ``[REDACTED]`` in everything that leaves the process
(architecture.md, *Safety*).

Secret files are never indexed; this catches what sits inside ordinary code, docs, commit messages
and log lines. Detection is gitleaks' rule set, ported as data (``secret_rules.json`` names its
origin, commit and licence; ``scripts/data/port_gitleaks_rules.py`` refreshes it), plus a few forms those
rules miss that code written by hand is full of: secret-named assignments with random-looking values
(kept from smartctx's first redactor, with its entropy check), passwords inside URLs, bearer tokens
and private key blocks cut off by a pack. The corpus and the figures that chose this set are in
``bench/reliability/secrets_bench.py`` and bench/RESULTS.md.

Every exit calls :func:`redact_tree` on what it sends (the language server's outgoing messages, the
MCP server's, the command line's output, log records); retrieval calls :func:`redact` earlier on
pack text so that the budget counts the text as sent and the pack can warn that it redacted.

Each rule tried one line at a time runs only where it can match: one Hyperscan pass over a text,
every such rule compiled as a superset of itself, says which rules can match on which lines, and
Python's expression then gives the exact spans there (a rule is still tried only on the lines
holding one of its keywords, as gitleaks does).

The exit's pass is over everything that leaves, and it is cheap because most of what leaves was
scanned before: all but a few rules are tried one line at a time, so their answer for a line is
the line's own, and the lines on which they found nothing are remembered. A pack is made of lines
the pipeline scanned (bodies, summaries, file-map lines) joined by smartctx's headings; the exit
tries those rules only on the lines it has not seen, all the strings of a message at once, and the
few rules whose matches can span lines on each whole string. The answer is the one a scan of
everything would give (tests/unit/test_redact.py checks it against a fresh process's).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import math
import os
import re
import tempfile
import threading
from bisect import bisect_right
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import accumulate
from pathlib import Path
from typing import Any, TypeVar, cast

import ahocorasick
import hyperscan

from smartctx.core.cache_folder import cache_folder

REDACTED = "[REDACTED]"
# A value assigned to a secret-sounding name is redacted only when it looks random: short or
# low-entropy strings ("changeme", "", "test") are left so that code still reads naturally.
MIN_SECRET_VALUE_CHARS = 12
MIN_SECRET_ENTROPY_BITS_PER_CHAR = 3.0
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

_SECRET_NAME = (
    r"(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|private_?key|credential|auth)"
)
_SECRET_WORD = r"[\w.-]*" + _SECRET_NAME + r"[\w.-]*"


# Every spelling of _SECRET_NAME holds one of these (lower case): a line without any cannot hold a
# secret-named assignment, so those rules run only on the lines that have one.
_SECRET_NAME_KEYWORDS = ("passw", "pwd", "secret", "token", "api", "access", "private", "credential", "auth")


@dataclass(frozen=True)
class _TokenFormat:
    """A provider's published token format: its prefixes, the characters after the prefix and how
    many (fewest, most); ``example`` ends the provider's documented example values, which are not
    secrets (AWS documents ``AKIAIOSFODNN7EXAMPLE``)."""

    prefixes: tuple[str, ...]
    characters: str
    fewest: int
    most: int
    example: str = ""


# A value in one of these formats is a token whatever its entropy (a test or rotated-out token of
# zeros is still shaped like one, and gitleaks' rules, which check entropy and exact lengths, let it
# through), and within TOKEN_LENGTH_SLACK characters of the format's length either way (a token one
# character short or long is still one). The prefixes are specific enough that real code holds them
# nowhere else; bench/reliability/secrets_bench.py counts what they find in real code.
_PROVIDER_TOKEN_FORMATS = (
    # GitHub: classic personal, OAuth, user-to-server, server-to-server and refresh tokens.
    _TokenFormat(("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "[0-9A-Za-z]", 36, 36),
    # GitHub fine-grained personal access tokens: 22 characters, "_", 59 characters.
    _TokenFormat(("github_pat_",), r"\w", 82, 82),
    _TokenFormat(("glpat-",), r"[\w-]", 20, 20),
    # Slack bot and user tokens: two runs of 10 to 13 digits and a 24-character secret, dashed.
    _TokenFormat(("xoxb-", "xoxp-"), "[0-9A-Za-z-]", 46, 52),
    _TokenFormat(("sk_live_", "rk_live_"), "[0-9A-Za-z]", 24, 99),
    # AWS access key ids (long-term, temporary and the rarer kinds), base32.
    _TokenFormat(("AKIA", "ASIA", "ABIA", "ACCA"), "[A-Z2-7]", 16, 16, example="EXAMPLE"),
    _TokenFormat(("AIza",), r"[\w-]", 35, 35),
    _TokenFormat(("npm_",), "[0-9A-Za-z]", 36, 36),
    _TokenFormat(("sk-ant-api03-",), r"[\w-]", 95, 95),
)
TOKEN_LENGTH_SLACK = 2


def _provider_token_pattern() -> re.Pattern[str]:
    """One expression for every format: a prefix not preceded by a letter or digit, then a run of
    the format's characters as long as the format allows (not one of its documented examples), not
    followed by another of them."""
    alternatives = []
    for token in _PROVIDER_TOKEN_FORMATS:
        prefix = "|".join(re.escape(prefix) for prefix in token.prefixes)
        example = rf"(?!{token.characters}*{token.example}(?!{token.characters}))" if token.example else ""
        fewest, most = max(1, token.fewest - TOKEN_LENGTH_SLACK), token.most + TOKEN_LENGTH_SLACK
        alternatives.append(
            rf"(?:{prefix}){example}{token.characters}{{{fewest},{most}}}(?!{token.characters})"
        )
    return re.compile(rf"(?<![0-9A-Za-z])(?:{'|'.join(alternatives)})")


@dataclass(frozen=True)
class _OwnRule:
    """A form gitleaks' rules miss; ``random`` asks the value to look random (long, high entropy).

    The secret is group ``group`` of a match, or its first non-empty group when that is 0. A rule
    with ``line_keywords`` matches within one line holding one of them; else, when ``literal`` is
    set, the text must hold it. A rule with ``functions`` matches a call of one of them (lower
    case) whose first argument is quoted, and is tried only where such a call opens.
    """

    literal: str
    pattern: re.Pattern[str]
    random: bool
    group: int = 0
    line_keywords: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    # Whether a value that reads as a placeholder (``<token>``, ``XXXX``, ``$VAR``) is left alone.
    placeholders_allowed: bool = True


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
    # No part of it matches a line break, so it is tried one line at a time, on the lines holding
    # "://" (an expression that begins with ``\b``, tried at every offset of a pack, costs
    # milliseconds).
    _OwnRule(
        "://",
        re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@'\"`<>]+:([^\s@/'\"`<>]{3,})@[\w.-]", re.I),
        False,
        line_keywords=("://",),
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
        functions=("fetch", "get", "getenv", "env", "getproperty"),
    ),
    # A value in a provider's token format (_PROVIDER_TOKEN_FORMATS), whatever it looks like.
    _OwnRule(
        "",
        _provider_token_pattern(),
        random=False,
        line_keywords=tuple(
            sorted({prefix.lower() for token in _PROVIDER_TOKEN_FORMATS for prefix in token.prefixes})
        ),
        placeholders_allowed=False,
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
    # The rules tried one line at a time, and those whose matches can span lines (whole text).
    line_rules: tuple[_Rule, ...]
    text_rules: tuple[_Rule, ...]
    allowlist: _Allowlist
    # Each group's keywords, once each: a text is searched for each of them once, not once per rule
    # that names it (the common ones, "key" and "token", are named by dozens).
    line_keywords: _Keywords
    text_keywords: _Keywords
    # For each keyword, the line rules that name it, by their place in ``line_rules``: a text is tried
    # only with the rules whose keywords it holds.
    line_rules_by_keyword: dict[str, tuple[int, ...]]
    # The patterns of the line rules, gitleaks' and then smartctx's, compiled together into one
    # Hyperscan database: one native pass over a text says which rules can match on which lines.
    prefilter: hyperscan.Database


def _allowlist(data: dict[str, Any]) -> _Allowlist:
    return _Allowlist(
        data["target"], tuple(re.compile(r) for r in data["regexes"]), tuple(data["stopwords"]), data["all"]
    )


@cache
def _rule_set() -> _RuleSet:
    """gitleaks' rules, compiled once per process: about 200 expressions, a few milliseconds for
    Python's, about half a second for Hyperscan's prefilter."""
    data = json.loads(resources.files("smartctx.core").joinpath("secret_rules.json").read_text("utf-8"))
    rules = tuple(
        _Rule(
            rule["id"],
            re.compile(rule["regex"], 0 if multiline else re.MULTILINE),
            tuple(rule["keywords"]),
            rule["entropy"],
            rule["secretGroup"],
            tuple(_allowlist(a) for a in rule["allowlists"]),
            multiline,
        )
        for rule in data["rules"]
        for multiline in ["[\\s\\S" in rule["regex"] or "\\r\\n" in rule["regex"]]
    )
    # Each rule has keywords: a rule without one would have to be tried on every line or text, which
    # _matches and _text_spans do not do.
    assert all(rule.keywords for rule in rules)
    line_rules = tuple(rule for rule in rules if not rule.multiline)
    text_rules = tuple(rule for rule in rules if rule.multiline)
    line_keywords = _keywords(line_rules)
    return _RuleSet(
        line_rules,
        text_rules,
        _allowlist(data["allowlist"]),
        line_keywords,
        _keywords(text_rules),
        {
            keyword: tuple(index for index, rule in enumerate(line_rules) if keyword in rule.keywords)
            for keyword in line_keywords.all
        },
        _prefilter_database(
            [*(rule.pattern for rule in line_rules), *(rule.pattern for rule in _OWN_LINE_RULES)]
        ),
    )


# The length of a SHA-256 digest, which begins a saved prefilter database.
_DIGEST_BYTES = 32
# ``\\Z`` where it is an escape, not a backslash followed by "Z".
_END_OF_TEXT = re.compile(r"(?<!\\)((?:\\\\)*)\\Z")


def _prefilter_database(patterns: list[re.Pattern[str]]) -> hyperscan.Database:
    """The patterns compiled as one Hyperscan block-mode database, pattern ``i`` reporting id ``i``.

    ``HS_FLAG_PREFILTER`` makes each a superset of itself where Hyperscan lacks a construct
    (lookarounds, lazy bounded runs), so a line the database finds nothing on is one the pattern
    finds nothing on. Python's ``\\Z``, at the end of a line that a line rule runs on, is ``$``
    before the line break that follows it in the scanned text. A pattern Hyperscan cannot compile
    is an error here, not a rule silently tried everywhere.

    Compiling takes about half a second, loading a compiled database a millisecond: each process
    after the first loads the one the first saved in the cache folder, named by a digest of
    Hyperscan's version and everything it was compiled from. A damaged file, or one Hyperscan refuses
    (built for another version or processor), is compiled again.
    """
    expressions = [_END_OF_TEXT.sub(r"\1$", pattern.pattern).encode("utf-8") for pattern in patterns]
    flags = [
        hyperscan.HS_FLAG_PREFILTER
        | hyperscan.HS_FLAG_MULTILINE
        | (hyperscan.HS_FLAG_CASELESS if pattern.flags & re.IGNORECASE else 0)
        for pattern in patterns
    ]
    version = importlib.metadata.version("hyperscan")
    digest = hashlib.sha256(repr((version, expressions, flags)).encode("utf-8")).hexdigest()
    saved = cache_folder() / f"secret-prefilter-{digest[:32]}.hsdb"
    # Nothing is logged here: a log record is redacted, and the rules are not ready yet.
    try:
        stored = saved.read_bytes()
        # The file begins with the digest of the rest: a damaged file is compiled again, never
        # loaded as a database that would miss matches.
        if hashlib.sha256(stored[_DIGEST_BYTES:]).digest() == stored[:_DIGEST_BYTES]:
            return hyperscan.loadb(stored[_DIGEST_BYTES:], hyperscan.HS_MODE_BLOCK)
    except (OSError, hyperscan.HyperscanError):
        pass
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=expressions, ids=list(range(len(patterns))), elements=len(patterns), flags=flags
    )
    serialized = hyperscan.dumpb(database)
    _save(saved, hashlib.sha256(serialized).digest() + serialized)
    return database


def _save(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (processes starting together may race); a
    folder that cannot be written leaves the next process to compile again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=path.name)
    except OSError:
        return
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)


def _keywords(rules: Iterable[_Rule]) -> _Keywords:
    return _Keywords(keyword for rule in rules for keyword in rule.keywords)


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


class _Keywords:
    """A set of keywords, and which of them a lower-cased text holds.

    All of them are found in one pass over the text (Aho-Corasick): searching a pack's exit pass
    for each of a few hundred keywords in turn costs several milliseconds.
    """

    def __init__(self, keywords: Iterable[str]) -> None:
        self.all = tuple(sorted(set(keywords)))
        self._automaton = ahocorasick.Automaton()
        for keyword in self.all:
            self._automaton.add_word(keyword, keyword)
        self._automaton.make_automaton()

    def present(self, lowered: str) -> frozenset[str]:
        found: Iterable[tuple[int, str]] = self._automaton.iter(lowered)
        return frozenset(keyword for _, keyword in found)


class _KeywordLines:
    """Where a text's keywords are: which occur at all, and the lines holding each, found once per
    text for all the rules that name them."""

    def __init__(self, text: str, lowered: str, keywords: _Keywords) -> None:
        self._text = text
        self._lowered = lowered
        self.present = keywords.present(lowered)
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


def _gitleaks_spans(text: str, where: _KeywordLines, rules: tuple[_Rule, ...]) -> Iterable[tuple[int, int]]:
    for rule in rules:
        yield from _gitleaks_secrets(rule, text, _matches(rule, text, where))


def _gitleaks_secrets(rule: _Rule, text: str, matches: Iterable[re.Match[str]]) -> Iterable[tuple[int, int]]:
    """The spans of the secrets in ``matches`` of ``rule`` that its checks and allowlists keep."""
    allowlist = _rule_set().allowlist
    for match in matches:
        start, end = _secret_span(match, rule.secret_group)
        secret = text[start:end]
        if not secret or REDACTED in secret:
            continue
        if rule.entropy and entropy_bits_per_char(secret) <= rule.entropy:
            continue
        line = _line_around(text, start, end)
        if any(a.allows(secret, match.group(0), line) for a in (allowlist, *rule.allowlists)):
            continue
        yield start, end


def looks_random(value: str) -> bool:
    """Long, high-entropy and not a name: how an assigned value is told from a secret."""
    return (
        len(value) >= MIN_SECRET_VALUE_CHARS
        and entropy_bits_per_char(value) >= MIN_SECRET_ENTROPY_BITS_PER_CHAR
        and not _NAME_LIKE.match(value)
    )


def _own_matches(
    rule: _OwnRule, text: str, lowered: str, where: _KeywordLines | None
) -> Iterable[re.Match[str]]:
    if rule.line_keywords:
        if where is None:
            raise ValueError(
                f"{rule.pattern.pattern!r} is tried line by line: it needs the text's keyword lines"
            )
        for start, end in where.lines(keyword for keyword in rule.line_keywords if keyword in lowered):
            yield from rule.pattern.finditer(text, start, end)
    elif rule.functions:
        yield from _call_matches(rule, text, lowered)
    elif not rule.literal or rule.literal in lowered:
        yield from rule.pattern.finditer(text)


# Where a call whose first argument is quoted opens: ``(``, spaces, a quote.
_CALL_OPENING = re.compile(r"""\(\s*["']""")


def _call_matches(rule: _OwnRule, text: str, lowered: str) -> Iterable[re.Match[str]]:
    """The matches ``rule.pattern.finditer(text)`` gives, found from the openings of calls.

    An expression that begins with ``\\b`` is tried at every offset of the text (tens of
    milliseconds for a pack); each of its matches begins with a function's name, spaces and such an
    opening, so only the offsets where a name ends before one are tried, left to right, each from the
    end of the last match, as ``finditer`` takes them.
    """
    starts: set[int] = set()
    for opening in _CALL_OPENING.finditer(text):
        name_end = opening.start()
        while name_end and text[name_end - 1].isspace():
            name_end -= 1
        starts.update(
            name_end - len(name)
            for name in rule.functions
            if name_end >= len(name) and lowered.startswith(name, name_end - len(name))
        )
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        match = rule.pattern.match(text, start)
        if match is not None:
            done = match.end()
            yield match


def _own_spans(
    text: str, lowered: str, where: _KeywordLines | None, rules: Iterable[_OwnRule]
) -> Iterable[tuple[int, int]]:
    for rule in rules:
        yield from _own_secrets(rule, text, _own_matches(rule, text, lowered, where))


def _own_secrets(rule: _OwnRule, text: str, matches: Iterable[re.Match[str]]) -> Iterable[tuple[int, int]]:
    """The spans of the secrets in ``matches`` of ``rule`` that are not placeholders (and, where
    the rule asks, look random)."""
    for match in matches:
        start, end = _secret_span(match, rule.group)
        secret = text[start:end]
        if not secret or REDACTED in secret or (rule.placeholders_allowed and _PLACEHOLDER.match(secret)):
            continue
        if rule.random and not looks_random(secret):
            continue
        yield start, end


_OWN_LINE_RULES = tuple(rule for rule in _OWN_RULES if rule.line_keywords)
_OWN_TEXT_RULES = tuple(rule for rule in _OWN_RULES if not rule.line_keywords)


def _lower(text: str) -> str:
    """``text`` with its ASCII letters lower-cased and nothing else changed, so every offset stays.

    ``str.lower`` would change other letters too (the Kelvin sign becomes a "k"), and a
    translation table costs about 100 ns a character; ``bytes.lower`` changes ASCII bytes only, and
    UTF-8 leaves every other character's bytes above ASCII.
    """
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _line_local_spans(text: str, lowered: str) -> list[tuple[int, int]]:
    """What the rules tried one line at a time find in ``text``: every such span is inside a line.

    Each rule runs only on the lines where the prefilter finds that it can match and that hold one
    of its keywords: the answer of trying each rule on every line holding one of its keywords
    (tests/unit/test_redact.py compares the two).
    """
    rule_set = _rule_set()
    candidates = _candidate_lines(text, lowered, rule_set)
    count = len(rule_set.line_rules)
    spans: list[tuple[int, int]] = []
    for index, starts in candidates.items():
        if index < count:
            rule = rule_set.line_rules[index]
            lines = _keyword_lines(text, lowered, starts, rule.keywords)
            spans += _gitleaks_secrets(rule, text, _line_matches(rule.pattern, text, lines))
        else:
            own = _OWN_LINE_RULES[index - count]
            lines = _keyword_lines(text, lowered, starts, own.line_keywords)
            spans += _own_secrets(own, text, _line_matches(own.pattern, text, lines))
    return spans


def _keyword_lines(
    text: str, lowered: str, starts: Iterable[int], keywords: tuple[str, ...]
) -> list[tuple[int, int]]:
    """The (start, end) of each line beginning at one of ``starts`` that holds one of ``keywords``.

    No keyword holds a line break, so a keyword the whole text holds lies on one line.
    """
    found = []
    for start in sorted(starts):
        end = (text.find("\n", start) + 1 or len(text) + 1) - 1
        line = lowered[start:end]
        if any(keyword in line for keyword in keywords):
            found.append((start, end))
    return found


def _line_matches(
    pattern: re.Pattern[str], text: str, lines: list[tuple[int, int]]
) -> Iterable[re.Match[str]]:
    for start, end in lines:
        yield from pattern.finditer(text, start, end)


# A run of characters on which Hyperscan's byte-wise classes and Python's may disagree: anything
# but printable ASCII, tab and the line breaks. Python's ``\s`` also matches \v, \f and
# \x1c-\x1f, its ``\w`` and case folding letters beyond ASCII (the Kelvin sign matches "k"). A line
# holding one is tried by every rule its keywords name, as without the prefilter.
_UNFILTERED_RUN = re.compile(r"[^\t\n\r\x20-\x7e]+")


def _on_match(rule: int, start: int, end: int, flags: int, hits: object) -> None:
    cast("list[tuple[int, int]]", hits).append((rule, end))


def _candidate_lines(text: str, lowered: str, rule_set: _RuleSet) -> dict[int, set[int]]:
    """For each line rule that can match somewhere in ``text`` (by its id in the prefilter), the
    starts of the lines where it can.

    Each rule's prefilter pattern is a superset of the rule, and a match the rule finds on a line,
    run from the line's start to its end, is a match of the same characters in the whole text (a
    line rule's ``$``, ``\\b`` and lookaheads see the line break that follows as they see the end
    of the line), so the pass reports its end, which lies on that line. Every character becomes one
    byte (beyond ASCII, "?"), so an offset in the scanned bytes is one in the text; the lines
    holding characters the two engines read differently are added for every rule their keywords
    name.
    """
    hits: list[tuple[int, int]] = []
    rule_set.prefilter.scan(
        text.encode("ascii", "replace"),
        match_event_handler=_on_match,
        context=hits,
        scratch=_scratch(rule_set),
    )
    lines: dict[int, set[int]] = {}
    for rule, end in hits:
        lines.setdefault(rule, set()).add(text.rfind("\n", 0, end) + 1)
    count = len(rule_set.line_rules)
    line_end = -1
    for unfiltered in _UNFILTERED_RUN.finditer(text):
        if unfiltered.start() <= line_end:
            continue
        start = text.rfind("\n", 0, unfiltered.start()) + 1
        line_end = (text.find("\n", unfiltered.start()) + 1 or len(text) + 1) - 1
        line = lowered[start:line_end]
        present = rule_set.line_keywords.present(line)
        for index in {index for keyword in present for index in rule_set.line_rules_by_keyword[keyword]}:
            lines.setdefault(index, set()).add(start)
        for offset, own in enumerate(_OWN_LINE_RULES):
            if any(keyword in line for keyword in own.line_keywords):
                lines.setdefault(count + offset, set()).add(start)
    return lines


# Hyperscan's scratch space serves one scan at a time: query threads and the event loop redact at
# once, so each thread has its own.
_scratches = threading.local()


def _scratch(rule_set: _RuleSet) -> hyperscan.Scratch:
    scratch: hyperscan.Scratch | None = getattr(_scratches, "scratch", None)
    if scratch is None:
        scratch = _scratches.scratch = hyperscan.Scratch(rule_set.prefilter)
    return scratch


# The texts of one message are joined by this character for the searches that only ask which texts
# hold something: no literal, keyword or call opening holds it, so nothing is found across a join.
_JOIN = "\x00"


class _Joined:
    """Texts joined by ``_JOIN``, lower-cased, and which of them hold a literal, found in one search
    over them all rather than one per text."""

    def __init__(self, texts: list[str]) -> None:
        self.lowered = _lower(_JOIN.join(texts))
        self.starts = [0, *accumulate(len(text) + 1 for text in texts)]
        self._holding: dict[str, set[int]] = {}

    def lowered_text(self, index: int) -> str:
        return self.lowered[self.starts[index] : self.starts[index + 1] - 1]

    def holding(self, literal: str) -> set[int]:
        """The indexes of the texts whose lower-cased form holds ``literal``."""
        found = self._holding.get(literal)
        if found is None:
            found = set()
            at = self.lowered.find(literal)
            while at != -1:
                index = bisect_right(self.starts, at) - 1
                found.add(index)
                at = self.lowered.find(literal, self.starts[index + 1])
            self._holding[literal] = found
        return found

    def opening_calls(self) -> set[int]:
        """The indexes of the texts where a call whose first argument is quoted opens."""
        openings = _CALL_OPENING.finditer(self.lowered)
        return {bisect_right(self.starts, opening.start()) - 1 for opening in openings}


def _text_spans(texts: list[str]) -> list[list[tuple[int, int]]]:
    """What the rules whose matches can span lines find in each text.

    Each of those few rules is tried only on the texts that hold one of its keywords or its literal
    (or, for calls, a call opening): the texts of a message are searched for those all at once, and
    most hold none, so the rules run on few texts.
    """
    rule_set = _rule_set()
    joined = _Joined(texts)
    gitleaks: dict[int, list[_Rule]] = {}
    for rule in rule_set.text_rules:
        for index in {index for keyword in rule.keywords for index in joined.holding(keyword)}:
            gitleaks.setdefault(index, []).append(rule)
    own: dict[int, list[_OwnRule]] = {}
    for own_rule in _OWN_TEXT_RULES:
        holding = joined.opening_calls() if own_rule.functions else joined.holding(own_rule.literal)
        for index in holding:
            own.setdefault(index, []).append(own_rule)
    found: list[list[tuple[int, int]]] = [[] for _ in texts]
    for index in sorted({*gitleaks, *own}):
        text, lowered = texts[index], joined.lowered_text(index)
        if index in gitleaks:
            where = _KeywordLines(text, lowered, rule_set.text_keywords)
            found[index] += _gitleaks_spans(text, where, tuple(gitleaks[index]))
        found[index] += _own_spans(text, lowered, None, own.get(index, ()))
    return found


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
    """:func:`_line_local_spans` of each text, tried only on the lines not known to be clean.

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
    for start, end in _line_local_spans(scanned, _lower(scanned)):
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
    """:func:`secret_spans` of each text, the line rules tried on all of them at once."""
    return [
        _merged([*lines, *spanning]) if lines or spanning else []
        for lines, spanning in zip(_line_spans(texts), _text_spans(texts), strict=True)
    ]


def secret_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every secret in ``text``, overlapping finds merged, in order."""
    return _secret_spans_of([text])[0]


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


class RedactingFormatter(logging.Formatter):
    """Formats log records, then redacts the whole line, traceback included: stderr reaches editors'
    output panels and bug reports, so it leaves the process as surely as a reply does."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))[0]
