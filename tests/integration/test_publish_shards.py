"""``smartctx index --publish URL --shard I/N`` and ``--finish``: a commit published by N jobs.

The repository is real code (smartctx's own retrieval package, committed into a new git
repository). The same commit is published in one process under one name and in three shards,
written side by side by three processes, then finished, under another; every table of the two must
hold the same rows once each id is replaced by what it stands for. The other tests are what a CI
matrix meets: a finish before every shard is written, a job run twice, jobs that disagree on N, a
job killed mid-write.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from postgres_server import REQUIRE_VARIABLE

if not os.environ.get(REQUIRE_VARIABLE):
    pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")
import psycopg
from psycopg.rows import TupleRow
from test_publish import WAIT_S, complete_commits, publisher_sessions, wait_for

from gitrepos import Repo
from published_postings import postings
from smartctx import cli
from smartctx.team import finish as finish_module

SOURCE = Path(__file__).resolve().parents[2] / "server" / "smartctx" / "retrieval"
WHOLE = "example.invalid/whole"
SHARDED = "example.invalid/sharded"
Database = psycopg.Connection[TupleRow]


def make_repository(root: Path) -> Repo:
    """The package as a repository of its own, its imports of itself named as from its top folder,
    so that they resolve (to other shards' files, often)."""
    repo = Repo(root)
    for path in sorted(SOURCE.glob("*.py")):
        repo.write(f"retrieval/{path.name}", path.read_text().replace("smartctx.retrieval", "retrieval"))
    repo.commit("retrieval")
    return repo


def index_command(root: Path, url: str, repository: str, *args: str) -> list[str]:
    return [
        sys.executable, "-m", "smartctx", "index", str(root), "--quiet", "--publish", url,
        "--repository", repository, *args,
    ]  # fmt: skip


def publish(root: Path, url: str, repository: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        index_command(root, url, repository, *args), capture_output=True, text=True, timeout=180, check=False
    )


def files_written(output: str) -> int:
    """The files a shard says it wrote."""
    match = re.search(r"([\d,]+) files", output)
    assert match is not None, output
    return int(match[1].replace(",", ""))


@pytest.fixture
def database(postgres_url: str) -> Iterator[Database]:
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        yield connection


def published_rows(database: Database, repository: str) -> dict[str, Any]:
    """Every row of the repository's one commit, each id replaced by what it stands for: a file by
    its path, a definition by its path, kind, qualified name and lines, a reference by where it is
    and what it names."""

    def rows(query: str) -> list[tuple[Any, ...]]:
        return database.execute(
            f"SELECT * FROM ({query}) q WHERE commit_id = (SELECT c.id FROM smartctx.commits c JOIN"
            " smartctx.repositories r ON r.id = c.repository_id WHERE r.identity = %s)".encode(),
            (repository,),
        ).fetchall()

    paths = {file_id: path for _, file_id, path, *_ in rows("SELECT * FROM smartctx.files")}
    nodes = rows("SELECT * FROM smartctx.nodes")
    node_names = {row[1]: (paths[row[2]], row[4], row[6], row[7], row[8]) for row in nodes}
    assert len(set(node_names.values())) == len(node_names), "a definition's name must say which it is"
    refs = rows("SELECT * FROM smartctx.refs")
    ref_names = {row[1]: (paths[row[2]], node_names[row[3]], *row[4:]) for row in refs}

    def node(node_id: int | None) -> object:
        return None if node_id is None else node_names[node_id]

    return {
        "files": sorted((path, *rest) for _, _, path, *rest in rows("SELECT * FROM smartctx.files")),
        "nodes": sorted((node_names[row[1]], paths[row[2]], node(row[3]), *row[4:]) for row in nodes),
        "refs": Counter(ref_names.values()),
        "edges": Counter(
            (node(src), node(dst), kind, round(confidence, 12), None if ref is None else ref_names[ref])
            for _, src, dst, kind, confidence, ref in rows("SELECT * FROM smartctx.edges")
        ),
        "folded": Counter(
            (paths[file_id], node(holder), name, line)
            for _, file_id, holder, name, line in rows("SELECT * FROM smartctx.folded")
        ),
        "scores": {
            node_names[node_id]: (pagerank, usage)
            for _, node_id, pagerank, usage in rows("SELECT * FROM smartctx.scores")
        },
        "symbol_postings": Counter(
            (term, node_names[node_id], frequency, norm)
            for _, term, node_id, frequency, norm in rows(postings("symbol"))
        ),
        "symbol_lengths": Counter(
            (node_names[node_id], length)
            for _, node_id, length in rows("SELECT * FROM smartctx.symbol_lengths")
        ),
        "file_postings": Counter(
            (term, paths[file_id], frequency, norm)
            for _, term, file_id, frequency, norm in rows(postings("file"))
        ),
        "file_lengths": Counter(
            (paths[file_id], length) for _, file_id, length in rows("SELECT * FROM smartctx.file_lengths")
        ),
    }


@pytest.mark.parametrize(("count", "files_per_step"), [(3, None), (1, None), (3, 2)])
def test_a_commit_published_in_shards_holds_what_one_process_publishes(
    tmp_path: Path,
    postgres_url: str,
    database: Database,
    count: int,
    files_per_step: int | None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With ``files_per_step`` the finish runs here, resolving that many files at a time and keeping
    the pools of names with two definitions or more from one step to the next, as it does a large
    repository's."""
    repo = make_repository(tmp_path / "repo")
    whole = publish(repo.root, postgres_url, WHOLE, "--index-dir", str(tmp_path / "index"))
    assert whole.returncode == 0, whole.stderr
    # The shards write side by side, as the jobs of a CI matrix do.
    jobs = [
        subprocess.Popen(
            index_command(repo.root, postgres_url, SHARDED, "--shard", f"{number}/{count}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for number in range(1, count + 1)
    ]
    outputs = [job.communicate(timeout=180) for job in jobs]
    assert [job.returncode for job in jobs] == [0] * count, [error for _, error in outputs]
    assert complete_commits(database) == [repo.git("rev-parse", "HEAD")], "shards alone are not visible"
    files = [files_written(out) for out, _ in outputs]
    assert all(files) and sum(files) == len(list(SOURCE.glob("*.py"))), outputs

    if files_per_step is None:
        finished = publish(repo.root, postgres_url, SHARDED, "--finish")
        assert finished.returncode == 0, finished.stderr
        output = finished.stdout
    else:
        monkeypatch.setattr(finish_module, "REFERENCE_FILES_PER_STEP", files_per_step)
        monkeypatch.setattr(finish_module, "POOLS_KEPT_FROM", 2)
        capsys.readouterr()
        assert cli.main(index_command(repo.root, postgres_url, SHARDED, "--finish")[3:]) == 0
        output = capsys.readouterr().out

    assert f"published  commit {repo.git('rev-parse', 'HEAD')[:12]} of {SHARDED}" in output
    expected = published_rows(database, WHOLE)
    found = published_rows(database, SHARDED)
    for table in ("files", "nodes", "refs", "edges", "folded", "symbol_postings", "symbol_lengths"):
        assert found[table] == expected[table], table
    assert found["file_postings"] == expected["file_postings"]
    assert found["file_lengths"] == expected["file_lengths"]
    assert found["scores"].keys() == expected["scores"].keys()
    for name, (pagerank, usage) in expected["scores"].items():
        assert math.isclose(found["scores"][name][0], pagerank, rel_tol=1e-9), name
        assert math.isclose(found["scores"][name][1], usage, rel_tol=1e-12), name
    resolved = Counter(edge[2] for edge in expected["edges"].elements() if edge[4] is not None)
    assert resolved["imports"] > 50 and resolved["calls"] > 100, resolved


def test_a_finish_before_every_shard_is_written_names_them_and_shows_nothing(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_repository(tmp_path / "repo")
    nothing = publish(repo.root, postgres_url, SHARDED, "--finish")
    assert nothing.returncode == 1
    assert "no shard of commit" in nothing.stderr and "--shard I/N" in nothing.stderr

    assert publish(repo.root, postgres_url, SHARDED, "--shard", "2/4").returncode == 0
    early = publish(repo.root, postgres_url, SHARDED, "--finish")

    assert early.returncode == 1
    assert "3 shards (1/4, 3/4, 4/4) are not written yet" in early.stderr
    assert complete_commits(database) == []


def test_a_shard_written_again_writes_nothing_and_jobs_must_agree_on_n(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_repository(tmp_path / "repo")
    first = publish(repo.root, postgres_url, SHARDED, "--shard", "1/2")
    assert first.returncode == 0, first.stderr
    assert "1 of 2 shards written; 1 to go, then --finish" in first.stdout
    nodes = database.execute("SELECT count(*) FROM smartctx.nodes").fetchone()

    again = publish(repo.root, postgres_url, SHARDED, "--shard", "1/2")
    other_n = publish(repo.root, postgres_url, SHARDED, "--shard", "1/3")

    assert again.returncode == 0 and "already; nothing written" in again.stdout
    assert database.execute("SELECT count(*) FROM smartctx.nodes").fetchone() == nodes
    assert other_n.returncode == 1
    assert "is being published in 2 shards, not 3" in other_n.stderr
    # Publishing in one process replaces the shards written so far.
    whole = publish(repo.root, postgres_url, SHARDED)
    assert whole.returncode == 0, whole.stderr
    assert complete_commits(database) == [repo.git("rev-parse", "HEAD")]
    assert database.execute("SELECT count(*) FROM smartctx.shards").fetchone() == (0,)
    late = publish(repo.root, postgres_url, SHARDED, "--shard", "2/2")
    assert late.returncode == 0 and "already; nothing written" in late.stdout


def kill_while_blocked(postgres_url: str, database: Database, table: str, command: list[str]) -> None:
    """Run ``command`` while ``table`` is locked, and kill it once it waits for the lock; return when
    its session has ended."""
    with psycopg.connect(postgres_url) as blocker:
        blocker.execute(f"LOCK TABLE smartctx.{table} IN ACCESS EXCLUSIVE MODE".encode())
        job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: publisher_sessions(database, waiting=True) > 0, f"{command[-1]} to block")
        finally:
            os.kill(job.pid, signal.SIGKILL)
            job.wait(timeout=WAIT_S)
        blocker.rollback()
    wait_for(lambda: publisher_sessions(database, waiting=False) == 0, "the killed session to end")


def test_a_killed_shard_or_finish_leaves_nothing_that_the_next_run_adds_to(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_repository(tmp_path / "repo")
    assert publish(repo.root, postgres_url, SHARDED, "--shard", "1/2").returncode == 0
    written = database.execute("SELECT count(*) FROM smartctx.nodes").fetchone()
    # The definitions' table is locked while the second shard copies into it: it has written its
    # files when it blocks there, and is killed.
    kill_while_blocked(
        postgres_url, database, "nodes", index_command(repo.root, postgres_url, SHARDED, "--shard", "2/2")
    )
    assert database.execute("SELECT count(*) FROM smartctx.nodes").fetchone() == written
    assert database.execute("SELECT shard FROM smartctx.shards").fetchall() == [(0,)]

    rerun = publish(repo.root, postgres_url, SHARDED, "--shard", "2/2")
    assert rerun.returncode == 0, rerun.stderr
    assert "2 of 2 shards written; now run --finish" in rerun.stdout
    # A finish killed after it wrote the edges and scores, before the commit was complete: it blocks
    # on a table it only counts then.
    kill_while_blocked(
        postgres_url, database, "file_lengths", index_command(repo.root, postgres_url, SHARDED, "--finish")
    )
    assert complete_commits(database) == []

    finished = publish(repo.root, postgres_url, SHARDED, "--finish")
    whole = publish(repo.root, postgres_url, WHOLE)

    assert finished.returncode == 0, finished.stderr
    assert whole.returncode == 0, whole.stderr
    expected, found = published_rows(database, WHOLE), published_rows(database, SHARDED)
    assert found["edges"] == expected["edges"]
    assert found["scores"].keys() == expected["scores"].keys()
