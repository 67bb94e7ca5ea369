"""``smartctx context --base``: answering from a team's published base, in a real PostgreSQL.

The repository is real code: smartctx's own retrieval package, committed into a new git repository,
indexed and published as a CI job would (``smartctx index --publish``). An editor then asks
``smartctx context --base`` with no local index at all, and gets the pack a local index of the same
tree gives; with local files, an unreachable server or nothing published, it says why and answers
from its local index.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from postgres_server import REQUIRE_VARIABLE

if not os.environ.get(REQUIRE_VARIABLE):
    pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")
import psycopg

from gitrepos import Repo
from smartctx.team.database import UPGRADES

REPOSITORY = "example.invalid/retrieval"
# The code the repository holds: a real package of a few thousand lines, in its own folder.
SOURCE = Path(__file__).resolve().parents[2] / "server" / "smartctx" / "retrieval"
TASKS = (
    "pack the bodies of the best definitions within the token budget",
    "diversify the selection so that one file does not take every body",
    "the file map reason should name the editor focus",
    "expand the graph from the search hits to their callers and callees",
    "learned ranking model weights load from rank_model.json",
    "upload the ranking report to the reports database with the client key",
)
# A module holding secrets of the kinds the scanner knows, in a doc, a default argument, an
# assignment and a string: their words are in no index, the local one or the base.
UPLOADS = '''"""Ranking reports, kept in postgres://app:Wombat5Secret9@db.internal/reports."""

CLIENT_SECRET = "Pl4typusQx9Lm2Zt"


def connect(url="postgres://app:Wombat5Secret9@db.internal/reports"):
    return url


def upload_report(report, client="ranking"):
    """Upload the ranking report to the reports database."""
    return send(report, key="AKIAQUOKKAZEBRAXYZ27", client=client)


def send(report, key, client):
    return (report, key, client)
'''
# A branch's additions: a helper appended to a changed file, and a new file that uses both halves.
BUDGET_HELPER = '''

def split_budget(total, bodies_share):
    """Split the token budget between bodies and summaries."""
    bodies = int(total * bodies_share)
    return bodies, total - bodies
'''
BUDGETS = '''"""Token budgets for bodies and summaries, per task."""

from retrieval.pack import split_budget, pack_within_budget


class BudgetPlan:
    """How a task's token budget is split between bodies and summaries."""

    def __init__(self, total):
        self.bodies, self.summaries = split_budget(total, 0.7)

    def pack(self, candidates):
        return pack_within_budget(candidates, self.bodies)
'''
# How far apart a pack's scores and PageRank parts may be when an overlay estimates PageRank
# (team/overlay.py): within 3 % for the branch below, with room to spare.
RANK_TOLERANCE = 0.05
# The pack's fields that tell when and how fast it was made, not what it holds.
VOLATILE = ("timingsMs", "freshness")


def make_repository(root: Path) -> Repo:
    repo = Repo(root)
    for path in sorted(SOURCE.glob("*.py")):
        repo.write(f"retrieval/{path.name}", path.read_text())
    repo.write("retrieval/uploads.py", UPLOADS)
    repo.commit("retrieval")
    return repo


def smartctx(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "smartctx", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def publish(root: Path, index_dir: Path, url: str) -> None:
    result = smartctx(
        "index",
        str(root),
        "--index-dir",
        str(index_dir),
        "--quiet",
        "--publish",
        url,
        "--repository",
        REPOSITORY,
    )
    assert result.returncode == 0, result.stderr


def context(
    root: Path, task: str, index_dir: Path, *args: str
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    result = smartctx(
        "context",
        task,
        "--root",
        str(root),
        "--index-dir",
        str(index_dir),
        "--format",
        "json",
        "--quiet",
        *args,
    )
    assert result.returncode == 0, result.stderr
    pack: dict[str, Any] = json.loads(result.stdout)
    for field in VOLATILE:
        pack["metadata"].pop(field)
    return pack, result


def same_pack(base: Any, local: Any) -> bool:
    """Whether two packs hold the same items in the same order with the same text, their scores
    equal but for the last digits: the local engine sums BM25 in 32-bit floats (tantivy), the base
    in PostgreSQL's 64-bit ones, and a part rounded to six decimals can then differ by one in the
    last."""
    if isinstance(base, float) and isinstance(local, float):
        return math.isclose(base, local, rel_tol=1e-5, abs_tol=1.5e-6)
    if isinstance(base, dict) and isinstance(local, dict):
        return base.keys() == local.keys() and all(same_pack(base[key], local[key]) for key in base)
    if isinstance(base, list) and isinstance(local, list):
        return len(base) == len(local) and all(same_pack(*pair) for pair in zip(base, local, strict=True))
    return bool(base == local)


def assert_equal_but_for_pagerank(pack: dict[str, Any], local: dict[str, Any]) -> None:
    """A pack from an overlay against the local index's for the same tree: the same items with the
    same text, their scores and PageRank parts within RANK_TOLERANCE (an overlay estimates PageRank,
    team/overlay.py), in the same order but where two neighbours' scores are that close, up to the
    budget's edge (``_cut_at_a_near_tie``), but for a definition at the bodies' score floor, a body in
    one and a summary in the other (``_across_the_body_floor``)."""
    lists = ("bodies", "summaries", "fileMap")
    # What follows from which items a pack holds: left out of the comparison once a list parts, as
    # are the warnings about items the two packs do not hold alike.
    following = ("subgraph", "tokensUsed")
    crossed = _across_the_body_floor(pack, local)
    parted = bool(crossed)
    held: list[set[tuple[str, str]]] = [set(), set()]
    for field in lists:
        mine = {item.get("id", item["filePath"]): item for item in pack[field]}
        theirs = {item.get("id", item["filePath"]): item for item in local[field]}
        if field in ("bodies", "summaries"):
            mine = {key: item for key, item in mine.items() if key not in crossed}
            theirs = {key: item for key, item in theirs.items() if key not in crossed}
        cut = _cut_at_a_near_tie(mine, theirs, field)
        parted |= cut < max(len(mine), len(theirs))
        held[0].update((field, key) for key in mine)
        held[1].update((field, key) for key in theirs)
        mine = dict(list(mine.items())[:cut])
        theirs = dict(list(theirs.items())[:cut])
        assert mine.keys() == theirs.keys(), field
        scores = {key: item["score"] for key, item in theirs.items()}
        for key, item in mine.items():
            other = theirs[key]
            assert math.isclose(item.pop("score"), other.pop("score"), rel_tol=RANK_TOLERANCE), key
            ranks = [found.get("scoreParts", {}).pop("pagerank", 0.0) for found in (item, other)]
            assert math.isclose(*ranks, rel_tol=RANK_TOLERANCE, abs_tol=1e-6), key
            assert same_pack(item, other), key
        order, local_order = list(mine), list(theirs)
        index = 0
        while index < len(order):
            if order[index] == local_order[index]:
                index += 1
                continue
            # Two neighbours swapped: only when their scores are within the tolerance.
            pair = order[index : index + 2]
            assert pair == local_order[index : index + 2][::-1], (field, index)
            assert math.isclose(scores[pair[0]], scores[pair[1]], rel_tol=RANK_TOLERANCE), pair
            index += 2
    # The rest of the pack, its warnings (which follow the items' order) in any order.
    both = {key for _, key in held[0] & held[1]} - {key for _, key in held[0] ^ held[1]}
    for found in (pack, local):
        warnings = found["metadata"]["warnings"]
        if parted:
            warnings[:] = [warning for warning in warnings if warning.get("nodeId", "") in both | {""}]
        warnings.sort(key=repr)
    left_out = (*lists, "text", *(following if parted else ()))
    rest = {key: value for key, value in pack.items() if key not in left_out}
    assert same_pack(rest, {key: value for key, value in local.items() if key not in left_out})


def _across_the_body_floor(pack: dict[str, Any], local: dict[str, Any]) -> set[str]:
    """The definitions one pack holds as a body and the other as a summary, scoring within
    RANK_TOLERANCE: they sat at the bodies' score floor, which the last digits of a score moved them
    across. Bodies are grouped by file, so such a body parts the list in its middle, not at its end;
    the two lists are compared without it."""
    crossed: set[str] = set()
    for bodies, summaries in ((pack, local), (local, pack)):
        summarised = {item["id"]: item["score"] for item in summaries["summaries"]}
        for body in bodies["bodies"]:
            other = summarised.get(body["id"])
            if other is not None and math.isclose(body["score"], other, rel_tol=RANK_TOLERANCE):
                crossed.add(body["id"])
    return crossed


def _cut_at_a_near_tie(mine: dict[str, Any], theirs: dict[str, Any], field: str) -> int:
    """How many of a list's first items the two packs must share: all of them, unless at some place
    each holds an item the other lacks and the two score within RANK_TOLERANCE. Such a near tie put
    one item first in one pack and the other in the other; where the budget ends, which later items
    still fit then follows from that order, so what comes after the tie may differ. One list may
    also run longer than the other by items that score no more than its weakest shared one (within
    RANK_TOLERANCE): those sat at a threshold (the bodies' score floor, the budget) that the
    estimated PageRank moved them across."""
    for index, (key, local_key) in enumerate(zip(mine, theirs, strict=False)):
        if key not in theirs or local_key not in mine:
            assert math.isclose(mine[key]["score"], theirs[local_key]["score"], rel_tol=RANK_TOLERANCE), (
                field,
                key,
                local_key,
            )
            return index
    shared = min(len(mine), len(theirs))
    longer = mine if len(mine) > shared else theirs
    weakest = min((item["score"] for item in list(longer.values())[:shared]), default=math.inf)
    for key, item in list(longer.items())[shared:]:
        assert item["score"] <= weakest * (1 + RANK_TOLERANCE), (field, key)
    return shared


def from_base(root: Path, task: str, index_dir: Path, url: str) -> tuple[dict[str, Any], str]:
    pack, result = context(root, task, index_dir, "--base", url, "--repository", REPOSITORY)
    return pack, result.stderr


@pytest.fixture
def published(tmp_path: Path, postgres_url: str) -> Repo:
    """The repository, published by a CI job from its own clone and index; the editor's clone is
    ``tmp_path / "editor"``, with no index of its own."""
    ci = make_repository(tmp_path / "ci")
    publish(ci.root, tmp_path / "ci-index", postgres_url)
    subprocess.run(["git", "clone", "-q", str(ci.root), str(tmp_path / "editor")], check=True)
    return ci


def test_a_clean_checkout_of_the_published_commit_is_answered_from_the_base_as_locally(
    tmp_path: Path, postgres_url: str, published: Repo
) -> None:
    editor = tmp_path / "editor"
    head = published.git("rev-parse", "HEAD")
    editor_index = tmp_path / "editor-index"
    for task in TASKS:
        pack, stderr = from_base(editor, task, editor_index, postgres_url)
        assert f"answered from base {head[:7]} + 0 local files" in stderr
        # The base answered: the editor never indexed.
        assert not editor_index.exists()
        local, _ = context(editor, task, tmp_path / "local-index")
        assert pack["bodies"], task
        assert pack["text"] == local["text"], task
        assert same_pack(pack, local), task


def test_a_read_only_role_is_enough_to_answer_from_the_base(
    tmp_path: Path, postgres_url: str, published: Repo
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("CREATE ROLE editor LOGIN")
        connection.execute("GRANT USAGE ON SCHEMA smartctx TO editor")
        connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA smartctx TO editor")
    reader_url = postgres_url.replace("smartctx_test@", "editor@")
    assert reader_url != postgres_url

    pack, stderr = from_base(tmp_path / "editor", TASKS[0], tmp_path / "editor-index", reader_url)

    assert "answered from base" in stderr
    assert pack["bodies"]
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("DROP OWNED BY editor")
        connection.execute("DROP ROLE editor")


def test_a_branch_is_answered_from_the_base_with_its_files_laid_over_as_locally(
    tmp_path: Path, postgres_url: str, published: Repo
) -> None:
    editor = Repo(tmp_path / "editor")
    head = published.git("rev-parse", "HEAD")
    editor.git("checkout", "-q", "-b", "feature")
    pack_py = editor.root / "retrieval" / "pack.py"
    editor.write(
        "retrieval/pack.py",
        pack_py.read_text().replace("def pack(", "def pack_within_budget(") + BUDGET_HELPER,
    )
    (editor.root / "retrieval" / "breadcrumbs.py").unlink()
    editor.commit("pack: renamed; breadcrumbs: gone")
    # Not committed: a new file, as an editor has it between commits, and a file that is no source.
    editor.write("retrieval/budgets.py", BUDGETS)
    editor.write("retrieval/notes.txt", "not source: changes no answer\n")

    for task in (*TASKS, "split the token budget between bodies and summaries"):
        pack, stderr = from_base(editor.root, task, tmp_path / "editor-index", postgres_url)
        assert f"answered from base {head[:7]} + 3 local files" in stderr, stderr
        assert not (tmp_path / "editor-index").exists()
        local, _ = context(editor.root, task, tmp_path / "local-index")
        assert pack["bodies"], task
        assert_equal_but_for_pagerank(pack, local)
    cited = {item["filePath"] for item in pack["bodies"] + pack["summaries"]}
    assert "retrieval/budgets.py" in cited and "retrieval/breadcrumbs.py" not in cited


def test_more_local_files_than_an_overlay_takes_are_answered_from_the_local_index(
    tmp_path: Path,
    postgres_url: str,
    published: Repo,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from smartctx import cli
    from smartctx.team import reading

    monkeypatch.setattr(reading, "MAX_OVERLAY_FILES", 1)
    editor = tmp_path / "editor"
    for name in ("pack.py", "score.py"):
        (editor / "retrieval" / name).write_text((editor / "retrieval" / name).read_text() + "\n# edited\n")
    arguments = ["context", TASKS[0], "--root", str(editor), "--quiet", "--format", "json"]

    exit_code = cli.main(
        [
            *arguments,
            "--index-dir",
            str(tmp_path / "index"),
            "--base",
            postgres_url,
            "--repository",
            REPOSITORY,
        ]
    )

    assert exit_code == 0
    out, err = capsys.readouterr()
    assert "2 source files that are not base" in err and "more than the 1 an overlay takes" in err
    assert "answering from the local index" in err
    assert json.loads(out)["bodies"]
    assert (tmp_path / "index").exists()


def test_an_unreachable_base_falls_back_at_once(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port once the probe is closed: the connection is refused.
    started = time.monotonic()

    pack, stderr = from_base(
        repo.root, TASKS[0], tmp_path / "index", f"postgresql://nobody@127.0.0.1:{port}/team"
    )

    assert time.monotonic() - started < 60
    assert f"cannot connect to PostgreSQL at nobody@127.0.0.1:{port}/team" in stderr
    assert "answering from the local index" in stderr
    assert pack["bodies"]


def test_a_checkout_no_published_commit_is_an_ancestor_of_falls_back(
    tmp_path: Path, postgres_url: str, published: Repo
) -> None:
    # The same files in a history of its own: its commit is not the published one.
    other = Repo(tmp_path / "unrelated")
    other.write("README.md", "A fork that started over.\n")
    other.commit("a history of its own")
    for path in sorted(SOURCE.glob("*.py")):
        other.write(f"retrieval/{path.name}", path.read_text())
    other.commit("retrieval")

    _, stderr = from_base(other.root, TASKS[0], tmp_path / "index", postgres_url)

    assert "none of the 1 published commits" in stderr and "ancestor of HEAD" in stderr


def test_a_database_of_an_older_schema_is_named_and_the_local_index_answers(
    tmp_path: Path, postgres_url: str, published: Repo
) -> None:
    # The database as a publisher of schema v2 left it: no term lists to search.
    with psycopg.connect(postgres_url, autocommit=True) as database:
        database.execute("DROP TABLE smartctx.symbol_lists, smartctx.file_lists")
        database.execute("UPDATE smartctx.schema_version SET version = 2, digest = %s", (UPGRADES[2][0],))

    pack, stderr = from_base(tmp_path / "editor", TASKS[0], tmp_path / "editor-index", postgres_url)

    assert "holds smartctx schema v2, older than the v3 this smartctx reads" in stderr
    assert "answering from the local index" in stderr
    assert pack["bodies"]


def test_a_damaged_term_list_is_named_and_the_local_index_answers(
    tmp_path: Path, postgres_url: str, published: Repo
) -> None:
    # A list whose ids lost a byte, as a bad restore or a hand edit could leave it.
    with psycopg.connect(postgres_url, autocommit=True) as database:
        damaged = database.execute(
            "UPDATE smartctx.symbol_lists SET ids = substring(ids FROM 2) WHERE term = 'budget'"
        )
        assert damaged.rowcount == 1

    pack, stderr = from_base(tmp_path / "editor", TASKS[0], tmp_path / "editor-index", postgres_url)

    assert "the published list of 'budget' in smartctx.symbol_lists is damaged" in stderr, stderr
    assert "answering from the local index" in stderr
    local, _ = context(tmp_path / "editor", TASKS[0], tmp_path / "local-index")
    assert pack["bodies"] and same_pack(pack, local)


def test_nothing_published_and_a_bad_url_are_told_apart(tmp_path: Path, postgres_url: str) -> None:
    repo = make_repository(tmp_path / "repo")

    _, stderr = from_base(repo.root, TASKS[0], tmp_path / "index", postgres_url)
    assert f"nothing of {REPOSITORY} is published" in stderr

    result = smartctx("context", TASKS[0], "--root", str(repo.root), "--base", "mysql://team")
    assert result.returncode != 0
    assert "is not a PostgreSQL URL" in result.stderr
    shutil.rmtree(tmp_path / "index", ignore_errors=True)


def test_the_mcp_server_refuses_a_base_that_is_no_postgresql_url(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "repo")

    bad_url = smartctx("mcp", "--root", str(repo.root), "--base", "mysql://team", timeout=60)
    lone_name = smartctx("mcp", "--root", str(repo.root), "--repository", REPOSITORY, timeout=60)
    lone_only = smartctx("mcp", "--root", str(repo.root), "--base-only", timeout=60)

    assert bad_url.returncode != 0 and "is not a PostgreSQL URL" in bad_url.stderr
    assert lone_name.returncode != 0 and "--repository goes with --base URL" in lone_name.stderr
    assert lone_only.returncode != 0 and "--base-only goes with --base URL" in lone_only.stderr
