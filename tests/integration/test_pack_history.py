"""includePRs and includeImpact through the whole pipeline, on a real git repository and a real
index: what the pack text and the wire show, the cutoff, and the budget with both sections on."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitrepos import Repo
from smartctx.core.context import ContextOptions, ContextPack, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.history.changes import GitHistory
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.index_store import IndexStore
from smartctx.wire.convert import pack_to_wire
from smartctx.wire.shapes import WireContextPack
from wire_shapes import assert_matches

BASE = (
    "class Shape:\n"
    '    """Anything with an area."""\n'
    "\n"
    "    def area(self):\n"
    "        return 0\n"
    "\n"
    "\n"
    "def describe(shape: Shape) -> str:\n"
    '    """{doc}"""\n'
    "    return {describe}\n"
)
SQUARE = "from base import Shape\n\n\nclass Square(Shape):\n    def area(self):\n        return 4\n"
REPORT = "from base import describe\n\n\ndef report(shapes):\n    return [describe(s) for s in shapes]\n"
CUTOFF = "2024-01-04T00:00:00Z"
DESCRIBE_TASK = "describe should name the shape in the shop window"


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexStore]]:
    base = tmp_path_factory.mktemp("history-shop")
    repo = Repo(base / "ws")
    repo.write("base.py", BASE.format(doc="Describe a shape.", describe='"shape"'))
    repo.write("square.py", SQUARE)
    repo.write("report.py", REPORT)
    repo.commit("Add shapes\n\nShapes for the shop window.\n\nSigned-off-by: Ada <a@example.invalid>")
    repo.write("base.py", BASE.format(doc="Describe a shape.", describe="type(shape).__name__"))
    repo.commit("Describe shapes by name (#41)\n\nCustomers asked which shape they were buying.")
    repo.write(
        "base.py", BASE.format(doc="Describe a shape for the shop window.", describe="type(shape).__name__")
    )
    repo.commit("Document where descriptions go (#99)")  # 2024-01-04 12:00, after the cutoff.
    store = IndexStore(repo.root, base / "index")
    Indexer(repo.root, store, IndexConfig(workers=0)).reconcile()
    yield repo.root, store
    store.close()


def pack_for(
    root: Path,
    store: IndexStore,
    counter: TokenCounter,
    task: str,
    history: GitHistory | None,
    **options: object,
) -> ContextPack:
    with store.snapshot() as snapshot:
        return build_context(
            ContextRequest(task, ContextOptions.from_values(dict(options))),
            snapshot,
            counter,
            WorkspaceSources(root),
            history=history,
        )


def test_each_body_carries_its_recent_changes_in_text_and_wire(
    shop: tuple[Path, IndexStore], counter: TokenCounter
) -> None:
    root, store = shop
    pack = pack_for(root, store, counter, DESCRIBE_TASK, GitHistory(root), include_prs=True)
    describe = next(body for body in pack.bodies if body.id == "base.py::describe")
    assert [(c.pr, c.title) for c in describe.recent_prs] == [
        (99, "Document where descriptions go"),
        (41, "Describe shapes by name"),
        (None, "Add shapes"),
    ]
    assert 'PR #41 "Describe shapes by name"' in pack.text
    assert "  > Customers asked which shape they were buying." in pack.text
    assert "Signed-off-by" not in pack.text
    wire = pack_to_wire(pack)
    assert_matches(wire, WireContextPack)
    wire_describe = next(body for body in wire["bodies"] if body["id"] == "base.py::describe")
    assert wire_describe["recentPRs"][1]["pr"] == 41
    assert set(wire_describe["recentPRs"][1]) == {"pr", "title", "summary", "commit", "date", "author"}
    assert pack.tokens_used == counter.count(pack.text) <= pack.budget_tokens
    assert "history" in pack.timings_ms


def test_the_cutoff_keeps_later_changes_out_of_the_pack(
    shop: tuple[Path, IndexStore], counter: TokenCounter
) -> None:
    root, store = shop
    pack = pack_for(root, store, counter, DESCRIBE_TASK, GitHistory(root), include_prs=True, pr_cutoff=CUTOFF)
    describe = next(body for body in pack.bodies if body.id == "base.py::describe")
    assert [c.pr for c in describe.recent_prs] == [41, None]
    assert "#99" not in pack.text
    assert "Document where" not in json.dumps(pack_to_wire(pack))


def test_impact_of_the_top_body_is_grouped_and_cited(
    shop: tuple[Path, IndexStore], counter: TokenCounter
) -> None:
    root, store = shop
    pack = pack_for(root, store, counter, "Shape class area", None, include_impact=True, impact_depth=2)
    assert pack.impact is not None
    assert pack.impact.target_id == pack.bodies[0].id == "base.py::Shape"
    assert_matches(pack_to_wire(pack), WireContextPack)
    wire = pack_to_wire(pack)["impact"]
    assert [entry["qualifiedName"] for entry in wire["groups"]["subclasses"]] == ["Square"]
    assert [entry["qualifiedName"] for entry in wire["groups"]["typeUsers"]] == ["describe"]
    assert "report" in [entry["qualifiedName"] for entry in wire["groups"]["callers"]]
    assert "## Impact: what depends on `base.py::Shape`" in pack.text
    assert "- square.py:4-6 class `Square` (depth 1)" in pack.text


def test_sections_appear_only_when_asked(shop: tuple[Path, IndexStore], counter: TokenCounter) -> None:
    root, store = shop
    pack = pack_for(root, store, counter, DESCRIBE_TASK, GitHistory(root))
    wire = pack_to_wire(pack)
    assert "impact" not in wire
    assert all(body["recentPRs"] == [] for body in wire["bodies"])
    assert "Recent changes" not in pack.text
    assert "## Impact" not in pack.text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    budget=st.integers(min_value=120, max_value=6000),
    per_node=st.integers(min_value=1, max_value=5),
    depth=st.integers(min_value=1, max_value=5),
    task=st.sampled_from([DESCRIBE_TASK, "Shape class area", "report shapes", "square"]),
)
def test_budget_holds_with_both_sections_on(
    shop: tuple[Path, IndexStore], counter: TokenCounter, budget: int, per_node: int, depth: int, task: str
) -> None:
    root, store = shop
    pack = pack_for(
        root,
        store,
        counter,
        task,
        HISTORY.setdefault(root, GitHistory(root)),
        budget_tokens=budget,
        include_prs=True,
        prs_per_node=per_node,
        include_impact=True,
        impact_depth=depth,
    )
    assert pack.tokens_used == counter.count(pack.text) <= budget
    for body in pack.bodies:
        assert len(body.recent_prs) <= per_node
        for change in body.recent_prs:
            assert change.title in pack.text
            assert all(line.strip() in pack.text for line in change.summary.splitlines())
    if pack.impact is not None:
        for _, entries in pack.impact.groups:
            for entry in entries:
                assert entry.citation in pack.text


# One history per workspace across the examples, as the language server keeps one.
HISTORY: dict[Path, GitHistory] = {}


def test_outside_git_the_pack_warns_and_still_answers(tmp_path: Path, counter: TokenCounter) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "base.py").write_text(BASE.format(doc="Describe a shape.", describe='"shape"'))
    store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        pack = pack_for(root, store, counter, DESCRIBE_TASK, GitHistory(root), include_prs=True)
        assert pack.bodies
        assert [w.code for w in pack.warnings if w.code.startswith("history")] == ["history-unavailable"]
        without_history = pack_for(root, store, counter, DESCRIBE_TASK, None, include_prs=True)
        assert "history-unavailable" in [w.code for w in without_history.warnings]
    finally:
        store.close()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "smartctx.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_flags(shop: tuple[Path, IndexStore], tmp_path: Path) -> None:
    root, _ = shop
    index = str(tmp_path / "cli-index")
    done = cli(
        *("context", DESCRIBE_TASK, "--root", str(root), "--index-dir", index, "--quiet", "--format", "json"),
        *("--include-prs", "--prs-per-node", "1", "--pr-cutoff", CUTOFF),
        *("--include-impact", "--impact-depth", "2"),
    )
    assert done.returncode == 0, done.stderr
    wire = json.loads(done.stdout)
    describe = next(body for body in wire["bodies"] if body["id"] == "base.py::describe")
    assert [change["pr"] for change in describe["recentPRs"]] == [41]
    assert "impact" in wire
    markdown = cli("context", DESCRIBE_TASK, "--root", str(root), "--index-dir", index, "--include-prs")
    assert 'PR #99 "Document where descriptions go"' in markdown.stdout
    bad = cli("context", "x", "--root", str(root), "--index-dir", index, "--pr-cutoff", "last tuesday")
    assert bad.returncode == 1
    assert "prCutoff must be an ISO 8601 date" in bad.stderr
