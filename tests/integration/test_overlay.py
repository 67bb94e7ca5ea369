"""A published base with a local overlay answers every query of store/reader.py as a local index of
the same tree does.

A repository of real code (smartctx's retrieval package) is published at one commit; a branch then
changes a file (a function renamed, a call added), adds one (definitions other files' references
now find, imports of base files) and deletes one (that others import from). The overlay indexes
only those three files; a local index holds the whole branch. Each query is put to both, with
arguments drawn from the local index, and the answers compared with ids replaced by what a node is
(its file, qualified name and first line), since the two give different ids to the same definition.
PageRank is the one score an overlay estimates (overlay.py): it is left out of the comparison, and
its estimate is compared on its own.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from postgres_server import REQUIRE_VARIABLE

if not os.environ.get(REQUIRE_VARIABLE):
    pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")

from commit_postings import commit_postings
from gitrepos import Repo
from smartctx.core.model import RefKind
from smartctx.indexing.indexer import Indexer
from smartctx.indexing.past_commits import read_past_commits
from smartctx.store.index_store import IndexStore
from smartctx.store.past_commits import PastCommitWindow
from smartctx.store.reader import IndexReader
from smartctx.store.resolution import reference_key
from smartctx.store.snapshot import EdgeRow, IndexSnapshot, NodeRow, SearchHit
from smartctx.team.base import published_commits
from smartctx.team.base_snapshot import BaseSnapshot
from smartctx.team.database import READ_APPLICATION, connect, parse_url
from smartctx.team.merged import MergedReader, PreparedOverlay
from smartctx.team.overlay import Overlay, read_overlay

REPOSITORY = "example.invalid/overlay"
SOURCE = Path(__file__).resolve().parents[2] / "server" / "smartctx" / "retrieval"
CHANGED = "retrieval/score.py"
ADDED = "retrieval/extra.py"
DELETED = "retrieval/breadcrumbs.py"
# A base file's reference that only a new definition answers (same folder), and one that only an
# import pointing elsewhere answers: four modules named alike are too many for ``import helpers``
# to resolve (store/resolution.py), three are not, and ``polish`` is then found in what it imports.
APP = {
    "app/main.py": "import helpers\n\n\ndef main():\n    return polish()\n",
    "app/cli.py": "def run():\n    return shine()\n",
    "lib/a/helpers.py": "def polish():\n    return 1\n",
    "lib/b/helpers.py": "def polish():\n    return 2\n",
    "lib/c/helpers.py": "def buff():\n    return 3\n",
    "lib/d/helpers.py": "def wax():\n    return 4\n",
}
ADDED_NEXT_TO_MAIN = ("app/shine.py", "def shine():\n    return 'bright'\n")
DELETED_HELPERS = "lib/d/helpers.py"
EXTRA = '''"""Definitions the branch adds: names the base's files use, and uses of the base's."""

from smartctx.retrieval.score import ScoredNode, score
from smartctx.retrieval import pack


class Fitted(ScoredNode):
    """A second definition of a name the deleted file had."""


def fit_impact(section, room, counter):
    """Fit the impact section: the branch's own way."""
    return score(section, room) + pack.pack(counter)


def fit_changes(name, changes):
    return [fit_impact(change, name, None) for change in changes]
'''
GROUPED = '''

def grouped(pairs):
    """A name the deleted file defined, now here."""
    return fit_changes(pairs, [])
'''
Identity = tuple[str, str, int]


def branch(repo: Repo) -> None:
    """The branch's three changes, left in the work tree as an editor has them."""
    score = (repo.root / CHANGED).read_text()
    assert "def _lines(" in score
    renamed = score.replace("_lines(", "_line_share(")
    renamed += GROUPED
    repo.write(CHANGED, renamed)
    repo.write(ADDED, EXTRA)
    repo.write(*ADDED_NEXT_TO_MAIN)
    (repo.root / DELETED).unlink()
    (repo.root / DELETED_HELPERS).unlink()


@pytest.fixture(scope="module")
def readers(
    tmp_path_factory: pytest.TempPathFactory, postgres_url_module: str
) -> Iterator[tuple[IndexSnapshot, MergedReader, Overlay]]:
    root = tmp_path_factory.mktemp("overlay") / "repo"
    repo = Repo(root)
    for path in sorted(SOURCE.glob("*.py")):
        repo.write(f"retrieval/{path.name}", path.read_text())
    for path, text in APP.items():
        repo.write(path, text)
    repo.commit("retrieval and an app")
    published = subprocess.run(
        [
            sys.executable, "-m", "smartctx", "index", str(root), "--quiet",
            "--index-dir", str(root.parent / "base-index"),
            "--publish", postgres_url_module, "--repository", REPOSITORY,
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert published.returncode == 0, published.stderr
    branch(repo)
    whole = IndexStore(root, root.parent / "branch-index")
    Indexer(root, whole).reconcile()
    partial = IndexStore(root, root.parent / "overlay-index")
    Indexer(root, partial).update_paths([CHANGED, ADDED, ADDED_NEXT_TO_MAIN[0]])
    connection = connect(parse_url(postgres_url_module, READ_APPLICATION))
    (commit,) = published_commits(connection, REPOSITORY)
    overlay = read_overlay(
        connection,
        commit.commit_id,
        partial.path,
        [CHANGED, ADDED, ADDED_NEXT_TO_MAIN[0], DELETED, DELETED_HELPERS],
    )
    # The clone's own window of past commits, as choose_base reads it beside git's walks.
    window = PastCommitWindow(read_past_commits(root) or [])
    merged = MergedReader(
        BaseSnapshot(connection, commit, hidden=overlay.hides(), past_commits=window),
        PreparedOverlay(overlay),
    )
    local = whole.snapshot()
    yield local, merged, overlay
    local.close()
    merged.close()
    connection.close()
    whole.close()
    partial.close()


def identities(reader: IndexReader, node_ids: Iterable[int]) -> dict[int, Identity]:
    return {node.id: (node.path, node.qualified_name, node.start_line) for node in reader.nodes(node_ids)}


def every_node(reader: IndexReader) -> dict[Identity, int]:
    """Every node of a reader by what it is."""
    paths = reader.file_paths()
    found = {
        (node.path, node.qualified_name, node.start_line): node.id
        for nodes in reader.top_definitions(paths, 1_000_000).values()
        for node in nodes
    }
    modules = reader.module_ids(paths)
    found.update(
        ((path, node.qualified_name, node.start_line), node.id) for path, node in _modules(reader, modules)
    )
    return found


def _modules(reader: IndexReader, modules: dict[str, int]) -> list[tuple[str, NodeRow]]:
    return [(node.path, node) for node in reader.nodes(modules.values())]


def shown(reader: IndexReader, node: NodeRow | None) -> tuple[Any, ...] | None:
    """A node without its ids and PageRank: what it is, where, and its usage (rounded)."""
    if node is None:
        return None
    parent = identities(reader, [node.parent_id]).get(node.parent_id) if node.parent_id is not None else None
    return (*node[1:11], parent, round(node.usage, 9))


def shown_edges(reader: IndexReader, edges: Iterable[EdgeRow]) -> list[tuple[Any, ...]]:
    listed = list(edges)
    named = identities(reader, {e.src_id for e in listed} | {e.dst_id for e in listed})
    return sorted((named[e.src_id], named[e.dst_id], e.kind, round(e.confidence, 9)) for e in listed)


@pytest.fixture(scope="module")
def ids(readers: tuple[IndexSnapshot, MergedReader, Overlay]) -> dict[Identity, tuple[int, int]]:
    """Each node's id in the local index and in the merged reader, by what it is."""
    local, merged, _ = readers
    local_nodes, merged_nodes = every_node(local), every_node(merged)
    assert local_nodes.keys() == merged_nodes.keys()
    return {identity: (local_nodes[identity], merged_nodes[identity]) for identity in local_nodes}


def test_every_query_of_the_protocol_is_compared() -> None:
    source = Path(__file__).read_text()
    queries = {name for name in vars(IndexReader) if not name.startswith("_")}
    assert {query for query in queries if f".{query}(" not in source} == set()


def test_past_commits_are_the_clone_s(readers: tuple[IndexSnapshot, MergedReader, Overlay]) -> None:
    local, merged, _ = readers
    words = ["retrieval", "app", "absent"]
    found = merged.past_commit_postings(words)
    assert commit_postings(found) == commit_postings(local.past_commit_postings(words))
    assert found.postings != {}
    assert merged.past_commit_paths([0]) == local.past_commit_paths([0]) != {}


def test_the_overlay_is_the_branch_s_three_files(
    readers: tuple[IndexSnapshot, MergedReader, Overlay],
) -> None:
    local, merged, overlay = readers
    assert overlay.shadowed_paths == {CHANGED, DELETED, DELETED_HELPERS}
    assert set(overlay.files) == {CHANGED, ADDED, ADDED_NEXT_TO_MAIN[0]}
    assert overlay.replaced_refs, "base references into the changed files are resolved again"
    assert merged.file_paths() == local.file_paths()
    assert DELETED not in merged.file_paths() and ADDED in merged.file_paths()
    assert merged.stats_files() == local.stats_files()
    assert merged.row_count() == local.row_count()
    assert merged.common_cutoff() == local.common_cutoff()
    left_out = {"pending_references", "scores_dirty"}
    merged_stats = {key: value for key, value in asdict(merged.stats()).items() if key not in left_out}
    local_stats = {key: value for key, value in asdict(local.stats()).items() if key not in left_out}
    assert merged_stats == local_stats
    assert merged.meta("git_head") is not None


def test_definitions_by_id_name_place_and_file(
    readers: tuple[IndexSnapshot, MergedReader, Overlay], ids: dict[Identity, tuple[int, int]]
) -> None:
    local, merged, _ = readers
    pairs = list(ids.values())
    local_ids, merged_ids = [a for a, _ in pairs], [b for _, b in pairs]
    assert sorted(shown(merged, n) for n in merged.nodes(merged_ids)) == sorted(
        shown(local, n) for n in local.nodes(local_ids)
    )
    assert sorted(merged.paths_of(merged_ids).values()) == sorted(local.paths_of(local_ids).values())
    names = sorted({identity[1].rpartition(".")[2] for identity in ids} | {"grouped", "_lines", "absent"})
    for name, nodes in local.nodes_with_names(names).items():
        assert sorted(shown(merged, n) for n in merged.nodes_with_names(names)[name]) == sorted(
            shown(local, n) for n in nodes
        ), name
    assert merged.nodes_with_names(names).keys() == local.nodes_with_names(names).keys()
    assert merged.definition_counts(names) == local.definition_counts(names)
    paths = local.file_paths()
    assert merged.module_ids(paths).keys() == local.module_ids(paths).keys()
    for path, nodes in local.top_definitions(paths, 1000).items():
        assert sorted(shown(merged, n) for n in merged.top_definitions(paths, 1000)[path]) == sorted(
            shown(local, n) for n in nodes
        )
    assert merged.folded_named(names) == local.folded_named(names)
    for path, qualified, start in list(ids)[::5]:
        assert [shown(merged, n) for n in merged.nodes_at(path, qualified)] == [
            shown(local, n) for n in local.nodes_at(path, qualified)
        ]
        assert shown(merged, merged.innermost_node_at(path, start + 1)) == shown(
            local, local.innermost_node_at(path, start + 1)
        )
        name = qualified.rpartition(".")[2]
        assert [shown(merged, n) for n in merged.definitions_named(path, name)] == [
            shown(local, n) for n in local.definitions_named(path, name)
        ]
        assert sorted(shown(merged, n) for n in merged.nodes_named_within(name, name)) == sorted(
            shown(local, n) for n in local.nodes_named_within(name, name)
        )
    for suffix in ("score.py", "extra.py", "breadcrumbs.py", "retrieval/pack.py"):
        assert merged.paths_ending_with(suffix) == local.paths_ending_with(suffix)


def test_edges_references_and_uses(
    readers: tuple[IndexSnapshot, MergedReader, Overlay], ids: dict[Identity, tuple[int, int]]
) -> None:
    local, merged, _ = readers
    pairs = list(ids.values())
    local_ids, merged_ids = [a for a, _ in pairs], [b for _, b in pairs]
    assert shown_edges(merged, merged.edges_touching(merged_ids)) == shown_edges(
        local, local.edges_touching(local_ids)
    )
    assert sorted(identities(merged, merged.children(merged_ids)).values()) == sorted(
        identities(local, local.children(local_ids)).values()
    )
    merged_in, merged_complete = merged.incoming_edges(merged_ids, 1_000_000)
    local_in, local_complete = local.incoming_edges(local_ids, 1_000_000)
    assert shown_edges(merged, merged_in) == shown_edges(local, local_in)
    assert merged_complete and local_complete
    # Cut short: the same number, and whether the list is whole (ids, and so which ones, differ).
    for limit in (1, 3, 10):
        cut, local_cut = merged.incoming_edges(merged_ids, limit), local.incoming_edges(local_ids, limit)
        assert (len(cut[0]), cut[1]) == (len(local_cut[0]), local_cut[1]), limit
    for local_id, merged_id in pairs:
        for limit in (1, 3):
            assert len(merged.neighbours(merged_id, limit)) == len(local.neighbours(local_id, limit))
            single_merged, single_local = (
                merged.incoming_edges([merged_id], limit),
                local.incoming_edges([local_id], limit),
            )
            assert (len(single_merged[0]), single_merged[1]) == (len(single_local[0]), single_local[1])
        local_uses, merged_uses = local.uses_of(local_id, 1000), merged.uses_of(merged_id, 1000)
        assert (merged_uses.count, merged_uses.files) == (local_uses.count, local_uses.files)
        assert sorted(merged_uses.top, key=repr) == sorted(local_uses.top, key=repr)
        assert sorted(_neighbours(merged, merged_id)) == sorted(_neighbours(local, local_id))


def test_the_edges_hidden_by_rule_are_those_hidden_by_id(
    readers: tuple[IndexSnapshot, MergedReader, Overlay], postgres_url_module: str
) -> None:
    # Queries check what an overlay hides either way (base_snapshot.Hidden): by its rule in SQL
    # (incoming_edges), or by the ids it names after reading. Both hide the same edges.
    _, _, overlay = readers
    hidden = overlay.hides()
    connection = connect(parse_url(postgres_url_module, READ_APPLICATION))
    (commit,) = published_commits(connection, REPOSITORY)
    every = connection.execute(
        "SELECT src_id, dst_id, kind, ref_id FROM smartctx.edges WHERE commit_id = %s", (commit.commit_id,)
    ).fetchall()
    node_ids = sorted({int(edge[1]) for edge in every})
    with BaseSnapshot(connection, commit, hidden=hidden) as base:
        by_rule, complete = base.incoming_edges(node_ids, 10_000_000)
    connection.close()

    by_id = {
        (src, dst, kind)
        for src, dst, kind, ref_id in every
        if kind != "contains" and not hidden.hides(src, ref_id)
    }
    assert complete and len(by_id) < len(
        {(src, dst, kind) for src, dst, kind, _ in every if kind != "contains"}
    )
    assert {(edge.src_id, edge.dst_id, edge.kind) for edge in by_rule} == by_id


def _neighbours(reader: IndexReader, node_id: int) -> list[tuple[Any, ...]]:
    found = reader.neighbours(node_id, 1_000_000)
    named = identities(reader, [n.node_id for n in found])
    return [(named[n.node_id], n.kind, round(n.confidence, 9), n.path, n.is_module) for n in found]


def test_reference_targets(readers: tuple[IndexSnapshot, MergedReader, Overlay]) -> None:
    local, merged, _ = readers
    places = sorted(set(_references(local)))
    assert len(places) > 100
    for path, line, key in places:
        assert [shown(merged, n) for n in merged.reference_targets(path, line, key)] == [
            shown(local, n) for n in local.reference_targets(path, line, key)
        ], (path, line, key)


def _references(local: IndexSnapshot) -> list[tuple[str, int, str]]:
    """Every reference of the local index, by where it is and its key."""
    return [
        (path, line, reference_key(RefKind(kind), name)) for path, _, kind, name, line, _ in local.all_refs()
    ]


def test_lexical_search_scores_as_the_local_index(
    readers: tuple[IndexSnapshot, MergedReader, Overlay],
) -> None:
    local, merged, _ = readers
    for terms in (
        {"pack": 2, "budget": 1},
        {"fit": 1, "impact": 2, "section": 1},
        {"score": 1},
        {"grouped": 1, "pairs": 1},
        {"line": 1, "share": 1},
        {"never_a_word_here": 1},
    ):
        local_hits, merged_hits = local.search(terms, 40), merged.search(terms, 40)
        assert_same_scores(_scores(merged, merged_hits), _scores(local, local_hits))
        assert [hit.bm25 for hit in merged_hits] == sorted((hit.bm25 for hit in merged_hits), reverse=True)
        local_files, merged_files = local.search_files(terms, 20), merged.search_files(terms, 20)
        assert_same_scores(dict(merged_files), dict(local_files))
        assert [path for path, _ in merged_files] == [path for path, _ in local_files]
        assert merged.document_counts(terms, 10) == local.document_counts(terms, 10)


def _scores(reader: IndexReader, hits: list[SearchHit]) -> dict[Identity, float]:
    named = identities(reader, [hit.node_id for hit in hits])
    return {named[hit.node_id]: hit.bm25 for hit in hits}


def assert_same_scores(merged: dict[Any, float], local: dict[Any, float]) -> None:
    """The same documents with the same scores, to the 32-bit floats tantivy scores in. Of documents
    tied at the last place a search returns, either may be the one cut: ties are broken by ids, which
    the two readers number differently."""
    last = min(local.values(), default=0.0)

    def above_last(scores: dict[Any, float]) -> set[Any]:
        return {key for key, score in scores.items() if not math.isclose(score, last, rel_tol=1e-5)}

    assert len(merged) == len(local)
    assert above_last(merged) == above_last(local)
    assert all(math.isclose(merged[key], local[key], rel_tol=1e-5) for key in local.keys() & merged.keys()), (
        merged,
        local,
    )
    assert all(math.isclose(score, last, rel_tol=1e-5) for score in (merged | local).values() if score < last)


def test_the_overlay_s_pagerank_is_estimated_near_the_local_index_s(
    readers: tuple[IndexSnapshot, MergedReader, Overlay], ids: dict[Identity, tuple[int, int]]
) -> None:
    local, merged, overlay = readers
    pairs = [(a, b) for a, b in ids.values() if b in overlay.nodes]
    local_ranks = _ranks(local, [a for a, _ in pairs])
    merged_ranks = _ranks(merged, [b for _, b in pairs])
    ratios = sorted(merged_ranks[key] / local_ranks[key] for key in local_ranks)
    # Most within a few per cent; a new file whose only definition is called from a base file that
    # called nothing before (app/shine.py) is off most, and still within a factor of two.
    assert abs(ratios[len(ratios) // 2] - 1) < 0.05
    assert ratios[0] > 0.5 and ratios[-1] < 2.0
    renamed = merged.nodes_at(CHANGED, "_line_share")
    assert renamed and renamed[0].id < 0 and renamed[0].pagerank > 2 * min(merged_ranks.values())


def _ranks(reader: IndexReader, node_ids: list[int]) -> dict[Identity, float]:
    return {(n.path, n.qualified_name, n.start_line): n.pagerank for n in reader.nodes(node_ids)}


def test_document_counts_stop_at_the_cap_as_the_local_index(
    readers: tuple[IndexSnapshot, MergedReader, Overlay],
) -> None:
    """A term the base holds in more documents than the cap and the shadowed ones together is not
    counted in full (that was most of a django request's time); every count is still the local
    index's, for common terms, terms only the overlay holds and terms only shadowed rows held."""
    local, merged, overlay = readers
    terms = ["self", "return", "node", "score", "lines", "line", "share", "grouped", "fitted", "breadcrumb"]
    enough = 1 + len(overlay.shadowed_nodes)
    assert any(count >= enough for count in local.document_counts(terms, enough).values())
    for at_most in (1, 2, 5, 10, 50, 1_000_000):
        assert merged.document_counts(terms, at_most) == local.document_counts(terms, at_most), at_most
