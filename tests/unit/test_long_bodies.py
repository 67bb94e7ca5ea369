"""A long body after the pack's first is shown by its head, its tail and the lines near the task's
words (retrieval/long_bodies.py): each run of other lines is one comment naming them, the lines left
out are reported, and the first body is always whole."""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import pytest
from tests.node_rows import function_row

from smartctx.core.files import line_offsets, span_digest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.diversify import Selection
from smartctx.retrieval.docstrings import shortened
from smartctx.retrieval.long_bodies import LONG_BODY_LINES, near_task_words, shortened_to_fit
from smartctx.retrieval.pack import pack
from smartctx.retrieval.score import ScoredNode
from smartctx.retrieval.shown_lines import all_lines

WORDS = frozenset({"refund", "refundorder"})


def settle(lines: int, refund_at: int) -> list[str]:
    """A Python function of ``lines`` lines whose line ``refund_at`` (0-based) holds the task's word."""
    body = [f"    total_{number} = ledger.entry({number})\n" for number in range(lines - 2)]
    body[refund_at - 1] = "    refund = refund_order(total_1)\n"
    return ["def settle(ledger):\n", *body, "    return total_1\n"]


def test_a_long_body_keeps_its_head_its_tail_and_the_lines_near_the_task_words() -> None:
    lines = settle(120, 60)
    shown = near_task_words("python", all_lines(200, lines), WORDS)
    # Lines 0-5 (the head), 57-63 (three on each side of line 60) and 118-119 (the tail) are shown.
    assert shown.lines == [
        *lines[:6],
        "    # [lines 206-256 not shown]\n",
        *lines[57:64],
        "    # [lines 264-317 not shown]\n",
        *lines[118:],
    ]
    assert shown.numbers == [*range(200, 206), 256, *range(257, 264), 317, 318, 319]
    assert shown.left_out == ((206, 256), (264, 317))
    # The notes are comments: the code is still Python.
    ast.parse("".join(shown.lines))


def test_the_lines_that_open_the_blocks_around_a_shown_line_are_shown_too() -> None:
    """A task word deep in the seventh of ten methods: its ``def`` and ``if`` lines are shown, so
    a reader knows where the lines shown sit, and the other methods are left out."""
    lines = ["class Ledger:\n"]
    for number in range(10):
        lines += [f"    def post_{number}(self, entry):\n", "        if entry.amount:\n"]
        lines += [f"            self.total_{number} += entry.amount\n" for _ in range(15)]
    lines[1 + 6 * 17 + 9] = "            refund = self.refund_order(entry)\n"
    shown = near_task_words("python", all_lines(1, lines), WORDS)
    text = "".join(shown.lines)
    assert "    def post_6(self, entry):\n        if entry.amount:\n            # [lines 106-109" in text
    assert "def post_5" not in text and "def post_7" not in text
    ast.parse(text)


def test_every_block_around_a_deep_line_is_opened_once_however_long_the_body() -> None:
    """A task word three blocks deep in a long loop, below the head: the ``for`` and ``if`` lines
    above it are shown once, the loop's other lines are not, and the code is still Python."""
    lines = ["class Ledger:\n", "    def post(self, entries):\n"]
    lines += [f"        self.step_{number} = 0\n" for number in range(10)]
    lines += ["        for entry in entries:\n", "            if entry.amount:\n"]
    lines += ["                self.total += entry.amount\n"] * 300
    lines[200] = "                refund = self.refund_order(entry)\n"
    lines += ["        return self.total\n"]
    shown = near_task_words("python", all_lines(1, lines), WORDS)
    assert shown.lines == [
        *lines[:6],
        "        # [lines 7-12 not shown]\n",
        "        for entry in entries:\n",
        "            if entry.amount:\n",
        "                # [lines 15-197 not shown]\n",
        *lines[197:204],
        "                # [lines 205-313 not shown]\n",
        *lines[-2:],
    ]
    ast.parse("".join(shown.lines))


@pytest.mark.parametrize(
    ("language", "note"),
    [
        ("go", "    // [lines"),
        ("ruby", "    # [lines"),
        ("lua", "    -- [lines"),
        ("typescript", "    // [lines"),
    ],
)
def test_the_note_is_a_comment_of_the_body_s_language(language: str, note: str) -> None:
    shown = near_task_words(language, all_lines(1, settle(120, 60)), WORDS)
    assert next(line for line in shown.lines if "not shown" in line).startswith(note)


@pytest.mark.parametrize(
    ("lines", "words"),
    [
        # At the limit, a body is whole.
        (settle(LONG_BODY_LINES, 40), WORDS),
        # No task words: nothing to show a body near.
        (settle(120, 60), frozenset()),
        # The task's words all over: the body is about the task all over.
        ([f"    refund_{number} = {number}\n" for number in range(120)], frozenset({"refund"})),
    ],
)
def test_a_body_is_whole_when_it_is_short_or_the_task_words_are_everywhere(
    lines: list[str], words: frozenset[str]
) -> None:
    whole = all_lines(1, lines)
    assert near_task_words("python", whole, words) == whole


def test_a_shortened_docstring_among_the_lines_left_out_is_named_in_their_range() -> None:
    """A method's long docstring, already shortened to one note, lies in a run left out: the run's
    note names every line of the file from the last shown to the run's end, the docstring's too."""
    docstring = ["    def audit(self):\n", '        """Check.\n', "\n"]
    docstring += [f"        Rule {number}.\n" for number in range(30)] + ['        """\n']
    lines = settle(60, 50)[:-1] + docstring + settle(60, 50)[1:]
    docstrings_shortened = shortened("python", 1, lines)
    assert len(docstrings_shortened.left_out) == 1
    shown = near_task_words("python", docstrings_shortened, WORDS)
    assert docstrings_shortened.left_out[0] not in shown.left_out
    first, last = docstrings_shortened.left_out[0]
    assert any(start < first and last < end for start, end in shown.left_out)
    # Every line of the definition is shown, or named by a note, once.
    hidden = sum(end - start + 1 for start, end in shown.left_out)
    assert len(shown.lines) - len(shown.left_out) + hidden == len(lines)


BODY_FILE = "shop/refunds.py"


def ledger_functions(*lengths: int) -> tuple[bytes, list[ScoredNode]]:
    """Functions of these many lines, one after another in ``BODY_FILE``, each with the task's word
    on its 60th line (its second, when it is shorter), chosen as bodies in this order."""
    data = b""
    items = []
    for number, length in enumerate(lengths):
        lines = settle(length, min(60, length - 2))
        source = "".join(lines).replace("settle", f"settle_{number}").encode()
        start = data.count(b"\n") + 1
        data += source
        row = function_row(number, BODY_FILE, f"settle_{number}", start, start + length - 1)
        items.append((row, start, start + length - 1))
    offsets = line_offsets(data)
    chosen = [
        ScoredNode(
            row._replace(content_hash=span_digest(data, offsets, first, last)), 10.0 - row.id, {"bm25": 1.0}
        )
        for row, first, last in items
    ]
    return data, chosen


def test_only_as_many_of_the_last_long_bodies_are_shortened_as_the_room_needs() -> None:
    bodies = [("python", all_lines(1, settle(length, min(60, length - 2)))) for length in (3, *[120] * 8)]
    shortened_counts = []
    for room in (20_000, 7_000, 4_000, 100):
        shown = shortened_to_fit(bodies, WORDS, room, body_cap=3_200)
        places = [place for place, lines in enumerate(shown) if lines.left_out]
        # The last ones, never the first; the others as they were.
        assert places == list(range(len(bodies) - len(places), len(bodies)))
        assert all(shown[place] is bodies[place][1] for place in range(len(bodies)) if place not in places)
        shortened_counts.append(len(places))
    assert shortened_counts[0] == 0
    assert shortened_counts == sorted(shortened_counts)
    assert shortened_counts[-1] == len(bodies) - 1
    assert len(set(shortened_counts)) == len(shortened_counts)
    # A body the pack must show whole is passed over, and the ones before it shortened instead.
    last = len(bodies) - 1
    kept_whole = shortened_to_fit(bodies, WORDS, 7_000, body_cap=3_200, whole={last})
    assert [place for place, lines in enumerate(kept_whole) if lines.left_out] == [last - 2, last - 1]


def test_a_pack_shortens_a_later_long_body_only_when_the_budget_needs_it() -> None:
    """Nine bodies: at 16,000 tokens all are whole; at 4,000 the first is whole, and the last ones
    are shown by the task's words, each cited by its whole span, the lines left out named."""
    data, items = ledger_functions(3, *[120] * 8)
    counter = TokenCounter("o200k_base")
    sources = WorkspaceSources(Path("/nonexistent-workspace"), {BODY_FILE: data})
    roomy = pack(Selection(tuple(items), ()), "refund the order", 16_000, counter, sources, True, words=WORDS)
    assert len(roomy.bodies) == len(items)
    assert all(body.left_out == () for body in roomy.bodies)
    tight = pack(Selection(tuple(items), ()), "refund the order", 4_000, counter, sources, True, words=WORDS)
    first, *later = tight.bodies
    assert first.left_out == ()
    short = [body for body in later if body.left_out]
    assert short
    spans = {item.node.name: (item.node.start_line, item.node.end_line) for item in items}
    for body in short:
        assert (body.start_line, body.end_line) == spans[body.name]
        assert "    refund = refund_order(total_1)\n" in body.source
        for left_first, left_last in body.left_out:
            assert f"    # [lines {left_first}-{left_last} not shown]\n" in body.source
    # Without the task's words, nothing is shortened.
    plain = pack(Selection(tuple(items), ()), "refund the order", 4_000, counter, sources, True)
    assert all(body.left_out == () for body in plain.bodies)


def test_at_every_budget_a_shortened_body_accounts_for_its_cited_lines() -> None:
    """Cut anywhere, the shortened bodies' source and ``leftOut`` still account for every line their
    citation names, and a range past the cut is not named."""
    data, items = ledger_functions(3, 120, 120, 120, 120)
    counter = TokenCounter("o200k_base")
    sources = WorkspaceSources(Path("/nonexistent-workspace"), {BODY_FILE: data})
    ranges_when_cut = set()
    for budget in range(600, 1_400, 4):
        packed = pack(Selection(tuple(items), ()), "refund", budget, counter, sources, True, words=WORDS)
        for body in packed.bodies[1:]:
            hidden = sum(last - first + 1 for first, last in body.left_out)
            cited = body.end_line - body.start_line + 1
            assert body.source.count("\n") - len(body.left_out) + hidden == cited
            assert all(body.start_line < first <= last <= body.end_line for first, last in body.left_out)
            if any(warning.code == "body-cut" and warning.node_id == body.id for warning in packed.warnings):
                ranges_when_cut.add(len(body.left_out))
    # Cut in its head, after its first note, and after both.
    assert ranges_when_cut == {0, 1, 2}


def test_a_secret_whose_first_line_is_left_out_is_still_redacted() -> None:
    """A private key inside a long body, its use just below it: the lines near the task's word hold
    the key's last lines, while its first line is left out. Secrets are found in the whole body
    before any line is left out, so none of the key is shown."""
    key_lines = [base64.b64encode(bytes([number]) * 48).decode() for number in range(14)]
    key = ['    KEY = """-----BEGIN RSA PRIVATE KEY-----\n', *(f"{line}\n" for line in key_lines)]
    key += ['-----END RSA PRIVATE KEY-----"""\n', "    signer = refund_order(KEY)\n"]
    lines = settle(120, 100)
    lines[40:40] = key
    data = "".join(line.replace("settle", "settle_key") for line in lines).encode()
    short, items = ledger_functions(3, 120, 120)
    offset = short.count(b"\n")
    row = function_row(9, BODY_FILE, "settle_key", offset + 1, offset + len(lines))
    row = row._replace(
        content_hash=span_digest(short + data, line_offsets(short + data), offset + 1, offset + len(lines))
    )
    counter = TokenCounter("o200k_base")
    sources = WorkspaceSources(Path("/nonexistent-workspace"), {BODY_FILE: short + data})
    chosen = Selection((*items, ScoredNode(row, 1.0, {"bm25": 1.0})), ())
    packed = pack(chosen, "refund the order", 3_000, counter, sources, True, words=WORDS)
    shown = next(body for body in packed.bodies if body.name == "settle_key")
    assert shown.left_out
    assert "    signer = refund_order(KEY)\n" in shown.source
    assert not any(line in body.source for body in packed.bodies for line in key_lines)
    assert any(warning.code == "secret-redacted" for warning in packed.warnings)
