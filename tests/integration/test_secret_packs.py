"""No planted secret leaves through any field of a pack or an expanded node, built from a real index
of the corpus in a real git repository (commit titles and bodies carry secrets too)."""

from __future__ import annotations

import json
from pathlib import Path

from secret_corpus import Planted, build, planted_repository
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.identifiers import search_words, whole_word
from smartctx.core.tokens import TokenCounter
from smartctx.history.changes import GitHistory
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.retrieval.symbols import expand_node
from smartctx.store.export import IndexExport
from smartctx.store.index_store import IndexStore
from smartctx.wire.convert import pack_to_wire


def leaks(values: list[str], text: str) -> list[str]:
    """The values (or a private key's base64 lines) still in ``text``."""
    pieces = [line for value in values for line in value.splitlines() if "-----" not in line]
    return [piece for piece in pieces if piece in text]


def test_no_planted_secret_reaches_any_field_of_a_pack(tmp_path: Path) -> None:
    counter = TokenCounter("o200k_base")
    root = tmp_path / "corpus"
    root.mkdir()
    planted: list[Planted] = build(seed=5, copies=1)
    values = [case.value for case in planted] + planted_repository(root, planted)
    store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        sources, history = WorkspaceSources(root), GitHistory(root)
        wires, packed_ids = [], set()
        with store.snapshot() as snapshot:
            for case in planted:
                options = ContextOptions(
                    max_bodies=2, max_summaries=10, include_prs=True, include_impact=True
                )
                pack = build_context(
                    ContextRequest(case.symbol, options), snapshot, counter, sources, history=history
                )
                wires.append(pack_to_wire(pack))
                packed_ids |= {item.id for item in pack.bodies + pack.summaries}
            details = [expand_node(snapshot, sources, counter, node_id) for node_id in sorted(packed_ids)]
    finally:
        store.close()
    shown = json.dumps(wires) + json.dumps([detail.__dict__ for detail in details], default=str)
    assert leaks(values, shown) == []
    # Every code case was reachable, and commit messages did reach the packs.
    assert all(body["recentPRs"] for wire in wires for body in wire["bodies"])
    assert len(packed_ids) >= len([case for case in planted if case.language in {"python", "go", "java"}])


def test_no_planted_secret_becomes_a_search_word(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    planted: list[Planted] = build(seed=11, copies=1)
    planted_repository(root, planted)
    store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
    finally:
        store.close()
    with IndexExport(store.path) as export:
        stored = {
            word
            for record in export.search_words()
            for text in (record.path_words, *(column for node in record.nodes for column in node))
            for word in text.split()
        }
    # A value's long words are its random part (a word no code has), whole or split at case changes.
    secret_words = {word for case in planted for word in search_words(case.value).split() if len(word) >= 12}
    assert len(secret_words) >= len(planted)
    assert sorted(secret_words & stored) == []
    # The definitions that held them were indexed, with the rest of their words.
    assert {whole_word(case.symbol) for case in planted if case.language == "python"} <= stored
