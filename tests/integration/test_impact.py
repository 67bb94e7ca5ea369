"""Impact: what depends on a definition, on a real index of a small workspace with known callers,
subclasses, type users and importers at depth 1 and 2 (issue #5)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from smartctx.history.impact import MAX_DEPENDENTS, MAX_EDGES_PER_HOP, impact
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store.index_store import IndexStore
from smartctx.store.snapshot import IndexSnapshot
from workspaces import write_tree

SHAPES = {
    "base.py": (
        "class Shape:\n"
        '    """Anything with an area."""\n'
        "\n"
        "    def area(self):\n"
        "        return 0\n"
        "\n"
        "\n"
        "def describe(shape: Shape) -> str:\n"
        '    return "shape"\n'
        "\n"
        "\n"
        "def make_default():\n"
        "    return Shape()\n"
    ),
    "square.py": (
        "from base import Shape\n"
        "\n"
        "\n"
        "class Square(Shape):\n"
        "    def area(self):\n"
        "        return 4\n"
        "\n"
        "\n"
        "class Tiny(Square):\n"
        "    pass\n"
    ),
    "report.py": (
        "from base import describe\n"
        "\n"
        "\n"
        "def report(shapes):\n"
        "    return [describe(s) for s in shapes]\n"
        "\n"
        "\n"
        "def summary():\n"
        "    return report([])\n"
        "\n"
        "\n"
        "def uses_area(shape):\n"
        "    return Shape.area(shape)\n"
    ),
}


def snapshot_of(tmp_path: Path, files: dict[str, str]) -> Iterator[IndexSnapshot]:
    root = write_tree(tmp_path / "ws", files)
    store = IndexStore(root, tmp_path / "index")
    Indexer(root, store, IndexConfig(workers=0)).reconcile()
    with store.snapshot() as snapshot:
        yield snapshot
    store.close()


@pytest.fixture
def shapes(tmp_path: Path) -> Iterator[IndexSnapshot]:
    yield from snapshot_of(tmp_path, SHAPES)


def rows(snapshot: IndexSnapshot, name: str, depth: int) -> list[tuple[int, str, str, str, str]]:
    target = next(node for node in snapshot.nodes_named(name) if node.kind.value != "module")
    return [
        (d.depth, d.group, d.node.path, d.node.qualified_name, d.via.qualified_name)
        for d in impact(snapshot, target, depth).dependents
    ]


def test_depth_one_groups_callers_subclasses_type_users_and_importers(shapes: IndexSnapshot) -> None:
    assert rows(shapes, "Shape", 1) == [
        (1, "callers", "base.py", "make_default", "Shape"),
        (1, "callers", "report.py", "uses_area", "Shape.area"),
        (1, "subclasses", "square.py", "Square", "Shape"),
        (1, "typeUsers", "base.py", "describe", "Shape"),
        (1, "importers", "square.py", "square", "Shape"),
    ]


def test_depth_two_follows_the_dependents_of_dependents(shapes: IndexSnapshot) -> None:
    deeper = rows(shapes, "Shape", 2)
    assert deeper[:5] == rows(shapes, "Shape", 1)
    assert deeper[5:] == [
        (2, "callers", "report.py", "report", "describe"),
        (2, "subclasses", "square.py", "Tiny", "Square"),
        (2, "importers", "report.py", "report", "describe"),
    ]
    assert (3, "callers", "report.py", "summary", "report") in rows(shapes, "Shape", 3)
    assert all(depth <= 2 for depth, *_ in deeper)


def test_a_function_with_nothing_depending_on_it_has_no_impact(shapes: IndexSnapshot) -> None:
    assert rows(shapes, "summary", 5) == []


def test_a_hub_is_capped_and_says_so(tmp_path: Path) -> None:
    callers = MAX_EDGES_PER_HOP + 50
    files = {
        "hub.py": "def hub(x):\n    return x\n",
        "many.py": "from hub import hub\n\n"
        + "".join(f"def caller_{n:05d}(x):\n    return hub(x)\n\n" for n in range(callers)),
    }
    for snapshot in snapshot_of(tmp_path, files):
        target = snapshot.nodes_named("hub")[0]
        found = impact(snapshot, target, 2)
        assert found.truncated
        assert len(found.dependents) == MAX_DEPENDENTS
        assert found.found <= MAX_EDGES_PER_HOP
        names = [d.node.qualified_name for d in found.dependents]
        assert names == sorted(names)  # Stable: by depth, group, path, line.
        assert impact(snapshot, target, 2) == found
