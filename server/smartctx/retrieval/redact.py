"""Secret-looking strings are replaced before code leaves the machine in a pack (design.md §5).

Secret files are never indexed; this catches what sits inside ordinary code: private key blocks,
cloud and VCS tokens, and long random-looking values assigned to names like password or token.
"""

from __future__ import annotations

import math
import re
from collections import Counter

REDACTED = "[REDACTED]"
# A value assigned to a secret-sounding name is redacted only when it looks random: short or
# low-entropy strings ("changeme", "", "test") are left so that code still reads naturally.
MIN_SECRET_VALUE_CHARS = 12
MIN_SECRET_ENTROPY_BITS_PER_CHAR = 3.0

# Each pattern with a literal its matches always contain, checked first: most code has none, and a
# substring test is far cheaper than the regular expression.
_PATTERNS = (
    (
        "PRIVATE KEY",
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL
        ),
    ),
    ("AKIA", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("ASIA", re.compile(r"\bASIA[0-9A-Z]{16}\b")),
    ("_", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("github_pat_", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b")),
    ("glpat-", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("xox", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("sk-", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}\b")),
    ("AIza", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
)
_ASSIGNMENT_WORDS = ("password", "passwd", "secret", "token", "key", "credential")
_ASSIGNMENT = re.compile(
    r"""(?ix)
    (\b[\w.-]*(?:password|passwd|secret|token|api_?key|access_?key|private_?key|credential)[\w.-]*
     ["']?\s*[:=]\s*["'])
    ([^"'\s]+)
    (["'])
    """
)


def _entropy_bits_per_char(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def redact(text: str) -> tuple[str, int]:
    """The text with secrets replaced, and how many were replaced."""
    replaced = 0
    for literal, pattern in _PATTERNS:
        if literal not in text:
            continue
        # A redacted block keeps its line breaks, so packed lines still match their citation.
        text, count = pattern.subn(lambda match: REDACTED + "\n" * match.group(0).count("\n"), text)
        replaced += count

    def assignment(match: re.Match[str]) -> str:
        nonlocal replaced
        value = match.group(2)
        if (
            len(value) < MIN_SECRET_VALUE_CHARS
            or value == REDACTED
            or _entropy_bits_per_char(value) < MIN_SECRET_ENTROPY_BITS_PER_CHAR
        ):
            return match.group(0)
        replaced += 1
        return match.group(1) + REDACTED + match.group(3)

    lowered = text.lower()
    if not any(word in lowered for word in _ASSIGNMENT_WORDS):
        return text, replaced
    return _ASSIGNMENT.sub(assignment, text), replaced
