"""Token counts: a text counted from its parts equals the text counted whole, for both tokenizers."""

from __future__ import annotations

import random
import sysconfig
from itertools import pairwise
from pathlib import Path

import pytest

from smartctx.core.tokens import TokenCounter, joins_apart

SERVER = Path(__file__).resolve().parents[2] / "server" / "smartctx"
# Texts a pack joins and the ones that test the rule's edges: fences, comments that open with a
# slash, blank and white-space lines, carriage returns, Unicode spaces.
EDGES = (
    "```\n",
    "/",
    "// x\n",
    "\n",
    "  \n",
    "\r\n",
    "/** doc */\n",
    "## 1. x\n\n```python\n",
    "```\n\n",
    "- a.py:1-2 function `f`\n",
    "\t\tx\n",
    " \u00a0y\n",
    "\u2028z\n",
    "\x1c\n",
    "x/\n",
    ")\n",
    "  /x\n",
    "\n\n\n",
    "é\n",
    "",
)


@pytest.fixture(scope="module", params=["o200k_base", "cl100k_base"])
def counter(request: pytest.FixtureRequest) -> TokenCounter:
    return TokenCounter(request.param)


def _pieces(rng: random.Random, texts: list[str], count: int) -> list[str]:
    pieces = []
    for _ in range(count):
        if rng.random() < 0.3:
            pieces.append(rng.choice(EDGES))
            continue
        lines = rng.choice(texts).splitlines(keepends=True)
        start = rng.randrange(len(lines))
        piece = "".join(lines[start : start + rng.randrange(1, 20)])
        # Some pieces start or end mid-line.
        if rng.random() < 0.2:
            piece = piece[rng.randrange(len(piece) + 1) :]
        if rng.random() < 0.2:
            piece = piece[: rng.randrange(len(piece) + 1)]
        pieces.append(piece)
    return pieces


def test_a_text_counted_from_its_parts_has_the_tokens_of_the_whole(counter: TokenCounter) -> None:
    """Real code (smartctx's and the standard library's) cut into parts at line ends and anywhere."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    paths = [*sorted(SERVER.rglob("*.py")), *sorted((stdlib / "email").glob("*.py"))]
    texts = [text for text in (path.read_text(encoding="utf-8") for path in paths) if text]
    rng = random.Random(4)
    clean = 0
    for _ in range(1500):
        parts = _pieces(rng, texts, rng.randrange(1, 8))
        clean += sum(joins_apart(head, tail) for head, tail in pairwise(parts))
        fresh = TokenCounter(counter.name)
        assert counter.count_joined(parts) == fresh.count("".join(parts)), parts
    assert clean > 1000


def test_the_joins_that_merge_tokens_are_counted_whole(counter: TokenCounter) -> None:
    """Each of these joins makes the tokens of the whole differ from the parts' in one tokenizer or
    both; none is taken apart."""
    merging = [
        ("```\n", "/x"),
        ("x\n", "\n"),
        ("x\n", "  \n  y"),
        ("x\n", "\r\ny"),
        ("x", "y"),
        (")\n", "//c"),
        # White space alone joins what follows it to the line break before it.
        ("x\n", "     "),
    ]
    fresh = TokenCounter(counter.name)
    for head, tail in merging:
        assert not joins_apart(head, tail)
        assert counter.count_joined([head, tail]) == fresh.count(head + tail)
    assert any(fresh.count(head + tail) != fresh.count(head) + fresh.count(tail) for head, tail in merging)


def test_white_space_alone_between_line_breaks_is_counted_with_both(counter: TokenCounter) -> None:
    """A part of white space alone carries the line break before it on to the one after it."""
    parts = [" \u00a0y\n", "     ", "\n    def original(self):\n"]
    assert counter.count_joined(parts) == TokenCounter(counter.name).count("".join(parts))
