"""What the pack stage packs (retrieval/pack.py) from a made-up selection over in-memory files: the
items chosen at every budget, the budget itself, and the redaction of every text packed.

Packing redacts each text only when it reaches it (the file map's lines a chunk at a time, the
fields of a summary once it is packed); these tests fail if that changes which items a budget holds
or lets a packed secret through.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.node_rows import function_row

from smartctx.core.files import line_offsets, span_digest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.diversify import Selection
from smartctx.retrieval.files import RankedFile
from smartctx.retrieval.pack import (
    FILE_MAP_HEADING,
    MAP_LINES_PER_REDACTION,
    Packed,
    file_map_line,
    pack,
)
from smartctx.retrieval.score import ScoredNode
from smartctx.secrets.redaction import redact
from smartctx.secrets.rules import REDACTED
from smartctx.store.snapshot import NodeRow

# A GitHub token as gitleaks' rule finds it: a packed text must never hold it.
TOKEN = "ghp_" + "Wq3Zr8Xm2Kp7Lt5Nv9Bc4Df6Gh1Jk0Ls3Qa7x"
BODY_FILE = "app/client.py"
BODY_LINES = 8
BODIES = 3
SUMMARIES = 30
# More further files than two chunks of map lines, the one holding the token in the second chunk.
MAP_FILES = 2 * MAP_LINES_PER_REDACTION + 16
SECRET_MAP_FILE = MAP_LINES_PER_REDACTION + 8
SECRET_SUMMARY = 3
TASK = "send the report to the client"
# From a pack of the header alone to one that holds every item: each step ends the summaries or the
# map somewhere else.
BUDGETS = range(150, 4_000, 17)


def body_source() -> bytes:
    """``BODIES`` functions of ``BODY_LINES`` lines each, the second holding the token."""
    functions = []
    for number in range(BODIES):
        secret = f'    token = "{TOKEN}"\n' if number == 1 else "    token = None\n"
        middle = "".join(f"    total{line} = {line} * {number}\n" for line in range(BODY_LINES - 3))
        functions.append(f"def send{number}(report):\n{secret}{middle}    return report\n")
    return "".join(functions).encode()


def body_node(number: int, data: bytes) -> NodeRow:
    start = 1 + number * BODY_LINES
    end = start + BODY_LINES - 1
    row = function_row(number, BODY_FILE, f"send{number}", start, end)
    return row._replace(content_hash=span_digest(data, line_offsets(data), start, end))


def summary_node(number: int) -> NodeRow:
    row = function_row(100 + number, f"lib/part{number}.py", f"part{number}", 10, 30)
    doc = f'Signs in with "{TOKEN}" first.' if number == SECRET_SUMMARY else f"Builds part {number}."
    return row._replace(doc=doc, signature=f"def part{number}(report, width={number}):")


def map_file(number: int) -> RankedFile:
    name = TOKEN if number == SECRET_MAP_FILE else f"render{number}"
    symbol = function_row(1000 + number, f"pkg/view{number}.py", name, 5, 9)
    return RankedFile(f"pkg/view{number}.py", 1.0 - number / 1000, {"text": 1.0}, (symbol,))


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter("o200k_base")


@pytest.fixture(scope="module")
def sources() -> WorkspaceSources:
    # The body file is an unsaved buffer: nothing is read from disk.
    return WorkspaceSources(Path("/nonexistent-workspace"), {BODY_FILE: body_source()})


def selection() -> Selection:
    data = body_source()
    bodies = tuple(
        ScoredNode(body_node(number, data), 5.0 - number, {"bm25": 1.0}) for number in range(BODIES)
    )
    summaries = tuple(
        ScoredNode(summary_node(number), 2.0 - number / 100, {"bm25": 0.5}) for number in range(SUMMARIES)
    )
    files = tuple(map_file(number) for number in range(MAP_FILES))
    return Selection(bodies, summaries, files)


def expected_map(packed: Packed, chosen: Selection, budget: int, counter: TokenCounter) -> list[str]:
    """The file map as the budget defines it, every candidate line redacted and counted: the further
    files the pack's bodies and summaries do not show, in order, up to the first line that does not
    fit in what the rest of the pack leaves."""
    used = counter.count(packed.text.split(FILE_MAP_HEADING)[0])
    shown = {item.file_path for item in (*packed.bodies, *packed.summaries)}
    paths: list[str] = []
    for file in chosen.files:
        if file.path in shown:
            continue
        tokens = counter.count(redact(file_map_line(file))[0])
        tokens += 0 if paths else counter.count(FILE_MAP_HEADING)
        if used + tokens > budget:
            break
        used += tokens
        paths.append(file.path)
    return paths


def redacted_texts(packed: Packed) -> list[str]:
    """Every text the pack stage redacts (names and paths in the other fields are redacted by the
    exit, with the whole message)."""
    return [
        packed.text,
        *(item.source for item in packed.bodies),
        *(text for item in packed.summaries for text in (item.signature, item.doc)),
    ]


def test_every_budget_packs_the_map_its_room_defines_and_never_more(
    counter: TokenCounter, sources: WorkspaceSources
) -> None:
    """At each budget the map is the prefix of the further files that fits, however many chunks of
    lines its end lies past; the text is counted exactly and within the budget."""
    chosen = selection()
    map_lengths = set()
    for budget in BUDGETS:
        packed = pack(chosen, TASK, budget, counter, sources, include_blobs=True)
        assert packed.tokens_used == counter.count(packed.text) <= budget
        assert [entry.file_path for entry in packed.file_map] == expected_map(packed, chosen, budget, counter)
        map_lengths.add(len(packed.file_map))
    # The sweep ends the map inside the first chunk, right after it and in the second one.
    assert {MAP_LINES_PER_REDACTION - 1, MAP_LINES_PER_REDACTION + 1, MAP_FILES} <= map_lengths


@pytest.mark.parametrize("budget", [BUDGETS[-1], 2_000])
def test_a_secret_in_any_packed_item_is_redacted(
    counter: TokenCounter, sources: WorkspaceSources, budget: int
) -> None:
    """A body, a summary's doc and a map line past the first chunk each hold the token: wherever they
    are packed it is replaced, in the text and in every field, and the body says so."""
    packed = pack(selection(), TASK, budget, counter, sources, include_blobs=True)
    assert all(TOKEN not in text for text in redacted_texts(packed))
    packed_ids = {item.id for item in packed.bodies}
    assert f"{BODY_FILE}::send1" in packed_ids
    assert any(warning.code == "secret-redacted" for warning in packed.warnings)
    summary = next(item for item in packed.summaries if item.name == f"part{SECRET_SUMMARY}")
    assert REDACTED in summary.doc
    if budget == BUDGETS[-1]:
        secret_file = f"pkg/view{SECRET_MAP_FILE}.py"
        assert secret_file in [entry.file_path for entry in packed.file_map]
        assert f"- {secret_file}: `{REDACTED}`:5\n" in packed.text
