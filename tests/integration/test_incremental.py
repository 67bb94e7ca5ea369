"""After any sequence of edits, the incrementally updated index equals a fresh full index.

Random workspaces of small Python and TypeScript modules that import and call one another are
edited at random (add, change, delete, rename, make binary); after each step the live index is
reconciled and compared, row for row, with an index built from nothing in another folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index_dump import assert_same_index, dump, fresh_dump
from smartctx.indexing import indexer as indexer_module
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.scanner import ScanConfig, scan
from smartctx.store import lexical, resolution_pass, upkeep
from smartctx.store.index_store import IndexStore

# 2001-09-09, long before any test runs.
OLD_MTIME_NS = 1_000_000_000_000_000_000
NAMES = ["alpha", "beta", "gamma", "delta", "parse", "render", "Widget", "Store"]
MODULES = ["pkg/core", "pkg/util", "pkg/sub/deep", "app", "web/view"]


RETRIEVAL = Path(__file__).resolve().parents[2] / "server" / "smartctx" / "retrieval"


def python_module(defs: list[str], calls: list[str], imports: list[str]) -> str:
    lines = [f"from {module.replace('/', '.')} import {name}" for module, name in imports]
    for name in defs:
        if name[0].isupper():
            lines += [f"class {name}(Base):", f'    """The {name} type."""', "    def run(self):"]
            lines += [f"        return {call}()" for call in calls] or ["        return None"]
        else:
            lines += [f"def {name}(value):", f'    """Compute {name}."""']
            lines += [f"    {call}(value)" for call in calls] or ["    return value"]
    return "\n".join(lines) + "\n"


def typescript_module(defs: list[str], calls: list[str]) -> str:
    lines = ['import { alpha } from "./core";']
    for name in defs:
        body = " ".join(f"{call}(x);" for call in calls)
        lines.append(f"export function {name}(x: number): number {{ {body} return x; }}")
    return "\n".join(lines) + "\n"


module_contents = st.builds(
    python_module,
    st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
    st.lists(st.sampled_from(NAMES), max_size=3),
    st.lists(st.tuples(st.sampled_from(MODULES), st.sampled_from(NAMES)), max_size=2),
)
paths = st.sampled_from([f"{module}.py" for module in MODULES] + ["pkg/__init__.py", "web/index.ts"])
edits = st.one_of(
    st.tuples(st.just("write"), paths, module_contents),
    st.tuples(st.just("write-ts"), st.just("web/index.ts"), st.lists(st.sampled_from(NAMES), max_size=3)),
    st.tuples(st.just("delete"), paths, st.none()),
    st.tuples(st.just("rename"), paths, paths),
    st.tuples(st.just("binary"), paths, st.none()),
)


def apply(root: Path, edit: tuple[str, str, object]) -> None:
    action, path_text, arg = edit
    path = root / path_text
    if action == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(arg))
    elif action == "write-ts":
        path.parent.mkdir(parents=True, exist_ok=True)
        names = list(arg) if isinstance(arg, list) else []
        path.write_text(typescript_module(names[:1] or ["gamma"], names))
    elif action == "delete":
        path.unlink(missing_ok=True)
    elif action == "rename" and path.exists():
        target = root / str(arg)
        target.parent.mkdir(parents=True, exist_ok=True)
        path.replace(target)
    elif action == "binary":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x00\x01binary\x00" * 10)


def touched_paths(edit: tuple[str, str, object]) -> list[str]:
    """The paths an edit changes, as a file watcher would report them."""
    action, path, arg = edit
    return [path, str(arg)] if action == "rename" else [path]


@pytest.mark.parametrize("apply_changes", ["reconcile", "update_paths"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    initial=st.lists(st.tuples(st.just("write"), paths, module_contents), min_size=1, max_size=6),
    steps=st.lists(st.lists(edits, min_size=1, max_size=4), min_size=1, max_size=5),
)
def test_incremental_index_equals_fresh_index(
    tmp_path_factory: object,
    apply_changes: str,
    initial: list[tuple[str, str, object]],
    steps: list[list[tuple[str, str, object]]],
) -> None:
    """Both ways of applying changes (a full reconcile, or just the paths a watcher reported) must
    leave the index equal to a fresh one."""
    assert hasattr(tmp_path_factory, "mktemp")
    base: Path = tmp_path_factory.mktemp("incremental")
    root = base / "workspace"
    root.mkdir()
    for edit in initial:
        apply(root, edit)
    store = IndexStore(root, base / "live-index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        for step in steps:
            for edit in step:
                apply(root, edit)
            if apply_changes == "reconcile":
                indexer.reconcile()
            else:
                indexer.update_paths([path for edit in step for path in touched_paths(edit)])
            with store.snapshot() as snapshot:
                live = dump(snapshot, with_search=True)
            assert_same_index(live, fresh_dump(root, base / "fresh-index"))
    finally:
        store.close()


def test_edges_follow_imports_and_calls(tmp_path: Path) -> None:
    """A call resolves to the definition its module imports, and the edge disappears with it."""
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text("def alpha(x):\n    return x\n")
    (root / "app.py").write_text("from pkg.core import alpha\n\ndef main():\n    alpha(1)\n")
    store = IndexStore(root, tmp_path / "index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        with store.snapshot() as snapshot:
            edges = {(e[1], e[3], e[4]) for e in snapshot.all_edges()}
        assert ("main@3", "alpha@1", "calls") in edges
        assert ("app@1", "pkg.core@1", "imports") not in edges
        assert ("app@1", "alpha@1", "imports") in edges
        (root / "pkg" / "core.py").unlink()
        indexer.reconcile()
        with store.snapshot() as snapshot:
            assert not [e for e in snapshot.all_edges() if e[4] in {"calls", "imports"}]
            assert ("app.py", "main@3", "calls", "alpha", 4, 0) in snapshot.all_refs()
    finally:
        store.close()


@pytest.mark.parametrize("revert", ["reconcile", "update_paths", "restart"])
def test_disk_wins_over_an_indexed_buffer_once_the_buffer_is_gone(tmp_path: Path, revert: str) -> None:
    """A buffer is indexed in place of its file; without it, the index equals a fresh one of the disk."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text(python_module(["alpha"], [], []))
    (root / "lib.py").write_text(python_module(["beta"], ["alpha"], [("app", "alpha")]))
    # An old mtime and a buffer of the same size: only the recorded mtime can tell the reconcile that
    # the indexed content is not the disk's (a recent mtime would be re-hashed as "racy" anyway).
    os.utime(root / "app.py", ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    same_size_edit = python_module(["gamma"], [], []).encode()
    assert len(same_size_edit) == (root / "app.py").stat().st_size
    store = IndexStore(root, tmp_path / "live-index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        unchanged = indexer.update_paths([], buffers={"app.py": (root / "app.py").read_bytes()})
        edited = indexer.update_paths([], buffers={"app.py": same_size_edit})
        with store.snapshot() as snapshot:
            assert [node.name for node in snapshot.nodes_named("gamma")] == ["gamma"]
        if revert == "reconcile":
            indexer.reconcile()
        elif revert == "update_paths":
            indexer.update_paths(["app.py"])
        else:
            store.close()
            store = IndexStore(root, tmp_path / "live-index")
            Indexer(root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            live = dump(snapshot, with_search=True)
    finally:
        store.close()
    assert (unchanged.files_parsed, unchanged.files_unchanged) == (0, 1)
    assert edited.files_parsed == 1
    assert_same_index(live, fresh_dump(root, tmp_path / "fresh-index"))


def test_scores_follow_a_file_that_stops_calling(tmp_path: Path) -> None:
    """A file that loses its only call, and gains no new name, still refreshes the callee's usage."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "core.py").write_text("def alpha(value):\n    return value\n")
    (root / "app.py").write_text("alpha(1)\n")
    store = IndexStore(root, tmp_path / "index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        with store.snapshot() as snapshot:
            assert dump(snapshot).scores[("core.py", "alpha@1")][1] > 0
        (root / "app.py").write_text("# Nothing is called here any more.\n")
        indexer.reconcile()
        with store.snapshot() as snapshot:
            assert dump(snapshot).scores[("core.py", "alpha@1")][1] == 0
    finally:
        store.close()


def test_full_text_indexes_are_compacted_after_enough_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-indexed files leave delete markers in the full-text indexes; once enough files changed
    they are merged away, and search answers exactly as a fresh index does."""
    monkeypatch.setattr(indexer_module, "COMPACT_AFTER_FILES", 25)
    root = tmp_path / "ws"
    root.mkdir()
    paths = [f"mod{index}.py" for index in range(10)]
    for index, path in enumerate(paths):
        (root / path).write_text(python_module([f"first{index}v"], [], []))
    store = IndexStore(root, tmp_path / "live-index")
    compacted_at: list[int] = []
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        first = indexer.reconcile()
        for round_number in range(1, 7):
            for index, path in enumerate(paths):
                (root / path).write_text(python_module([f"round{round_number}v{index}"], [], []))
            report = indexer.update_paths(paths)
            if "compact" in report.stage_seconds:
                compacted_at.append(round_number)
        with store.snapshot() as snapshot:
            live_hits = [snapshot.search({f"round6v{index}": 1}, 5) for index in range(10)]
            stale_hits = snapshot.search({"first0v": 1, "round1v0": 1}, 5)
    finally:
        store.close()
    fresh = IndexStore(root, tmp_path / "fresh-index")
    try:
        Indexer(root, fresh, IndexConfig(workers=0)).reconcile()
        with fresh.snapshot() as snapshot:
            fresh_hits = [snapshot.search({f"round6v{index}": 1}, 5) for index in range(10)]
    finally:
        fresh.close()
    # The first index does not count; ten changed files a round reach 25 in round 3, and again in 6.
    assert "compact" not in first.stage_seconds
    assert compacted_at == [3, 6]
    assert all(live_hits)
    assert [[round(hit.bm25, 9) for hit in hits] for hits in live_hits] == [
        [round(hit.bm25, 9) for hit in hits] for hits in fresh_hits
    ]
    assert stale_hits == []


def test_the_index_file_shrinks_when_a_big_file_goes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "keep.py").write_text(python_module(["alpha"], [], []))
    # About 0.9 MB of short functions (under the 1 MB file limit): over 5 MB of index, well past
    # the vacuum thresholds.
    handlers = (f"def handler_{number}(r):\n    return go(r, {number})\n\n" for number in range(20_000))
    (root / "big.py").write_text("".join(handlers))
    store = IndexStore(root, tmp_path / "index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        assert "vacuum" not in indexer.reconcile().stage_seconds
        with_big = store.path.stat().st_size
        lexical_with_big = lexical.folder_bytes(store.path)
        (root / "big.py").unlink()
        report = indexer.reconcile()
        without_big = store.path.stat().st_size
        lexical_without_big = lexical.folder_bytes(store.path)
        with store.snapshot() as snapshot:
            assert snapshot.file_paths() == ["keep.py"]
    finally:
        store.close()
    assert "vacuum" in report.stage_seconds
    # What is left is about one small file's worth: no deleted rows, no stale full-text entries.
    assert without_big < with_big / 20
    assert lexical_without_big < lexical_with_big / 20


def test_a_reconcile_empties_the_write_ahead_log_unless_a_snapshot_still_reads_it(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    # Enough definitions that each reconcile below writes far more log than LOG_TRUNCATE_MIN_BYTES.
    big = root / "big.py"
    big.write_text("".join(f"def handler_{n}(r):\n    return go(r, {n})\n\n" for n in range(3_000)))
    store = IndexStore(root, tmp_path / "index")
    log = store.path.with_name(store.path.name + "-wal")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        assert log.stat().st_size == 0
        reading = store.snapshot()
        big.write_text("".join(f"def route_{n}(r):\n    return go(r, {n})\n\n" for n in range(3_000)))
        indexer.reconcile()
        # The open snapshot still reads the index as it was through the log, so the log stays.
        assert log.stat().st_size > 0
        assert reading.nodes_named("handler_7") and not reading.nodes_named("route_7")
        reading.close()
        big.write_text("".join(f"def view_{n}(r):\n    return go(r, {n})\n\n" for n in range(3_000)))
        indexer.reconcile()
        assert log.stat().st_size == 0
        with store.snapshot() as snapshot:
            assert snapshot.nodes_named("view_7") and not snapshot.nodes_named("route_7")
    finally:
        store.close()


@pytest.mark.parametrize("apply_changes", ["reconcile", "update_paths"])
def test_names_follow_when_only_their_files_imports_change(tmp_path: Path, apply_changes: str) -> None:
    """A call resolves through what its file imports. When new modules make that import resolve
    differently (here: too ambiguous to resolve at all), the call must follow, although neither its
    file nor its name changed."""
    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    (root / "app.py").write_text("import helper\n\n\ndef main():\n    run()\n")
    (root / "a" / "helper.py").write_text("def run():\n    return 1\n")
    store = IndexStore(root, tmp_path / "live-index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        added = [f"{folder}/helper.py" for folder in ("b", "c", "d")]
        for path in added:
            (root / path).parent.mkdir()
            (root / path).write_text("VALUE = 1\n")
        if apply_changes == "reconcile":
            indexer.reconcile()
        else:
            indexer.update_paths(added)
        with store.snapshot() as snapshot:
            live = dump(snapshot, with_search=True)
    finally:
        store.close()
    fresh = fresh_dump(root, tmp_path / "fresh-index")
    assert ("app.py", "main@4", "a/helper.py", "run@1", "calls", 0.5) in fresh.edges
    assert_same_index(live, fresh)


@pytest.mark.parametrize("rewritten", [1, 8])
def test_full_text_answers_equal_a_fresh_index_after_few_or_most_files_change(
    tmp_path: Path, rewritten: int
) -> None:
    """Old full-text rows leave one by one when few files change, and by emptying the tables and
    refilling them with what stays when most do (a branch switch): both end where a fresh index is."""
    root = tmp_path / "ws"
    root.mkdir()
    paths = [f"mod{index}.py" for index in range(10)]
    for index, path in enumerate(paths):
        (root / path).write_text(python_module([f"before{index}", "shared"], ["shared"], []))
    store = IndexStore(root, tmp_path / "live-index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        for index, path in enumerate(paths[:rewritten]):
            (root / path).write_text(python_module([f"after{index}", "Widget"], ["shared"], []))
        (root / paths[-1]).unlink()
        indexer.update_paths(paths[:rewritten] + paths[-1:])
        with store.snapshot() as snapshot:
            live = dump(snapshot, with_search=True)
            assert snapshot.search({"before0": 1}, 5) == []
    finally:
        store.close()
    assert_same_index(live, fresh_dump(root, tmp_path / "fresh-index"))


def test_a_buffer_edited_many_times_indexes_like_its_final_text_on_disk(tmp_path: Path) -> None:
    """Buffers are parsed incrementally from their previous tree; after a run of edits (some that
    break the syntax, some that repair it) the index equals a fresh index of the final text."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pkg").mkdir()
    (root / "pkg" / "core.py").write_text(python_module(["alpha", "Widget"], ["beta"], []))
    (root / "app.py").write_text(python_module(["beta"], ["alpha"], [("pkg/core", "alpha")]))
    text = (root / "app.py").read_text()
    edits = [
        text.replace("beta", "gamma"),
        text.replace("beta", "gamma") + "def broken(:\n",
        text.replace("beta", "gamma") + "def repaired():\n    alpha()\n",
        "class Outer:\n" + "".join(f"    {line}\n" for line in text.splitlines()),
    ]
    store = IndexStore(root, tmp_path / "live-index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        for edited in edits:
            indexer.update_paths([], buffers={"app.py": edited.encode()})
        with store.snapshot() as snapshot:
            live = dump(snapshot, with_search=True)
    finally:
        store.close()
    (root / "app.py").write_text(edits[-1])
    assert_same_index(live, fresh_dump(root, tmp_path / "fresh-index"))


@pytest.mark.parametrize("source", ["disk", "buffer"])
def test_calls_added_moved_and_removed_under_the_same_imports_resolve_like_a_fresh_index(
    tmp_path: Path, source: str
) -> None:
    """A file re-indexed with the same imports keeps the references that stay (their lines follow
    the text) and resolves only those it gains: a call added without a new import must still point
    at its definition, and one removed must take its edge along."""
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text(python_module(["alpha", "beta", "Widget"], [], []))
    before = "from pkg.core import alpha, beta\n\n\ndef main(value):\n    alpha(value)\n    Widget(value)\n"
    after = (
        "from pkg.core import alpha, beta\n\n# A comment moves every line below it.\n\n"
        "def main(value):\n    alpha(value)\n    beta(value)\n"
    )
    (root / "app.py").write_text(before)
    store = IndexStore(root, tmp_path / "live-index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        if source == "disk":
            (root / "app.py").write_text(after)
            indexer.update_paths(["app.py"])
        else:
            indexer.update_paths([], buffers={"app.py": after.encode()})
        with store.snapshot() as snapshot:
            live = dump(snapshot, with_search=True)
    finally:
        store.close()
    (root / "app.py").write_text(after)
    fresh = fresh_dump(root, tmp_path / "fresh-index")
    calls = {(edge[1], edge[3]) for edge in live.edges if edge[0] == "app.py" and edge[4] == "calls"}
    assert calls == {("main@5", "alpha@1"), ("main@5", "beta@4")}
    assert_same_index(live, fresh)


def test_names_that_are_not_utf8_are_listed_and_the_index_equals_a_fresh_one(tmp_path: Path) -> None:
    """Names in Latin-1, with the bytes of a BOM, or a UTF-16 surrogate in CESU-8: each file (or
    folder, with what it holds) is skipped and listed, by a reconcile and by updates of just those
    paths (the watcher's), in the same batch as files that are indexed, and delisted when it goes."""
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "base.py").write_text("def base():\n    return 1\n")
    odd = {name: root / os.fsdecode(name) for name in (b"caf\xe9.py", b"\xff\xfe", b"pkg/\xed\xa0\x80.py")}
    odd[b"caf\xe9.py"].write_bytes(b"def cafe():\n    return 2\n")
    odd[b"\xff\xfe"].mkdir()
    (odd[b"\xff\xfe"] / "inner.py").write_text("def inner():\n    return 3\n")
    store = IndexStore(root, tmp_path / "index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        first = indexer.reconcile()
        odd[b"pkg/\xed\xa0\x80.py"].write_bytes(b"def surrogate():\n    return 4\n")
        (root / "pkg" / "more.py").write_text("def more():\n    return base()\n")
        added = indexer.update_paths([os.fsdecode(b"pkg/\xed\xa0\x80.py"), "pkg/more.py"])
        with store.snapshot() as snapshot:
            live = dump(snapshot, with_search=True)
        odd[b"caf\xe9.py"].unlink()
        removed = indexer.update_paths([os.fsdecode(b"caf\xe9.py")])
    finally:
        store.close()

    assert first.skipped["undecodable-name"] == 2 and first.files_total == 1
    assert first.undecodable_names == tuple(sorted(["caf\\xe9.py", "\\xff\\xfe"]))
    assert added.files_parsed == 1
    assert added.undecodable_names == tuple(sorted(["caf\\xe9.py", "pkg/\\xed\\xa0\\x80.py", "\\xff\\xfe"]))
    assert removed.undecodable_names == tuple(sorted(["pkg/\\xed\\xa0\\x80.py", "\\xff\\xfe"]))
    odd[b"caf\xe9.py"].write_bytes(b"def cafe():\n    return 2\n")
    assert scan(root, ScanConfig(), lambda path: True).undecodable == added.undecodable_names
    assert_same_index(live, fresh_dump(root, tmp_path / "fresh"))


def test_folded_definitions_follow_edits_like_a_fresh_index(tmp_path: Path) -> None:
    def nested(prefix: str, count: int) -> str:
        return "".join(f"function {prefix}{level}() {{\n" for level in range(count)) + "}\n" * count

    root = tmp_path / "ws"
    root.mkdir()
    (root / "deep.js").write_text(nested("outer", 40))
    (root / "gone.js").write_text(nested("lost", 30))
    store = IndexStore(root, tmp_path / "index")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        (root / "deep.js").write_text(nested("inner", 35))
        (root / "gone.js").unlink()
        indexer.update_paths(["deep.js", "gone.js"])
        with store.snapshot() as snapshot:
            live = dump(snapshot, with_search=True)
    finally:
        store.close()

    assert [name for _, name, _, _ in live.folded] == [f"inner{level}" for level in range(24, 35)]
    assert_same_index(live, fresh_dump(root, tmp_path / "fresh"))


def test_a_resolution_a_file_at_a_time_equals_one_of_every_file_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass resolves a step of files at a time, keeping the definitions, the pools of names with
    many of them and the imports answered from step to step, and scores read their edges in parts:
    a first index and an update resolved a file at a time equal indexes resolved all at once
    (smartctx's own retrieval package, whose modules import one another, and a call that follows
    its file's import)."""
    root = tmp_path / "ws"
    (root / "retrieval").mkdir(parents=True)
    for path in sorted(RETRIEVAL.glob("*.py")):
        text = path.read_text().replace("smartctx.retrieval", "retrieval")
        (root / "retrieval" / path.name).write_text(text)
    (root / "a").mkdir()
    (root / "app.py").write_text("import helper\n\n\ndef main():\n    run()\n")
    (root / "a" / "helper.py").write_text("def run():\n    return 1\n")
    whole = fresh_dump(root, tmp_path / "whole")
    monkeypatch.setattr(resolution_pass, "FILES_PER_STEP", 1)
    monkeypatch.setattr(resolution_pass, "POOLS_KEPT_FROM", 2)
    monkeypatch.setattr(upkeep, "EDGES_PER_READ", 3)
    store = IndexStore(root, tmp_path / "steps")
    try:
        indexer = Indexer(root, store, IndexConfig(workers=0))
        indexer.reconcile()
        with store.snapshot() as snapshot:
            stepped = dump(snapshot, with_search=True)
        assert_same_index(stepped, whole)
        assert sum(1 for edge in whole.edges if edge[4] == "imports") > 20
        # A file whose import now resolves differently has its other references resolved again.
        added = [f"{folder}/helper.py" for folder in ("b", "c", "d")]
        for path in added:
            (root / path).parent.mkdir()
            (root / path).write_text("VALUE = 1\n")
        indexer.update_paths(added)
        with store.snapshot() as snapshot:
            updated = dump(snapshot, with_search=True)
    finally:
        store.close()
    monkeypatch.undo()
    fresh = fresh_dump(root, tmp_path / "fresh")
    assert ("app.py", "main@4", "a/helper.py", "run@1", "calls", 0.5) in fresh.edges
    assert_same_index(updated, fresh)
