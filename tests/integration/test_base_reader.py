"""Every query retrieval asks (store/reader.py), answered by a published commit in PostgreSQL as the
local index answers it: the same rows, in the same order.

One repository of real code (smartctx's retrieval package, a file of definitions nested too deep to
index, calls between files) is indexed and published; each query is then put to the local snapshot
and to the base snapshot with the same arguments, drawn from the index itself. A query added to the
protocol without a test here fails :func:`test_every_query_of_the_protocol_is_compared`.
"""

from __future__ import annotations

import math
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from postgres_server import REQUIRE_VARIABLE

if not os.environ.get(REQUIRE_VARIABLE):
    pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")

from commit_postings import commit_postings
from gitrepos import Repo
from smartctx.indexing.past_commits import read_past_commits
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.past_commits import PastCommitWindow
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import IndexSnapshot
from smartctx.team.base import published_commits
from smartctx.team.base_snapshot import BaseSnapshot
from smartctx.team.database import READ_APPLICATION, connect, parse_url

REPOSITORY = "example.invalid/reader"
SOURCE = Path(__file__).resolve().parents[2] / "server" / "smartctx" / "retrieval"
# Deeper than the parser keeps definitions (parsing/extract.py folds what lies past 24 levels).
NESTING = 30
COMPARED = {
    "meta",
    "stats",
    "stats_files",
    "nodes",
    "nodes_with_names",
    "definition_counts",
    "nodes_named_within",
    "module_ids",
    "paths_of",
    "edges_touching",
    "neighbours",
    "incoming_edges",
    "children",
    "search",
    "search_files",
    "document_counts",
    "common_cutoff",
    "row_count",
    "innermost_node_at",
    "nodes_at",
    "definitions_named",
    "reference_targets",
    "uses_of",
    "paths_ending_with",
    "top_definitions",
    "folded_named",
    "past_commit_postings",
    "past_commit_paths",
}


def nested_file() -> str:
    lines = [f"{'    ' * depth}def level{depth}():" for depth in range(NESTING)]
    lines.append(f"{'    ' * NESTING}return {NESTING}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory, postgres_url_module: str) -> Path:
    """The local index of the repository, published as one commit."""
    root = tmp_path_factory.mktemp("reader") / "repo"
    repo = Repo(root)
    for path in sorted(SOURCE.glob("*.py")):
        repo.write(f"retrieval/{path.name}", path.read_text())
    repo.write("deep/nested.py", nested_file())
    repo.commit("retrieval and a deep file")
    index_dir = root.parent / "index"
    published = subprocess.run(
        [
            sys.executable, "-m", "smartctx", "index", str(root), "--index-dir", str(index_dir), "--quiet",
            "--publish", postgres_url_module, "--repository", REPOSITORY,
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert published.returncode == 0, published.stderr
    return index_dir / INDEX_FILE_NAME


@pytest.fixture(scope="module")
def stores(index_path: Path, postgres_url_module: str) -> Iterator[tuple[IndexSnapshot, BaseSnapshot]]:
    connection = connect(parse_url(postgres_url_module, READ_APPLICATION))
    (commit,) = published_commits(connection, REPOSITORY)
    local = IndexSnapshot(index_path)
    # As an editor's base has it (team/base.py): the clone's own window, read from git.
    window = PastCommitWindow(read_past_commits(index_path.parent.parent / "repo") or [])
    base = BaseSnapshot(connection, commit, past_commits=window)
    yield local, base
    local.close()
    base.close()
    connection.close()


@pytest.fixture(scope="module")
def samples(stores: tuple[IndexSnapshot, BaseSnapshot], index_path: Path) -> dict[str, Any]:
    """Arguments drawn from the local index: definitions, names, paths, a resolved reference."""
    local, _ = stores
    paths = local.file_paths()
    nodes = [node for path in paths for node in local.nodes_in_file(path)]
    definitions = [node for node in nodes if node.kind.value != "module"]
    with sqlite3.connect(f"file:{index_path}?mode=ro", uri=True) as db:
        references = db.execute(
            "SELECT f.path, r.line, r.key, e.dst_id FROM refs r JOIN files f ON f.id = r.file_id"
            " JOIN edges e ON e.ref_id = r.id ORDER BY r.id LIMIT 40"
        ).fetchall()
        used = [
            node_id
            for (node_id,) in db.execute(
                "SELECT dst_id FROM edges WHERE kind = 'calls' GROUP BY dst_id"
                " ORDER BY count(*) DESC, dst_id LIMIT 5"
            )
        ]
    return {
        "ids": [node.id for node in nodes[::3]],
        "hubs": used,
        "names": sorted({node.name for node in definitions[::4]} | {"level27", "score", "absent_name"}),
        "paths": paths,
        "definitions": definitions[::7],
        "references": references,
    }


def test_every_query_of_the_protocol_is_compared() -> None:
    asked = {name for name in vars(IndexReader) if not name.startswith("_")}
    assert asked == COMPARED


def test_the_counts_and_the_index_meta_are_the_local_index_s(
    stores: tuple[IndexSnapshot, BaseSnapshot],
) -> None:
    local, base = stores
    assert asdict(base.stats()) == asdict(local.stats())
    assert base.stats().folded_definitions > 0
    assert base.stats_files() == local.stats_files()
    assert base.row_count() == local.row_count()
    assert base.common_cutoff() == local.common_cutoff()
    assert base.meta("git_head") == local.meta("git_head") is not None


def test_past_commits_of_the_clone(stores: tuple[IndexSnapshot, BaseSnapshot]) -> None:
    local, base = stores
    words = ["retrieval", "deep", "file", "absent"]
    found = base.past_commit_postings(words)
    assert commit_postings(found) == commit_postings(local.past_commit_postings(words))
    assert set(found.postings) == {"retrieval", "deep", "file"}
    assert base.past_commit_paths([0, 1]) == local.past_commit_paths([0, 1]) != {}


def test_definitions_by_id_name_place_and_file(
    stores: tuple[IndexSnapshot, BaseSnapshot], samples: dict[str, Any]
) -> None:
    local, base = stores
    ids, names, paths = samples["ids"], samples["names"], samples["paths"]
    assert base.nodes(ids) == local.nodes(ids)
    assert base.paths_of(ids) == local.paths_of(ids)
    assert base.nodes_with_names(names) == local.nodes_with_names(names)
    assert base.definition_counts(names) == local.definition_counts(names)
    assert base.module_ids(paths) == local.module_ids(paths)
    assert base.top_definitions(paths, 3) == local.top_definitions(paths, 3)
    assert base.folded_named(names) == local.folded_named(names) != []
    for node in samples["definitions"]:
        assert base.nodes_at(node.path, node.qualified_name) == local.nodes_at(node.path, node.qualified_name)
        named = local.definitions_named(node.path, node.name)
        assert base.definitions_named(node.path, node.name) == named and node in named
        middle = (node.start_line + node.end_line) // 2
        assert base.innermost_node_at(node.path, middle) == local.innermost_node_at(node.path, middle)
        suffix = node.qualified_name.rpartition(".")[2]
        assert base.nodes_named_within(node.name, suffix) == local.nodes_named_within(node.name, suffix)
    for path in (*paths[:5], "pack.py", "retrieval/score.py", "missing.py"):
        assert base.paths_ending_with(path) == local.paths_ending_with(path)
    assert base.innermost_node_at("missing.py", 1) is local.innermost_node_at("missing.py", 1) is None


def test_edges_references_and_uses(
    stores: tuple[IndexSnapshot, BaseSnapshot], samples: dict[str, Any]
) -> None:
    local, base = stores
    ids = samples["ids"]
    assert base.edges_touching(ids) == local.edges_touching(ids)
    assert base.children(ids) == local.children(ids)
    assert base.incoming_edges(ids, 1000) == local.incoming_edges(ids, 1000)
    assert base.incoming_edges(ids, 3) == local.incoming_edges(ids, 3)
    for node_id in samples["hubs"]:
        assert base.uses_of(node_id, 5) == local.uses_of(node_id, 5)
        # Both halves in full (limits above the hub's edges): the same neighbours, listed in each
        # store's own order (architecture.md, *Reading a base*).
        assert sorted(base.neighbours(node_id, 10_000)) == sorted(local.neighbours(node_id, 10_000))
    for path, line, key, _ in samples["references"]:
        assert base.reference_targets(path, line, key) == local.reference_targets(path, line, key) != []


def test_lexical_search_ranks_as_the_local_index(stores: tuple[IndexSnapshot, BaseSnapshot]) -> None:
    local, base = stores
    for terms in (
        {"pack": 2, "budget": 1},
        {"diversify": 1, "files": 1, "bodies": 3},
        {"score": 1},
        {"never_a_word_here": 1},
        {"level27": 1},
    ):
        local_hits, base_hits = local.search(terms, 50), base.search(terms, 50)
        assert [hit.node_id for hit in base_hits] == [hit.node_id for hit in local_hits]
        assert all(
            math.isclose(b.bm25, a.bm25, rel_tol=1e-5) for a, b in zip(local_hits, base_hits, strict=True)
        )
        local_files, base_files = local.search_files(terms, 20), base.search_files(terms, 20)
        assert [path for path, _ in base_files] == [path for path, _ in local_files]
        assert base.document_counts(terms, 10) == local.document_counts(terms, 10)
