"""The window of past commits in the index, and the similar-commits signal it gives definitions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.commit_postings import commit_postings
from tests.gitrepos import Repo

from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.past_commits import MAX_COMMIT_PATHS, read_past_commits, window_stamp
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.retrieval.similar_commits import similar_commit_files
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.index_store import IndexStore
from smartctx.store.past_commits import PAST_COMMITS_KEY, PastCommitWindow

# The same function in two places, so the task's words match both alike; only history tells them apart.
TOTALS = "def total(amounts):\n    return round(sum(amounts), 2)\n"


def indexed(root: Path, index: Path) -> IndexStore:
    store = IndexStore(root, index)
    Indexer(root, store, IndexConfig(workers=0)).reconcile()
    return store


def test_the_index_keeps_the_words_and_files_of_past_commits(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("src/config.py", "def load():\n    return {}\n")
    repo.commit("Read the configuration file lazily")
    for number in range(MAX_COMMIT_PATHS + 1):
        repo.write(f"gen/module_{number}.py", f"VALUE = {number}\n")
    repo.commit("Regenerate every module of the lazily built tables")
    repo.write("src/keys.py", "def rotate():\n    return None\n")
    repo.commit("Rotate the deploy key AKIAQWERTYUIOPASDFGHJ before release")
    store = indexed(repo.root, tmp_path / "index")
    try:
        with store.snapshot() as snapshot:
            lazily = snapshot.past_commit_postings(["lazily"])
            assert snapshot.meta(PAST_COMMITS_KEY) == window_stamp(repo.git("rev-parse", "HEAD"))
            # A commit of more files than a change to one place has is left out of the window.
            assert lazily.postings["lazily"][0].tolist() == [1]
            assert snapshot.past_commit_paths([1]) == {1: ("src/config.py",)}
            assert len(lazily.lengths) == 2
            # The key's words never reach the index; the message's other words do.
            found = snapshot.past_commit_postings(["akiaqwertyuiopasdfghj", "rotate", "deploy"])
            assert set(found.postings) == {"rotate", "deploy"}
    finally:
        store.close()


def test_a_task_worded_like_a_past_commit_ranks_the_file_that_commit_changed_first(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("billing/compute.py", TOTALS)
    repo.write("shipping/compute.py", TOTALS)
    repo.commit("Start billing and shipping")
    # A change of no words: the code's text still matches the task no better than billing's.
    repo.write("shipping/compute.py", TOTALS + "\n")
    repo.commit("Parcel weights are rounded to whole grams before the rate lookup")
    store = indexed(repo.root, tmp_path / "index")
    try:
        with store.snapshot() as snapshot:
            task = "The total is off for parcels whose weights need rounding"
            request = ContextRequest(task, ContextOptions())
            pack = build_context(request, snapshot, TokenCounter(), WorkspaceSources(repo.root))
    finally:
        store.close()
    # Without the signal the two totals tie, and the tie goes to the first path (billing).
    first = pack.bodies[0]
    assert first.id == "shipping/compute.py::total"
    assert first.score_parts["similarCommits"] > 0


def test_the_window_in_memory_answers_as_the_index_does(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    for number, words in enumerate(["parse the header", "parse the body twice", "write the header"]):
        repo.write(f"part_{number}.py", f"def part_{number}():\n    return {number}\n")
        repo.write("tests/test_parts.py", f"def test_part():\n    assert {number} >= 0\n")
        repo.commit(words.capitalize())
    store = indexed(repo.root, tmp_path / "index")
    window = PastCommitWindow(read_past_commits(repo.root) or [])
    words = ["parse", "header", "twice", "nowhere"]
    try:
        with store.snapshot() as snapshot:
            in_index = snapshot.past_commit_postings(words)
            assert commit_postings(window.postings(words)) == commit_postings(in_index)
            assert window.paths([0, 2]) == snapshot.past_commit_paths([0, 2])
    finally:
        store.close()
    assert commit_postings(in_index) == (
        {"parse": ([1, 2], [1, 1]), "header": ([0, 2], [1, 1]), "twice": ([1], [1])},
        [3, 4, 3],
    )


def test_similar_commits_share_their_score_among_their_files_and_leave_tests_out(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("one.py", "A = 1\n")
    repo.write("tests/test_one.py", "def test_one():\n    pass\n")
    repo.commit("Cache the lookups")
    repo.write("two.py", "B = 2\n")
    repo.write("three.py", "C = 3\n")
    repo.commit("Cache the lookups")
    store = indexed(repo.root, tmp_path / "index")
    try:
        with store.snapshot() as snapshot:
            files = similar_commit_files(snapshot, {"cache": 1, "lookups": 1})
    finally:
        store.close()
    # Two commits with the same message: the one of a single file (its test aside) gives it all
    # of its score, the other shares it between two files.
    assert files["one.py"] == 1.0
    assert files["two.py"] == files["three.py"] == 1.0 / 2**0.5
    assert "tests/test_one.py" not in files


def test_an_index_from_before_the_window_gains_it_in_place(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("app.py", "def run():\n    return 1\n")
    repo.commit("Run the app from its module")
    store = indexed(repo.root, tmp_path / "index")
    store.close()
    path = tmp_path / "index" / INDEX_FILE_NAME
    # The schema before the window: its tables gone, its digest the one that version had.
    connection = sqlite3.connect(path)
    connection.executescript(
        "DROP TABLE past_commit_words; DROP TABLE past_commit_lengths; DROP TABLE past_commits;"
        f" DELETE FROM meta WHERE key = '{PAST_COMMITS_KEY}';"
        " UPDATE meta SET value = '44fdaf14488d5b6a' WHERE key = 'schema_digest';"
    )
    connection.close()
    inode = path.stat().st_ino
    store = IndexStore(repo.root, tmp_path / "index")
    try:
        with store.snapshot() as snapshot:
            # Upgraded, not built again: the same file, its rows kept, no window until a reconcile.
            assert snapshot.stats_files() == 1
            assert snapshot.past_commit_postings(["module"]).postings == {}
        Indexer(repo.root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            (commits, _) = snapshot.past_commit_postings(["module"]).postings["module"]
            assert snapshot.past_commit_paths(commits.tolist()) == {0: ("app.py",)}
    finally:
        store.close()
    assert path.stat().st_ino == inode
    assert not list(path.parent.glob("*.broken-*"))
