"""build_context_multi over real indexes of two small workspace folders: one pack, one budget."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from smartctx.core.context import ContextOptions, ContextPack, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.folders import FolderIndex, build_context_multi
from smartctx.store.index_store import IndexStore
from smartctx.wire.convert import pack_to_wire
from smartctx.wire.shapes import WireContextPack
from wire_shapes import assert_matches

FIXTURES = Path(__file__).parent.parent / "fixtures" / "multiroot"
FOLDERS = ("billing", "shipping")
# Both folders define app/core.py::handle, so paths and qualified names collide across them.
BOTH = "compute_invoice_total print_parcel_label handle"
BILLING = "compute the invoice total of the invoice lines"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, IndexStore]]:
    opened: dict[str, IndexStore] = {}
    for name in FOLDERS:
        root = tmp_path_factory.mktemp("workspace") / name
        shutil.copytree(FIXTURES / name, root)
        opened[name] = IndexStore(root, tmp_path_factory.mktemp("index"))
        Indexer(root, opened[name], IndexConfig(workers=0)).reconcile()
    yield opened
    for store in opened.values():
        store.close()


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def run(
    stores: dict[str, IndexStore],
    counter: TokenCounter,
    task: str,
    order: tuple[str, ...] = FOLDERS,
    names: tuple[str, ...] | None = None,
    **options: int,
) -> ContextPack:
    """A pack over the folders in ``order``, named after them unless ``names`` says otherwise."""
    with ExitStack() as stack:
        folders = [
            FolderIndex(
                name=name,
                label=stores[folder].workspace_root.as_uri(),
                snapshot=stack.enter_context(stores[folder].snapshot()),
                sources=WorkspaceSources(stores[folder].workspace_root),
            )
            for folder, name in zip(order, names or order, strict=True)
        ]
        return build_context_multi(
            ContextRequest(task, ContextOptions.from_values(dict(options))), folders, counter
        )


def test_one_pack_finds_code_in_both_folders_with_unique_ids_and_folder_relative_citations(
    stores: dict[str, IndexStore], counter: TokenCounter
) -> None:
    pack = run(stores, counter, BOTH)

    items = [*pack.bodies, *pack.summaries]
    ids = [item.id for item in items]
    assert "billing/app/core.py::compute_invoice_total" in ids
    assert "shipping/app/core.py::print_parcel_label" in ids
    assert "billing/app/core.py::handle" in ids
    assert "shipping/app/core.py::handle" in ids
    assert len(ids) == len(set(ids))
    for item in items:
        name = item.id.split("/", 1)[0]
        assert item.workspace_folder is not None
        assert item.workspace_folder == stores[name].workspace_root.as_uri()
        assert item.file_path == "app/core.py"
        assert item.citation == f"app/core.py:{item.start_line}-{item.end_line}"
    for body in pack.bodies:
        root = stores[body.id.split("/", 1)[0]].workspace_root
        lines = (root / body.file_path).read_text(encoding="utf-8").splitlines(keepends=True)
        assert body.source == "".join(lines[body.start_line - 1 : body.end_line])
        # The pack text names the folder in each citation header.
        assert f"`{body.qualified_name}` — {body.id.split('/', 1)[0]}/{body.citation}" in pack.text
    assert set(pack.subgraph_nodes) <= set(ids)
    assert pack.freshness.indexed_files == 2


def test_maximums_and_the_budget_hold_for_the_whole_pack(
    stores: dict[str, IndexStore], counter: TokenCounter
) -> None:
    wide = run(stores, counter, BOTH)
    narrow = run(stores, counter, BOTH, max_bodies=2, max_summaries=1)
    tight = run(stores, counter, BOTH, budget_tokens=150)

    assert len(wide.bodies) > 2
    assert (len(narrow.bodies), len(narrow.summaries)) == (2, 1)
    assert tight.tokens_used == counter.count(tight.text) <= 150
    assert tight.trimmed


def test_the_merge_is_deterministic_and_ties_go_to_the_earlier_folder(
    stores: dict[str, IndexStore], counter: TokenCounter
) -> None:
    first = pack_to_wire(run(stores, counter, BOTH))
    again = pack_to_wire(run(stores, counter, BOTH))
    # One index under two names: every item ties with its twin.
    twins = run(stores, counter, BOTH, order=("billing", "billing"), names=("one", "two"))

    assert_matches(first, WireContextPack)
    first["metadata"].pop("timingsMs")
    again["metadata"].pop("timingsMs")
    assert first == again
    ids = [body.id for body in twins.bodies]
    assert ids[0] == "one/app/core.py::compute_invoice_total"
    # Each body of the earlier folder comes before its twin (a file's bodies come together, so the
    # twin follows the earlier folder's file), with the same score.
    scores = {body.id: body.score for body in twins.bodies}
    for body in ids:
        if body.startswith("one/") and (twin := "two/" + body[len("one/") :]) in ids:
            assert ids.index(body) < ids.index(twin)
            assert scores[body] == scores[twin]


def test_a_folder_that_matches_the_task_weakly_is_not_lifted_to_the_strong_one(
    stores: dict[str, IndexStore], counter: TokenCounter
) -> None:
    pack = run(stores, counter, BILLING)

    assert pack.bodies[0].id == "billing/app/core.py::compute_invoice_total"
    shipping = [item for item in [*pack.bodies, *pack.summaries] if item.id.startswith("shipping/")]
    assert all(item.score < pack.bodies[0].score for item in shipping)
