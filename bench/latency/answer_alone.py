"""Tasks answered by one reader in a process of its own, for that process's peak memory: the local
index of a tree, or a team's published base with the overlay of a branch's files built here, as an
editor's server holds the one or the other (issue 26 item 5: memory).

``overlay_perf.py --memory-tasks`` runs it through ``bench.child_process``, once each way. What to
do comes as a JSON file (:class:`Spec`'s fields); it prints one JSON line: the resident memory
after its imports, its peak (the kernel's high-water mark) and at the end, and the seconds.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from bench.procfs import peak_rss_mb, rss_mb
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.index_store import IndexStore
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import SnapshotPool
from smartctx.team.base import PublishedCommit
from smartctx.team.base_snapshot import BaseSnapshot, CommitFacts
from smartctx.team.database import READ_APPLICATION, connect, parse_url
from smartctx.team.merged import MergedReader, PreparedOverlay
from smartctx.team.overlay import read_overlay


class Spec(TypedDict):
    """What a run answers, and from what: ``kind`` "local" reads ``index`` (an index file); "merged"
    indexes ``changed`` alone and reads the published commit at ``url`` under them."""

    kind: str
    tree: str
    tasks: list[str]
    budget: int
    index: str
    url: str
    commit_id: int
    sha: str
    completed_at: str
    changed: list[str]
    deleted: list[str]


def run(spec: Spec) -> dict[str, Any]:
    tree = Path(spec["tree"])
    counter, sources = TokenCounter(), WorkspaceSources(tree)
    options = ContextOptions(budget_tokens=spec["budget"])
    start_mb = rss_mb()
    began = time.perf_counter()

    def answer(open_reader: Any) -> None:
        for task in spec["tasks"]:
            reader: IndexReader
            with open_reader() as reader:
                build_context(ContextRequest(task, options), reader, counter, sources)

    if spec["kind"] == "local":
        with closing(SnapshotPool()) as pool:
            answer(lambda: pool.snapshot(Path(spec["index"])))
    else:
        connection = connect(parse_url(spec["url"], READ_APPLICATION))
        commit = PublishedCommit(spec["commit_id"], spec["sha"], datetime.fromisoformat(spec["completed_at"]))
        with tempfile.TemporaryDirectory(prefix="answer-alone-") as folder:
            # The overlay as ``smartctx context --base`` and the servers build it: the local files
            # indexed alone, then read over the base; the process keeps it while it answers.
            with closing(IndexStore(tree, Path(folder))) as store:
                Indexer(tree, store, IndexConfig()).update_paths(spec["changed"], reconcile_from=None)
                overlay = read_overlay(
                    connection, spec["commit_id"], store.path, [*spec["changed"], *spec["deleted"]]
                )
            prepared, facts, hidden = PreparedOverlay(overlay), CommitFacts(), overlay.hides()
            answer(lambda: MergedReader(BaseSnapshot(connection, commit, facts, hidden=hidden), prepared))
        connection.close()
    return {
        "kind": spec["kind"],
        "tasks": len(spec["tasks"]),
        "seconds": time.perf_counter() - began,
        "start_mb": start_mb,
        "peak_mb": peak_rss_mb(),
        "end_mb": rss_mb(),
    }


def main() -> None:
    spec: Spec = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps(run(spec)))


if __name__ == "__main__":
    main()
