"""The lexical index (tantivy, beside the SQLite file) is derived data: whatever happens to it or
between its commit and SQLite's, the next writer makes it answer exactly as a fresh index would."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from index_dump import assert_same_index, dump, fresh_dump
from smartctx.indexing import indexer as indexer_module
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store import lexical
from smartctx.store.database import SEARCH_GENERATION_KEY
from smartctx.store.index_store import IndexStore

SERVER = Path(__file__).resolve().parents[2] / "server"


def workspace(root: Path, files: int) -> None:
    for number in range(files):
        path = root / f"pkg/mod_{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"def parse_{number}(value):\n    return render_{number}(value)\n\n"
            f"def render_{number}(value):\n    '''Render the value.'''\n    return value\n"
        )


def generations(index_path: Path) -> tuple[int, int | None]:
    """(SQLite's search generation, the one the lexical index holds), read without a writer."""
    import sqlite3

    db = sqlite3.connect(f"{index_path.as_uri()}?mode=ro", uri=True)
    try:
        (value,) = db.execute("SELECT value FROM meta WHERE key = ?", (SEARCH_GENERATION_KEY,)).fetchone()
    finally:
        db.close()
    return int(value), lexical.LexicalIndex(lexical.lexical_dir(index_path)).state().generation


def test_killed_between_the_two_commits_the_next_writer_rebuilds_it(tmp_path: Path) -> None:
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 6)
    store = IndexStore(root, index_dir)
    Indexer(root, store, IndexConfig(workers=0)).reconcile()
    store.close()
    (root / "pkg/mod_2.py").write_text("def checkout_basket(order):\n    return order\n")
    (root / "pkg/mod_5.py").unlink()
    # The child indexes the change and kills itself with SIGKILL at the moment it would commit the
    # lexical index: SQLite holds the batch, the lexical index the state before it.
    child = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from smartctx.indexing.indexer import IndexConfig, Indexer
        from smartctx.store import lexical
        from smartctx.store.index_store import IndexStore

        def killed(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

        lexical.LexicalIndex.apply = lexical.LexicalIndex.replace_all = killed
        store = IndexStore(Path({str(root)!r}), Path({str(index_dir)!r}))
        Indexer(Path({str(root)!r}), store, IndexConfig(workers=0)).reconcile()
        """
    )
    process = subprocess.run(
        [sys.executable, "-c", child], env={"PYTHONPATH": str(SERVER)}, capture_output=True, timeout=120
    )
    assert process.returncode == -signal.SIGKILL, process.stderr.decode()
    sqlite_generation, lexical_generation = generations(index_dir / "index-v1.sqlite")
    assert lexical_generation is not None and lexical_generation < sqlite_generation

    live = IndexStore(root, index_dir)
    try:
        assert generations(live.path) == (sqlite_generation, sqlite_generation)
        with live.snapshot() as snapshot:
            found = {hit.node_id for hit in snapshot.search({"basket": 1}, 10)}
            assert [node.qualified_name for node in snapshot.nodes(found)] == ["checkout_basket"]
            parsers = snapshot.paths_of(hit.node_id for hit in snapshot.search({"parse": 1}, 100))
            assert sorted(set(parsers.values())) == [f"pkg/mod_{number}.py" for number in (0, 1, 3, 4)]
        # The next run also finishes the resolution and scores the killed one left pending.
        Indexer(root, live, IndexConfig(workers=0)).reconcile()
        with live.snapshot() as snapshot:
            live_dump = dump(snapshot, with_search=True)
    finally:
        live.close()
    assert_same_index(live_dump, fresh_dump(root, tmp_path / "fresh"))


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
def test_a_missing_or_broken_lexical_index_is_built_again_from_sqlite(tmp_path: Path, damage: str) -> None:
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 4)
    store = IndexStore(root, index_dir)
    Indexer(root, store, IndexConfig(workers=0)).reconcile()
    store.close()
    folder = lexical.lexical_dir(index_dir / "index-v1.sqlite")
    lexical.LexicalIndex.forget(index_dir / "index-v1.sqlite")
    if damage == "deleted":
        shutil.rmtree(folder)
    else:
        for meta in folder.rglob("meta.json"):
            meta.write_text("")
    live = IndexStore(root, index_dir)
    try:
        with live.snapshot() as snapshot:
            live_dump = dump(snapshot, with_search=True)
    finally:
        live.close()
    assert_same_index(live_dump, fresh_dump(root, tmp_path / "fresh"))


def test_updates_in_place_find_what_a_fresh_index_finds_and_compaction_makes_it_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large index is updated in place; its statistics then still count deleted rows, so only the
    hits are the fresh index's until compaction builds it again."""
    monkeypatch.setattr(lexical, "REBUILD_BELOW_ROWS", 0)
    monkeypatch.setattr(lexical, "REBUILD_DELETED_SHARE", 1.0)
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 8)
    store = IndexStore(root, index_dir)
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        (root / "pkg/mod_1.py").write_text("def render_total(cart):\n    return parse_3(cart)\n")
        (root / "pkg/mod_6.py").unlink()
        indexer.reconcile()
        assert lexical.open_or_create(store.path).state().deleted_rows > 0
        fresh = fresh_dump(root, tmp_path / "fresh")
        with store.snapshot() as snapshot:
            in_place = dump(snapshot, with_search=True)
        assert in_place.search.keys() == fresh.search.keys()
        for word, (hits, files) in in_place.search.items():
            fresh_hits, fresh_files = fresh.search[word]
            assert sorted(hit[:2] for hit in hits) == sorted(hit[:2] for hit in fresh_hits), word
            assert sorted(path for path, _ in files) == sorted(path for path, _ in fresh_files), word
        store.writer.compact_search()
        assert lexical.open_or_create(store.path).state().deleted_rows == 0
        with store.snapshot() as snapshot:
            assert_same_index(dump(snapshot, with_search=True), fresh)
    finally:
        store.close()


def test_a_first_index_of_many_chunks_scores_as_one_built_in_one_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk of a first index commits and deletes the last generation marker; tantivy, merging
    those segments, would count their words from its length buckets and score apart from a build
    in one commit (and from a published base). A first index of that many chunks is built again."""
    monkeypatch.setattr(lexical, "REBUILD_BELOW_ROWS", 0)
    monkeypatch.setattr(indexer_module, "FILES_PER_INITIAL_COMMIT", 3)
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 3 * (indexer_module.LEXICAL_MERGE_COMMITS + 4))
    store = IndexStore(root, index_dir)
    try:
        report = Indexer(root, store, IndexConfig(workers=0)).reconcile()
        assert generations(store.path)[0] >= indexer_module.LEXICAL_MERGE_COMMITS
        assert "lexical" in report.stage_seconds
        with store.snapshot() as snapshot:
            first = dump(snapshot, with_search=True)
        store.writer.rebuild_lexical()
        with store.snapshot() as snapshot:
            assert_same_index(first, dump(snapshot, with_search=True))
    finally:
        store.close()


def test_a_build_in_batches_of_files_answers_as_one_of_every_file_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build adds search_words' rows a batch of files at a time (every row of a 104k-file
    monorepo at once took 2.4 GB), and its index is the one built from every row at once: no batch
    lost or added twice, the last one short."""
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 8)
    store = IndexStore(root, index_dir)
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        monkeypatch.setattr(lexical, "BUILD_BATCH_FILES", 100)
        store.writer.rebuild_lexical()
        with store.snapshot() as snapshot:
            whole = dump(snapshot, with_search=True)
        monkeypatch.setattr(lexical, "BUILD_BATCH_FILES", 3)
        store.writer.rebuild_lexical()
        state = lexical.open_or_create(store.path).state()
        assert (state.rows, state.deleted_rows, state.deleted_files) == (8 * 3, 0, 0)
        with store.snapshot() as snapshot:
            assert_same_index(dump(snapshot, with_search=True), whole)
    finally:
        store.close()


def test_a_file_re_indexed_as_a_difference_replaces_its_documents_and_one_whose_words_stay_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Definitions kept by a re-index keep their ids, but tantivy removes documents by file: a file
    whose words changed gets all its documents again (none twice, none stale), and one whose words
    did not change (a blank line added) is left as it is, so its rows are not counted as deleted."""
    monkeypatch.setattr(lexical, "REBUILD_BELOW_ROWS", 0)
    monkeypatch.setattr(lexical, "REBUILD_DELETED_SHARE", 1.0)
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 8)
    store = IndexStore(root, index_dir)
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        assert lexical.open_or_create(store.path).state().deleted_rows == 0
        changed = root / "pkg/mod_2.py"
        changed.write_text(changed.read_text().replace("return value\n", "return checkout_basket(value)\n"))
        untouched_words = root / "pkg/mod_4.py"
        untouched_words.write_text(untouched_words.read_text() + "\n\n")
        indexer.reconcile()
        index = lexical.open_or_create(store.path)
        # mod_2's module, parse_2 and render_2 went and came back; mod_4's three stayed.
        assert index.state().deleted_rows == 3
        assert index.state().rows == 8 * 3
        fresh = fresh_dump(root, tmp_path / "fresh")
        with store.snapshot() as snapshot:
            found = snapshot.search({"basket": 1}, 10)
            assert [node.qualified_name for node in snapshot.nodes({hit.node_id for hit in found})] == [
                "render_2"
            ]
            in_place = dump(snapshot, with_search=True)
        for word, (hits, files) in in_place.search.items():
            fresh_hits, fresh_files = fresh.search[word]
            assert sorted(hit[:2] for hit in hits) == sorted(hit[:2] for hit in fresh_hits), word
            assert sorted(path for path, _ in files) == sorted(path for path, _ in fresh_files), word
        store.writer.compact_search()
        with store.snapshot() as snapshot:
            assert_same_index(dump(snapshot, with_search=True), fresh)
    finally:
        store.close()


def test_killed_while_its_writers_stay_open_the_next_process_writes_and_rebuilds_it(tmp_path: Path) -> None:
    """The writing process keeps tantivy's writers (and their locks) open across batches; killed in
    the middle of one, after the files index took its commit and before the symbols index took its
    own, it leaves the two at different generations, and the next process builds the index again."""
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 6)
    child = textwrap.dedent(
        f"""
        import os, signal, time
        from pathlib import Path
        import tantivy
        from smartctx.indexing.indexer import IndexConfig, Indexer
        from smartctx.store import lexical
        from smartctx.store.index_store import IndexStore

        root, index_dir = Path({str(root)!r}), Path({str(index_dir)!r})
        lexical.REBUILD_BELOW_ROWS = 0
        lexical.REBUILD_DELETED_SHARE = 1.0
        commit = lexical._commit
        dying = []

        def files_generation():
            folder = lexical.lexical_dir(index_dir / "index-v1.sqlite") / "files"
            return lexical._marker(lexical._register(tantivy.Index.open(str(folder))).searcher())

        def commit_then_die(writer, changes, added, generation):
            if dying and added is changes.symbols:
                while files_generation() != generation:
                    time.sleep(0.01)
                os.kill(os.getpid(), signal.SIGKILL)
            commit(writer, changes, added, generation)

        lexical._commit = commit_then_die
        store = IndexStore(root, index_dir)
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        for number in range(3):
            # The last update is killed, after two in place with the same writers.
            if number == 2:
                dying.append(True)
            path = f"pkg/mod_{{number}}.py"
            (root / path).write_text(f"def checkout_{{number}}(basket):\\n    return basket\\n")
            indexer.update_paths([path], recompute_scores=False)
        """
    )
    process = subprocess.run(
        [sys.executable, "-c", child], env={"PYTHONPATH": str(SERVER)}, capture_output=True, timeout=120
    )
    assert process.returncode == -signal.SIGKILL, process.stderr.decode()
    sqlite_generation, lexical_generation = generations(index_dir / "index-v1.sqlite")
    # The files index holds the generation of the batch, the symbols index the one before.
    assert lexical_generation is None

    live = IndexStore(root, index_dir)
    try:
        assert generations(live.path) == (sqlite_generation, sqlite_generation)
        indexer = Indexer(root, live, IndexConfig(workers=0))
        (root / "pkg/mod_5.py").write_text("def refund_basket(order):\n    return order\n")
        indexer.reconcile()
        with live.snapshot() as snapshot:
            found = {hit.node_id for hit in snapshot.search({"basket": 1}, 10)}
            assert sorted(node.qualified_name for node in snapshot.nodes(found)) == [
                "checkout_0",
                "checkout_1",
                "checkout_2",
                "refund_basket",
            ]
            live_dump = dump(snapshot, with_search=True)
    finally:
        live.close()
    assert_same_index(live_dump, fresh_dump(root, tmp_path / "fresh"))


def test_a_process_that_stops_writing_lets_another_write_while_it_runs_on(tmp_path: Path) -> None:
    """The writer's tantivy writers stay open from batch to batch; closing the store (a folder
    leaving the workspace, a handover of the writer lock) must free them, or the next writer could
    not write the lexical index while this process lives."""
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 3)
    store = IndexStore(root, index_dir)
    indexer = Indexer(root, store, IndexConfig(workers=0))
    indexer.reconcile()
    (root / "pkg/mod_1.py").write_text("def checkout_basket(order):\n    return order\n")
    indexer.update_paths(["pkg/mod_1.py"], recompute_scores=False)
    store.close()
    child = textwrap.dedent(
        f"""
        from pathlib import Path
        from smartctx.indexing.indexer import IndexConfig, Indexer
        from smartctx.store.index_store import IndexStore

        root = Path({str(root)!r})
        store = IndexStore(root, Path({str(index_dir)!r}))
        (root / "pkg/mod_2.py").write_text("def refund_basket(order):\\n    return order\\n")
        Indexer(root, store, IndexConfig(workers=0)).update_paths(["pkg/mod_2.py"], recompute_scores=False)
        with store.snapshot() as snapshot:
            found = {{hit.node_id for hit in snapshot.search({{"basket": 1}}, 10)}}
            print(sorted(node.qualified_name for node in snapshot.nodes(found)))
        store.close()
        """
    )
    process = subprocess.run(
        [sys.executable, "-c", child], env={"PYTHONPATH": str(SERVER)}, capture_output=True, timeout=120
    )
    assert process.returncode == 0, process.stderr.decode()
    assert process.stdout.decode().strip() == "['checkout_basket', 'refund_basket']"

    # And this process writes again once the other has stopped.
    store = IndexStore(root, index_dir)
    try:
        (root / "pkg/mod_0.py").write_text("def basket_total(order):\n    return order\n")
        Indexer(root, store, IndexConfig(workers=0)).update_paths(["pkg/mod_0.py"], recompute_scores=False)
        with store.snapshot() as snapshot:
            found = {hit.node_id for hit in snapshot.search({"basket": 1}, 10)}
            names = sorted(node.qualified_name for node in snapshot.nodes(found))
        assert names == ["basket_total", "checkout_basket", "refund_basket"]
    finally:
        store.close()


def test_typing_in_one_buffer_does_not_build_a_large_index_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each update of an open buffer replaces that file's rows. tantivy drops the segment of the
    previous update once all of its rows are deleted, so the deleted rows its statistics count stay
    about one file's worth however long the user types, and the index is updated in place (a large
    index's build took 1.2 s on django) while it finds what a fresh index finds."""
    monkeypatch.setattr(lexical, "REBUILD_BELOW_ROWS", 0)
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 40)
    builds: list[Path] = []
    build = lexical.build
    monkeypatch.setattr(lexical, "build", lambda db, path, key: (builds.append(path), build(db, path, key)))
    store = IndexStore(root, index_dir)
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        builds.clear()
        path = "pkg/mod_7.py"
        original = (root / path).read_text()
        for length in range(1, 31):
            text = original + f"\ndef basket_{'e' * length}(order):\n    return order\n"
            indexer.update_paths([], buffers={path: text.encode()}, recompute_scores=False)
        state = lexical.open_or_create(store.path).state()
        # The file's first version (its module and two functions) and at most a few later ones.
        assert 3 <= state.deleted_rows <= 4 * 4, state
        assert builds == []
        with store.snapshot() as snapshot:
            found = snapshot.search({"basket": 1}, 10)
            assert [node.qualified_name for node in snapshot.nodes({hit.node_id for hit in found})] == [
                f"basket_{'e' * 30}"
            ]
    finally:
        store.close()


def test_the_older_layout_s_folder_goes_when_the_index_is_built_in_the_new_one(tmp_path: Path) -> None:
    root, index_dir = tmp_path / "ws", tmp_path / "idx"
    workspace(root, 3)
    older = index_dir / f"index-v1.sqlite.lexical-v{lexical.LEXICAL_VERSION - 1}"
    (older / "symbols").mkdir(parents=True)
    (older / "symbols" / "meta.json").write_text("{}")
    store = IndexStore(root, index_dir)
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            assert snapshot.search({"parse": 1}, 10)
    finally:
        store.close()
    assert not older.exists()
    assert lexical.lexical_dir(index_dir / "index-v1.sqlite").is_dir()
