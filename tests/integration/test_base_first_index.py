"""A published base answers for a workspace folder while the folder's own first index runs: the
live workspace the language server and the MCP server share, with a real PostgreSQL and git.

The folder is a clone of a commit a CI job published. Until its own index has held the whole
folder once, a request is answered from the base, with an ``answered-from-base`` warning naming
it, the folder's local files (changed, new, unsaved) laid over it; then the folder's own index
answers, with the same packs.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from postgres_server import REQUIRE_VARIABLE

if not os.environ.get(REQUIRE_VARIABLE):
    pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")

import psycopg

from gitrepos import Repo
from smartctx.core.context import ContextOptions, ContextPack, ContextRequest
from smartctx.live.status import StatusCounts
from smartctx.live.tasks import BackgroundTasks
from smartctx.live.workspace import Folder, Workspace
from smartctx.parsing.languages import is_source
from smartctx.team.reading import TeamBase

REPOSITORY = "example.invalid/first-index"
SOURCE = Path(__file__).resolve().parents[2] / "server" / "smartctx" / "retrieval"
TASK = "pack the bodies of the best definitions within the token budget"
WAIT_S = 60
# A branch's work, not committed: a function added to a file the base holds, and a new file.
BODY_BUDGET = '''

def body_budget(budget_tokens, bodies):
    """The token budget each of the best definitions' bodies gets when packed."""
    return budget_tokens // max(1, len(bodies))
'''
BUDGETS = '''"""Budgets for packing the bodies of the best definitions."""

from retrieval.pack import body_budget


def pack_bodies_within_budget(definitions, budget_tokens):
    """Pack the bodies of the best definitions within the token budget, each its share."""
    share = body_budget(budget_tokens, definitions)
    return [definition for definition in definitions if definition.tokens <= share]
'''


@pytest.fixture
def clone(tmp_path: Path, postgres_url: str) -> Path:
    """A clean clone of a commit that a CI job indexed and published."""
    ci = Repo(tmp_path / "ci")
    for path in sorted(SOURCE.glob("*.py")):
        ci.write(f"retrieval/{path.name}", path.read_text())
    ci.commit("retrieval")
    published = subprocess.run(
        [
            sys.executable, "-m", "smartctx", "index", str(ci.root), "--quiet",
            "--index-dir", str(tmp_path / "ci-index"), "--publish", postgres_url, "--repository", REPOSITORY,
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert published.returncode == 0, published.stderr
    subprocess.run(["git", "clone", "-q", str(ci.root), str(tmp_path / "editor")], check=True)
    return tmp_path / "editor"


@pytest.fixture
def workspace(tmp_path: Path, postgres_url: str) -> Iterator[Workspace]:
    tasks = BackgroundTasks()
    opened = Workspace(
        tmp_path / "indexes",
        lambda uri, counts: None,
        tasks,
        base=TeamBase(postgres_url, REPOSITORY, is_source),
    )
    yield opened
    opened.close()


@pytest.fixture
def statuses() -> list[StatusCounts]:
    """The statuses a base-only workspace reported, in order."""
    return []


@pytest.fixture
def base_only(tmp_path: Path, postgres_url: str, statuses: list[StatusCounts]) -> Iterator[Workspace]:
    """A workspace whose base answers for good (the ``baseIndexOnly`` setting, ``mcp --base-only``)."""
    tasks = BackgroundTasks()
    opened = Workspace(
        tmp_path / "indexes",
        lambda uri, counts: statuses.append(counts),
        tasks,
        base=TeamBase(postgres_url, REPOSITORY, is_source),
        base_only=True,
    )
    yield opened
    opened.close()


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"waited {WAIT_S} s for {what}"
        time.sleep(0.05)


def added(workspace: Workspace, root: Path) -> Folder:
    folder = workspace.add(root.as_uri(), str(root), "editor")
    assert folder is not None
    wait_for(lambda: folder.base is not None, "the folder's base")
    return folder


def ask(workspace: Workspace, folder: Folder) -> ContextPack:
    return workspace.context([folder], [ContextRequest(TASK, ContextOptions())], lambda: False)


def test_the_base_answers_until_the_folder_s_own_index_holds_it(workspace: Workspace, clone: Path) -> None:
    folder = added(workspace, clone)

    # The folder's own index has not started: the base answers.
    from_base = ask(workspace, folder)

    assert from_base.warnings[0].code == "answered-from-base"
    assert "base " in from_base.warnings[0].message and "+ 0 local files" in from_base.warnings[0].message
    assert from_base.bodies

    folder.index.start()
    wait_for(lambda: folder.index.status().state == "ready", "the first index")
    local = ask(workspace, folder)

    assert all(warning.code != "answered-from-base" for warning in local.warnings)
    # The same tree: the same items in the same order, the same text, scores but for float noise.
    assert [body.id for body in local.bodies] == [body.id for body in from_base.bodies]
    assert [summary.id for summary in local.summaries] == [summary.id for summary in from_base.summaries]
    assert local.text == from_base.text
    assert all(
        math.isclose(a.score, b.score, rel_tol=1e-5)
        for a, b in zip(local.bodies, from_base.bodies, strict=True)
    )


def test_an_unsaved_buffer_is_laid_over_the_base_in_the_background(workspace: Workspace, clone: Path) -> None:
    folder = added(workspace, clone)
    path = "retrieval/pack.py"
    first = folder.base
    assert first is not None and "+ 0 local files" in first.stamp

    folder.overlays = {path: (clone / path).read_bytes() + BODY_BUDGET.encode()}
    # The base answers at once, as it was; another overlay, with the buffer, is made meanwhile.
    assert ask(workspace, folder).warnings[0].code == "answered-from-base"
    wait_for(lambda: folder.base is not first and not folder.base_relaying, "the buffer laid over the base")
    pack = ask(workspace, folder)

    assert "+ 1 local file" in pack.warnings[0].message
    names = {item.name for item in (*pack.bodies, *pack.summaries)}
    assert "body_budget" in names


def test_a_folder_s_local_files_are_laid_over_the_base(workspace: Workspace, clone: Path) -> None:
    pack_py = clone / "retrieval" / "pack.py"
    pack_py.write_text(pack_py.read_text() + BODY_BUDGET)
    (clone / "retrieval" / "budgets.py").write_text(BUDGETS)
    folder = added(workspace, clone)

    from_base = ask(workspace, folder)

    assert from_base.warnings[0].code == "answered-from-base"
    assert "+ 2 local files" in from_base.warnings[0].message
    cited = {item.file_path for item in (*from_base.bodies, *from_base.summaries)}
    assert "retrieval/budgets.py" in cited
    folder.index.start()
    wait_for(lambda: folder.index.status().state == "ready", "the first index")
    local = ask(workspace, folder)
    # The same items with the same text; scores within the few per cent that the overlay's estimated
    # PageRank moves them (team/overlay.py).
    assert {body.id for body in local.bodies} == {body.id for body in from_base.bodies}
    assert {summary.id for summary in local.summaries} == {summary.id for summary in from_base.summaries}
    scores = {item.id: item.score for item in (*local.bodies, *local.summaries)}
    assert all(
        math.isclose(item.score, scores[item.id], rel_tol=0.05)
        for item in (*from_base.bodies, *from_base.summaries)
    )


def test_no_base_for_an_unreachable_server(clone: Path) -> None:
    assert TeamBase("postgresql://nobody@127.0.0.1:9/team", REPOSITORY, is_source).cover(clone) is None


def test_with_base_only_the_base_answers_for_good_and_the_folder_is_never_indexed_whole(
    base_only: Workspace, clone: Path, tmp_path: Path, statuses: list[StatusCounts]
) -> None:
    folder = added(base_only, clone)
    base_only.start(folder)

    first = ask(base_only, folder)

    assert first.warnings[0].code == "answered-from-base"
    assert "only the files that differ from it are indexed" in first.warnings[0].message
    status = base_only.status()
    assert status.state == "ready" and status.base is not None and "+ 0 local files" in status.base
    assert statuses and statuses[-1].base == status.base

    # A file changes on disk: the watcher sees it, the next request lays it over the base.
    pack_py = clone / "retrieval" / "pack.py"
    pack_py.write_text(pack_py.read_text() + BODY_BUDGET)
    wait_for(lambda: folder.index.settled_and_changes()[1] > 0, "the watcher to see the change")
    assert ask(base_only, folder).warnings[0].code == "answered-from-base"
    wait_for(
        lambda: folder.base is not None and "+ 1 local file" in folder.base.stamp, "the change laid over"
    )
    pack = ask(base_only, folder)

    assert "+ 1 local file" in pack.warnings[0].message
    assert "body_budget" in {item.name for item in (*pack.bodies, *pack.summaries)}
    # A hover reads the base too, the changed file from the overlay.
    line = pack_py.read_text().splitlines().index("def body_budget(budget_tokens, bodies):") + 1
    hovered = base_only.symbol_at(folder, "retrieval/pack.py", line, "body_budget")
    assert hovered is not None and hovered.name == "body_budget"
    # Re-indexing lays the local files over the base again; the folder is still not indexed whole.
    report = base_only.reindex([folder])[0].result(timeout=WAIT_S)
    assert report is not None and report.files_parsed == 1
    assert folder.index.watching_only and folder.index.status().indexed_files == 0
    assert not any((tmp_path / "indexes").rglob("*.sqlite*"))


def test_with_base_only_a_folder_no_base_answers_for_is_indexed_whole(clone: Path, tmp_path: Path) -> None:
    tasks = BackgroundTasks()
    unreachable = TeamBase("postgresql://nobody@127.0.0.1:9/team", REPOSITORY, is_source)
    workspace = Workspace(
        tmp_path / "indexes", lambda uri, counts: None, tasks, base=unreachable, base_only=True
    )
    try:
        folder = workspace.add(clone.as_uri(), str(clone), "editor")
        assert folder is not None
        workspace.start(folder)
        wait_for(
            lambda: folder.index.status().state == "ready" and folder.index.status().indexed_files > 0,
            "the whole folder's index",
        )
        pack = ask(workspace, folder)
    finally:
        workspace.close()

    assert not folder.index.watching_only
    assert all(warning.code != "answered-from-base" for warning in pack.warnings)
    assert pack.bodies


def test_with_base_only_a_connection_the_server_ended_is_replaced_not_taken_for_a_failed_base(
    base_only: Workspace, clone: Path, postgres_url: str
) -> None:
    folder = added(base_only, clone)
    base_only.start(folder)
    assert ask(base_only, folder).warnings[0].code == "answered-from-base"
    # The server ends the kept idle connections (a restart, idle_session_timeout, a proxy) and
    # stays up.
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    assert ended

    pack = ask(base_only, folder)

    assert pack.warnings[0].code == "answered-from-base" and pack.bodies
    assert folder.index.watching_only and folder.base is not None
