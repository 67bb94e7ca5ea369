"""Commit messages → pull request number, title and summary. Pure text handling, no git."""

from __future__ import annotations

import re

# GitHub's squash merges end the title with the pull request number: "Fix the parser (#123)".
_SQUASH_NUMBER = re.compile(r"\(#(\d+)\)\s*$")
# GitHub's merge commits: "Merge pull request #123 from owner/branch", the PR title in the body.
_MERGE_NUMBER = re.compile(r"^Merge pull request #(\d+) from \S+")
# A git trailer line ("Signed-off-by: A <a@b>"); a message's last paragraph made only of these is
# metadata, not an explanation.
_TRAILER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*: \S")
# Trailers that GitHub and review tools put anywhere in a squashed message, not only at its end.
_KNOWN_TRAILERS = re.compile(
    r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|"
    r"helped-by|change-id|cc):",
    re.IGNORECASE,
)
# The longest summary a change carries, in UTF-8 bytes (issue #5: "at most 2 KB").
MAX_SUMMARY_BYTES = 2048


def squash_pr(subject: str) -> int | None:
    match = _SQUASH_NUMBER.search(subject)
    return int(match.group(1)) if match else None


def merge_pr(subject: str) -> int | None:
    match = _MERGE_NUMBER.match(subject)
    return int(match.group(1)) if match else None


def split_message(message: str) -> tuple[str, str]:
    """(subject, body) of a commit message; the body without trailers, at most 2 KB."""
    lines = message.strip("\n").splitlines()
    subject = lines[0].strip() if lines else ""
    return subject, summary_of("\n".join(lines[1:]))


def summary_of(body: str) -> str:
    """The explanation in a message body: trailers removed, cut at a line boundary to 2 KB."""
    paragraphs = [part for part in re.split(r"\n\s*\n", body.strip("\n")) if part.strip()]
    if paragraphs and all(_TRAILER.match(line) or line[:1].isspace() for line in paragraphs[-1].splitlines()):
        paragraphs.pop()
    kept = [
        "\n".join(
            line.rstrip() for line in paragraph.splitlines() if not _KNOWN_TRAILERS.match(line.strip())
        ).strip("\n")
        for paragraph in paragraphs
    ]
    return _cut("\n\n".join(part for part in kept if part.strip()))


def _cut(text: str) -> str:
    """``text`` if it fits in MAX_SUMMARY_BYTES, else its longest prefix of whole lines that does
    (or, when even the first line is longer, that line cut at a space)."""
    if len(text.encode("utf-8")) <= MAX_SUMMARY_BYTES:
        return text
    kept: list[str] = []
    size = 0
    for line in text.splitlines():
        size += len(line.encode("utf-8")) + (1 if kept else 0)
        if size > MAX_SUMMARY_BYTES:
            break
        kept.append(line)
    if kept:
        return "\n".join(kept).rstrip()
    head = text.encode("utf-8")[:MAX_SUMMARY_BYTES].decode("utf-8", "ignore")
    return head.rsplit(" ", 1)[0] if " " in head else head
