"""A body's lines as the pack shows them: some of the definition's lines may stand in for others.

``docstrings.py`` shortens long Python docstrings and ``long_bodies.py`` leaves out a long body's
lines far from the task's words; each replaces lines with a note naming them, so the lines shown
are no longer the file's lines one for one. This is what both hand to the pack stage.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ShownLines:
    """A body's lines as shown, with the line of the file each one stands for."""

    lines: list[str]
    # Each shown line's line in the file; a note that stands for left-out lines has the last of them.
    numbers: list[int]
    # The ranges of lines (1-based, inclusive) that notes stand for.
    left_out: tuple[tuple[int, int], ...]


def all_lines(start: int, lines: list[str]) -> ShownLines:
    """``lines`` shown as they are, the first at line ``start``."""
    return ShownLines(lines, list(range(start, start + len(lines))), ())


def indent_width(line: str) -> int:
    """How many spaces and tabs ``line`` begins with: the depth of its block."""
    return len(line) - len(line.lstrip(" \t"))
