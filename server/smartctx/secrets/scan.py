"""Where the rules find secrets in a text: the spans, before anything is replaced or remembered.

The rules whose matches stay within a line (all but a few) run only where they can match: one
Hyperscan pass over a text, every such rule compiled as a superset of itself (``prefilter.py``),
says which rules can match on which lines, and Python's expression then gives the exact spans there
(a rule is still tried only on the lines holding one of its keywords, as gitleaks does). The few
whose matches can span lines run on the whole texts that hold one of their keywords.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate

from smartctx.secrets.rules import (
    GENERIC_RUN,
    OWN_LINE_RULES,
    OWN_TEXT_RULES,
    PLACEHOLDER,
    REDACTED,
    GitleaksRule,
    Keywords,
    OwnRule,
    RuleSet,
    compiled_rule_set,
    entropy_bits_per_char,
    looks_random,
)


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

    def __init__(self, text: str, lowered: str, keywords: Keywords) -> None:
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


def _matches(rule: GitleaksRule, text: str, where: _KeywordLines) -> Iterable[re.Match[str]]:
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


def _gitleaks_spans(
    text: str, where: _KeywordLines, rules: tuple[GitleaksRule, ...]
) -> Iterable[tuple[int, int]]:
    for rule in rules:
        yield from _gitleaks_secrets(rule, text, _matches(rule, text, where))


def _gitleaks_secrets(
    rule: GitleaksRule, text: str, matches: Iterable[re.Match[str]]
) -> Iterable[tuple[int, int]]:
    """The spans of the secrets in ``matches`` of ``rule`` that its checks and allowlists keep."""
    allowlist = compiled_rule_set().allowlist
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


def _own_matches(
    rule: OwnRule, text: str, lowered: str, where: _KeywordLines | None
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


def _call_matches(rule: OwnRule, text: str, lowered: str) -> Iterable[re.Match[str]]:
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
    text: str, lowered: str, where: _KeywordLines | None, rules: Iterable[OwnRule]
) -> Iterable[tuple[int, int]]:
    for rule in rules:
        yield from _own_secrets(rule, text, _own_matches(rule, text, lowered, where))


def _own_secrets(rule: OwnRule, text: str, matches: Iterable[re.Match[str]]) -> Iterable[tuple[int, int]]:
    """The spans of the secrets in ``matches`` of ``rule`` that are not placeholders (and, where
    the rule asks, look random)."""
    for match in matches:
        start, end = _secret_span(match, rule.group)
        secret = text[start:end]
        if not secret or REDACTED in secret or (rule.placeholders_allowed and PLACEHOLDER.match(secret)):
            continue
        if rule.random and not looks_random(secret):
            continue
        yield start, end


def lower_ascii(text: str) -> str:
    """``text`` with its ASCII letters lower-cased and nothing else changed, so every offset stays.

    ``str.lower`` would change other letters too (the Kelvin sign becomes a "k"), and a
    translation table costs about 100 ns a character; ``bytes.lower`` changes ASCII bytes only, and
    UTF-8 leaves every other character's bytes above ASCII.
    """
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def line_local_spans(text: str, lowered: str) -> list[tuple[int, int]]:
    """What the rules tried one line at a time find in ``text``: every such span is inside a line.

    Each rule runs only on the lines where the prefilter finds that it can match and that hold one
    of its keywords: the answer of trying each rule on every line holding one of its keywords
    (tests/unit/test_redact.py compares the two).
    """
    rule_set = compiled_rule_set()
    candidates = _candidate_lines(text, lowered, rule_set)
    count = len(rule_set.line_rules)
    spans: list[tuple[int, int]] = []
    for index, starts in candidates.items():
        if index < count:
            rule = rule_set.line_rules[index]
            lines = _keyword_lines(text, lowered, starts, rule.keywords)
            matches = (
                _line_matches(rule.pattern, text, lines)
                if rule.words_at is None
                else _generic_matches(rule.pattern, rule.words_at, text, lines)
            )
            spans += _gitleaks_secrets(rule, text, matches)
        else:
            own = OWN_LINE_RULES[index - count]
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


# A character that cannot be in the run a generic rule's match begins with (rules.py's
# ``GENERIC_PREFIX``).
_OUTSIDE_GENERIC_RUN = re.compile(r"[^\w.-]")


def _generic_matches(
    pattern: re.Pattern[str], words_at: re.Pattern[str], text: str, lines: list[tuple[int, int]]
) -> Iterable[re.Match[str]]:
    """What ``pattern.finditer`` finds on each line, for a rule of gitleaks' generic form, trying
    only the offsets where a match can begin.

    A match begins with at most ``GENERIC_RUN`` word characters, dots or dashes and then one of
    the rule's words, so it begins at most that many such characters before a place ``words_at``
    finds. Those places are taken left to right, and before each the offsets finditer would try
    there, from where it stands (the end of its last match, or the last offset tried); the first
    of a place's offsets cannot lie before the first of an earlier place's, so none is missed.
    """
    for start, end in lines:
        offset = start
        for word in words_at.finditer(text, start, end):
            at = word.start()
            reach = max(offset, at - GENERIC_RUN)
            # The run that ends before the word, read backwards from it.
            outside = _OUTSIDE_GENERIC_RUN.search(text[reach:at][::-1])
            offset = reach if outside is None else at - outside.start()
            while offset <= at:
                match = pattern.match(text, offset, end)
                if match is None:
                    offset += 1
                else:
                    yield match
                    offset = match.end()


# A run of characters on which Hyperscan's byte-wise classes and Python's may disagree: anything
# but printable ASCII, tab and the line breaks. Python's ``\s`` also matches \v, \f and
# \x1c-\x1f, its ``\w`` and case folding letters beyond ASCII (the Kelvin sign matches "k"). A line
# holding one is tried by every rule its keywords name, as without the prefilter.
_UNFILTERED_RUN = re.compile(r"[^\t\n\r\x20-\x7e]+")


def _candidate_lines(text: str, lowered: str, rule_set: RuleSet) -> dict[int, set[int]]:
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
    lines: dict[int, set[int]] = {}
    for rule, end in rule_set.prefilter.hits(text.encode("ascii", "replace")):
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
        for offset, own in enumerate(OWN_LINE_RULES):
            if any(keyword in line for keyword in own.line_keywords):
                lines.setdefault(count + offset, set()).add(start)
    return lines


# The texts of one message are joined by this character for the searches that only ask which texts
# hold something: no literal, keyword or call opening holds it, so nothing is found across a join.
_JOIN = "\x00"


class _Joined:
    """Texts joined by ``_JOIN``, lower-cased, and which of them hold a literal, found in one search
    over them all rather than one per text."""

    def __init__(self, texts: list[str]) -> None:
        self.lowered = lower_ascii(_JOIN.join(texts))
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


def text_spans(texts: list[str]) -> list[list[tuple[int, int]]]:
    """What the rules whose matches can span lines find in each text.

    Each of those few rules is tried only on the texts that hold one of its keywords or its literal
    (or, for calls, a call opening): the texts of a message are searched for those all at once, and
    most hold none, so the rules run on few texts.
    """
    rule_set = compiled_rule_set()
    joined = _Joined(texts)
    gitleaks: dict[int, list[GitleaksRule]] = {}
    for rule in rule_set.text_rules:
        for index in {index for keyword in rule.keywords for index in joined.holding(keyword)}:
            gitleaks.setdefault(index, []).append(rule)
    own: dict[int, list[OwnRule]] = {}
    for own_rule in OWN_TEXT_RULES:
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
