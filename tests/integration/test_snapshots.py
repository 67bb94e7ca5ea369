"""Snapshots that reuse read connections (store/snapshot.py ``SnapshotPool``) answer as fresh ones
would: each sees the index as last committed, and what they share is never stale."""

from __future__ import annotations

from pathlib import Path

from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store.index_store import IndexStore
from smartctx.store.snapshot import IndexSnapshot, SnapshotPool
from workspaces import write_tree

FILES = {
    "shop/cart.py": "def add_item(cart, item):\n    return [*cart, item]\n",
    "shop/orders.py": "def place_order(cart):\n    return add_item(cart, 'receipt')\n",
}


def answers(snapshot: IndexSnapshot) -> tuple[list[str], list[str], int]:
    """What a request reads from the index: the files a task's path names, the definitions a word
    finds with their files, and how many definitions there are (which sets how common a word is)."""
    found = {hit.node_id for hit in snapshot.search({"checkout": 1, "order": 1}, 10)}
    paths = snapshot.paths_of(found)
    return (
        snapshot.paths_ending_with("checkout.py"),
        sorted(f"{paths[node.id]}:{node.qualified_name}" for node in snapshot.nodes(found)),
        snapshot.row_count(),
    )


def test_kept_connections_see_every_published_update_and_an_open_snapshot_keeps_its_own(
    tmp_path: Path,
) -> None:
    root = write_tree(tmp_path / "ws", FILES)
    store = IndexStore(root, tmp_path / "idx")
    indexer = Indexer(root, store, IndexConfig(workers=0))
    indexer.reconcile()
    try:
        before = store.snapshot()
        assert answers(before) == ([], ["shop/orders.py:place_order"], 4)
        write_tree(root, {"shop/checkout.py": "def checkout(cart):\n    return place_order(cart)\n"})
        indexer.update_paths(["shop/checkout.py"])
        with store.snapshot() as after:
            assert answers(after) == (
                ["shop/checkout.py"],
                ["shop/checkout.py:checkout", "shop/checkout.py:shop.checkout", "shop/orders.py:place_order"],
                6,
            )
        # The snapshot taken before the update still reads the index as it was.
        assert answers(before) == ([], ["shop/orders.py:place_order"], 4)
        before.close()
        (root / "shop/checkout.py").unlink()
        indexer.update_paths(["shop/checkout.py"])
        with store.snapshot() as gone:
            assert answers(gone) == ([], ["shop/orders.py:place_order"], 4)
    finally:
        store.close()


def test_an_index_moved_aside_and_built_again_at_the_same_path_is_read_anew(tmp_path: Path) -> None:
    first = write_tree(tmp_path / "first", {"shop/checkout.py": "def checkout(cart):\n    return cart\n"})
    second = write_tree(tmp_path / "second", FILES)
    index_dir = tmp_path / "idx"
    pool = SnapshotPool()
    try:
        store = IndexStore(first, index_dir)
        Indexer(first, store, IndexConfig(workers=0)).reconcile()
        with pool.snapshot(store.path) as snapshot:
            assert answers(snapshot) == (
                ["shop/checkout.py"],
                ["shop/checkout.py:checkout", "shop/checkout.py:shop.checkout"],
                2,
            )
        store.close()
        # Another workspace's store finds the file is not its index: it moves it aside and builds
        # a new one in its place, whose search generation counts from 0 again.
        store = IndexStore(second, index_dir)
        assert store.rebuilt_reason is not None
        Indexer(second, store, IndexConfig(workers=0)).reconcile()
        with pool.snapshot(store.path) as snapshot:
            assert answers(snapshot) == ([], ["shop/orders.py:place_order"], 4)
        store.close()
    finally:
        pool.close()
