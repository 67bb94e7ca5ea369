"""What counts as a secret: gitleaks' rule set, ported as data, and the forms of smartctx's own.

Detection is gitleaks' rule set, ported as data (``secret_rules.json`` beside this module names its
origin, commit and licence; ``scripts/data/port_gitleaks_rules.py`` refreshes it), plus a few forms those
rules miss that code written by hand is full of: secret-named assignments with random-looking values
(kept from smartctx's first redactor, with its entropy check), passwords inside URLs, bearer tokens
and private key blocks cut off by a pack. The corpus and the figures that chose this set are in
``bench/reliability/secrets_bench.py`` and bench/RESULTS.md. Where the rules run is ``scan.py``'s concern.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import ahocorasick

from smartctx.secrets.prefilter import Prefilter

# What a secret is replaced by. A value that holds it was redacted before and is not found again.
REDACTED = "[REDACTED]"
# A value assigned to a secret-sounding name is redacted only when it looks random: short or
# low-entropy strings ("changeme", "", "test") are left so that code still reads naturally.
MIN_SECRET_VALUE_CHARS = 12
MIN_SECRET_ENTROPY_BITS_PER_CHAR = 3.0


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
class OwnRule:
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
    OwnRule(
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
    OwnRule(
        "://",
        re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@'\"`<>]+:([^\s@/'\"`<>]{3,})@[\w.-]", re.I),
        False,
        line_keywords=("://",),
    ),
    OwnRule("bearer", re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=-]+)", re.I), random=True),
    # A value assigned to a secret-sounding name, quoted with any of the three quotes, or bare as in
    # shell, .env, YAML, INI and properties files; ``cfg['password'] = …`` and ``'password' => …``
    # included.
    OwnRule(
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
    OwnRule(
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
    OwnRule(
        "",
        _provider_token_pattern(),
        random=False,
        line_keywords=tuple(
            sorted({prefix.lower() for token in _PROVIDER_TOKEN_FORMATS for prefix in token.prefixes})
        ),
        placeholders_allowed=False,
    ),
    # An XML element named like a secret: <password>…</password>.
    OwnRule("<", re.compile(r"<(" + _SECRET_WORD + r")>([^<\s]+)</\1>", re.I), random=True, group=2),
)
# The rules tried one line at a time (with gitleaks' line rules, behind the prefilter), and those
# tried on whole texts.
OWN_LINE_RULES = tuple(rule for rule in _OWN_RULES if rule.line_keywords)
OWN_TEXT_RULES = tuple(rule for rule in _OWN_RULES if not rule.line_keywords)
# Placeholders are not secrets: ${VAR}, {{ var }}, %(name)s, <password>, ****, $VAR, PASSWORD.
PLACEHOLDER = re.compile(
    r"^(?:\$\{.*\}|\{\{.*\}\}|\{\w*\}|%\(?\w*\)?s|<[^>]*>|\*+|\$\w+|x+|\.+|[A-Z_]+|pass(?:word)?|passwd|pwd)$",
    re.I,
)
# A value made only of letters and separators is a name, not a key (gitleaks' generic rule agrees).
_NAME_LIKE = re.compile(r"^[A-Za-z_.-]+$|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


@dataclass(frozen=True)
class Allowlist:
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
class GitleaksRule:
    id: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    entropy: float
    secret_group: int
    allowlists: tuple[Allowlist, ...]
    # Whether a match can span lines; the others are tried only on lines holding a keyword.
    multiline: bool
    # For a rule of gitleaks' generic form (see ``GENERIC_PREFIX``), where one of the words its
    # matches begin with can stand: a lookahead of them, with the rule's flags.
    words_at: re.Pattern[str] | None = None


# Half of gitleaks' rules begin with up to this many word characters, dots or dashes and then one of
# their words: ``(?i)[\w.-]{0,50}?(?:access|auth|...)``. Python's engine tries such an expression at
# every offset of a line and walks those 50 characters from each; a match can only begin within such
# a run before one of the words, so the scan tries only those offsets (scan.py's
# ``_generic_matches``).
GENERIC_RUN = 50
GENERIC_PREFIX = r"(?i)[\w.-]{0,50}?(?:"
# What could make a word's match depend on the characters around it: such a rule keeps the plain
# scan.
_CONTEXT_MARKS = ("\\b", "\\B", "\\A", "\\Z", "(?=", "(?!", "(?<", "^", "$")


def _words_at(regex: str) -> re.Pattern[str] | None:
    """Where a rule of the generic form can find one of its words, or None for a rule of another
    form (or words whose match depends on what surrounds them)."""
    if not regex.startswith(GENERIC_PREFIX):
        return None
    depth, index = 1, len(GENERIC_PREFIX)
    while depth and index < len(regex):
        char = regex[index]
        if char == "\\":
            index += 1
        elif char == "[":
            # A class's brackets and parentheses are characters, not groups; a "]" first in it too.
            index += 1 + regex.startswith("^", index + 1)
            index += regex.startswith("]", index)
            while regex[index] != "]":
                index += 2 if regex[index] == "\\" else 1
        else:
            depth += {"(": 1, ")": -1}.get(char, 0)
        index += 1
    words = regex[len(GENERIC_PREFIX) : index - 1]
    if depth or any(mark in words for mark in _CONTEXT_MARKS):
        return None
    return re.compile(f"(?i)(?=(?:{words}))")


@dataclass(frozen=True)
class RuleSet:
    # The rules tried one line at a time, and those whose matches can span lines (whole text).
    line_rules: tuple[GitleaksRule, ...]
    text_rules: tuple[GitleaksRule, ...]
    allowlist: Allowlist
    # Each group's keywords, once each: a text is searched for each of them once, not once per rule
    # that names it (the common ones, "key" and "token", are named by dozens).
    line_keywords: Keywords
    text_keywords: Keywords
    # For each keyword, the line rules that name it, by their place in ``line_rules``: a text is tried
    # only with the rules whose keywords it holds.
    line_rules_by_keyword: dict[str, tuple[int, ...]]
    # The patterns of the line rules, gitleaks' and then smartctx's, compiled together into one
    # Hyperscan database: one native pass over a text says which rules can match on which lines.
    prefilter: Prefilter


def _allowlist(data: dict[str, Any]) -> Allowlist:
    return Allowlist(
        data["target"], tuple(re.compile(r) for r in data["regexes"]), tuple(data["stopwords"]), data["all"]
    )


@cache
def rules_digest() -> str:
    """A fingerprint of what counts as a secret, gitleaks' rules as shipped and smartctx's own, by
    which what was made under other rules (an index's search words) is known."""
    own = [
        (
            rule.literal,
            rule.pattern.pattern,
            rule.pattern.flags,
            rule.random,
            rule.group,
            rule.line_keywords,
            rule.functions,
            rule.placeholders_allowed,
        )
        for rule in _OWN_RULES
    ]
    shipped = resources.files("smartctx.secrets").joinpath("secret_rules.json").read_text("utf-8")
    return hashlib.sha256(repr((shipped, own)).encode()).hexdigest()[:16]


@cache
def compiled_rule_set() -> RuleSet:
    """gitleaks' rules, compiled once per process: about 200 expressions, a few milliseconds for
    Python's, about half a second for Hyperscan's prefilter."""
    data = json.loads(resources.files("smartctx.secrets").joinpath("secret_rules.json").read_text("utf-8"))
    rules = tuple(
        GitleaksRule(
            rule["id"],
            re.compile(rule["regex"], 0 if multiline else re.MULTILINE),
            tuple(rule["keywords"]),
            rule["entropy"],
            rule["secretGroup"],
            tuple(_allowlist(a) for a in rule["allowlists"]),
            multiline,
            _words_at(rule["regex"]),
        )
        for rule in data["rules"]
        for multiline in ["[\\s\\S" in rule["regex"] or "\\r\\n" in rule["regex"]]
    )
    # Each rule has keywords: a rule without one would have to be tried on every line or text, which
    # the scan does not do.
    assert all(rule.keywords for rule in rules)
    line_rules = tuple(rule for rule in rules if not rule.multiline)
    text_rules = tuple(rule for rule in rules if rule.multiline)
    line_keywords = _keywords(line_rules)
    return RuleSet(
        line_rules,
        text_rules,
        _allowlist(data["allowlist"]),
        line_keywords,
        _keywords(text_rules),
        {
            keyword: tuple(index for index, rule in enumerate(line_rules) if keyword in rule.keywords)
            for keyword in line_keywords.all
        },
        Prefilter([*(rule.pattern for rule in line_rules), *(rule.pattern for rule in OWN_LINE_RULES)]),
    )


def _keywords(rules: Iterable[GitleaksRule]) -> Keywords:
    return Keywords(keyword for rule in rules for keyword in rule.keywords)


def entropy_bits_per_char(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


class Keywords:
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


def looks_random(value: str) -> bool:
    """Long, high-entropy and not a name: how an assigned value is told from a secret."""
    return (
        len(value) >= MIN_SECRET_VALUE_CHARS
        and entropy_bits_per_char(value) >= MIN_SECRET_ENTROPY_BITS_PER_CHAR
        and not _NAME_LIKE.match(value)
    )
