"""Lexical search over a published commit (team/lexical.py) answers as the local index does.

A real git repository is indexed and published into the session's throw-away PostgreSQL
(tests/postgres_server.py) by ``smartctx index --publish``, as CI publishes; every search is then asked
of the local snapshot (tantivy) and of PostgreSQL, and the answers compared: the same hits in the
same order, with the same scores to tantivy's 32-bit precision.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

import pytest

from postgres_server import REQUIRE_VARIABLE, PostgresServer

if not os.environ.get(REQUIRE_VARIABLE):
    pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")
import psycopg
from psycopg.rows import TupleRow

from gitrepos import Repo
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.snapshot import IndexSnapshot
from smartctx.team.lexical import (
    SearchedCommit,
    document_counts,
    search_files,
    search_symbols,
    searched_commit,
)
from smartctx.team.postings import norm
from smartctx.team.publish import SEARCH_TABLES

REPOSITORY = "example.invalid/kennel"
# The module's own database on the session's server (conftest.py numbers the per-test ones).
DATABASE = "team_search"
# Scores agree to tantivy's 32-bit floats, about seven significant digits.
SCORE_TOLERANCE = 1e-6
LIMIT = 20
KENNEL = {
    "kennel/dogs.py": (
        "class Dog:\n"
        '    """A dog of the kennel, fed twice a day."""\n'
        "\n"
        "    def __init__(self, name, breed):\n"
        "        self.name = name\n"
        "        self.breed = breed\n"
        "\n"
        "    def feed(self, bowl):\n"
        "        bowl.fill(self.breed.ration)\n"
        "        return bowl\n"
        "\n"
        "    def walk(self, lead, minutes):\n"
        "        lead.attach(self)\n"
        "        return minutes * self.breed.pace\n"
    ),
    "kennel/breeds.py": (
        "class Breed:\n"
        "    def __init__(self, ration, pace):\n"
        "        self.ration = ration\n"
        "        self.pace = pace\n"
        "\n"
        "\n"
        "def terrier():\n"
        "    return Breed(ration=2, pace=3)\n"
        "\n"
        "\n"
        "def collie():\n"
        "    return Breed(ration=3, pace=5)\n"
    ),
    "kennel/feeding.py": (
        "from kennel.dogs import Dog\n"
        "\n"
        "\n"
        "def feed_all(dogs, bowls):\n"
        '    """Feed every dog from its own bowl."""\n'
        "    for dog, bowl in zip(dogs, bowls):\n"
        "        dog.feed(bowl)\n"
        "\n"
        "\n"
        "def hungry(dogs, fed):\n"
        "    return [dog for dog in dogs if dog.name not in fed]\n"
    ),
    "kennel/schedule.py": (
        "def daily_walks(dogs, lead):\n"
        "    return sum(dog.walk(lead, 30) for dog in dogs)\n"
        "\n"
        "\n"
        "def feeding_times(kennel_size):\n"
        "    return [8, 18] if kennel_size < 20 else [7, 12, 18]\n"
    ),
}
# Definitions that each hold "zebra" once, with bodies of different lengths: past 40 words tantivy
# keeps a length in a bucket, so two of them whose lengths share a bucket score the same and are
# ordered by id, where their exact lengths would put the shorter one first.
LONG_DEFINITIONS = 40
FIRST_FILLER_WORDS = 150


def long_definitions() -> str:
    # The longest first, so that in a tie the lower id is the longer definition.
    definitions = []
    for number in range(LONG_DEFINITIONS):
        filler = ", ".join(["mane"] * (FIRST_FILLER_WORDS - 3 * number))
        definitions.append(f"def stripes_{number:02d}():\n    zebra = 1\n    return [{filler}]\n")
    return "\n\n".join(definitions)


@dataclass(frozen=True)
class Published:
    snapshot: IndexSnapshot
    connection: psycopg.Connection[TupleRow]
    commit: SearchedCommit


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, postgres: PostgresServer) -> Iterator[Published]:
    """The kennel indexed and published once for the module's tests, which only read it, into a
    database of its own on the session's server."""
    folder = tmp_path_factory.mktemp("published")
    repo = Repo(folder / "kennel")
    for path, text in KENNEL.items():
        repo.write(path, text)
    repo.write("kennel/stripes.py", long_definitions())
    head = repo.commit("a kennel")
    index_dir = folder / "index"
    with psycopg.connect(postgres.url(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE}")
    try:
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "smartctx",
                "index",
                str(repo.root),
                "--index-dir",
                str(index_dir),
                "--quiet",
                "--publish",
                postgres.url(DATABASE),
                "--repository",
                REPOSITORY,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            # The isolated cache folder of conftest.py is per test; this runs before any test.
            env={**os.environ, "SMARTCTX_CACHE_DIR": str(folder / "cache")},
        )
        assert completed.returncode == 0, completed.stderr
        with (
            psycopg.connect(postgres.url(DATABASE), autocommit=True) as connection,
            IndexSnapshot(index_dir / INDEX_FILE_NAME) as snapshot,
        ):
            row = connection.execute("SELECT id FROM smartctx.commits WHERE sha = %s", (head,)).fetchone()
            assert row is not None
            yield Published(snapshot, connection, searched_commit(connection, int(row[0])))
    finally:
        with psycopg.connect(postgres.url(), autocommit=True) as connection:
            connection.execute(f"DROP DATABASE {DATABASE} WITH (FORCE)")


QUERIES = {
    "weighted terms": {"feed": 3, "bowl": 2, "dog": 1},
    "one rare term": {"collie": 1},
    "a term in most definitions": {"self": 1},
    "a common term beside a rare one": {"self": 1, "pace": 4},
    "an absent term beside present ones": {"giraffe": 5, "walk": 2, "lead": 1},
    "only an absent term": {"giraffe": 1},
    "the long definitions": {"zebra": 1, "mane": 1},
}


@pytest.mark.parametrize("terms", QUERIES.values(), ids=QUERIES.keys())
def test_definitions_rank_as_the_local_index_ranks_them(published: Published, terms: dict[str, int]) -> None:
    local = published.snapshot.search(terms, LIMIT)
    found = search_symbols(published.connection, published.commit, terms, LIMIT)

    assert [row_id for row_id, _ in found] == [hit.node_id for hit in local]
    assert [score for _, score in found] == pytest.approx([hit.bm25 for hit in local], rel=SCORE_TOLERANCE)
    assert bool(found) == ("giraffe" not in terms or len(terms) > 1)


@pytest.mark.parametrize("terms", QUERIES.values(), ids=QUERIES.keys())
def test_files_rank_as_the_local_index_ranks_them(published: Published, terms: dict[str, int]) -> None:
    paths = dict(
        published.connection.execute(
            "SELECT file_id, path FROM smartctx.files WHERE commit_id = %s", (published.commit.commit_id,)
        ).fetchall()
    )
    local = published.snapshot.search_files(terms, LIMIT)
    found = search_files(published.connection, published.commit, terms, LIMIT)

    # The local snapshot orders equal scores by path; ids and paths rank alike here.
    assert [str(paths[file_id]) for file_id, _ in found] == [path for path, _ in local]
    assert [score for _, score in found] == pytest.approx([score for _, score in local], rel=SCORE_TOLERANCE)


def test_document_counts_are_the_local_index_counts(published: Published) -> None:
    terms = ["self", "dog", "collie", "zebra", "giraffe"]
    for at_most in (1, 3, 1000):
        assert document_counts(
            published.connection, published.commit, terms, at_most
        ) == published.snapshot.document_counts(terms, at_most)


def test_long_definitions_are_scored_by_their_length_bucket(published: Published) -> None:
    terms = {"zebra": 1}
    local = published.snapshot.search(terms, LONG_DEFINITIONS)
    found = search_symbols(published.connection, published.commit, terms, LONG_DEFINITIONS)
    lengths = dict(
        published.connection.execute(
            "SELECT node_id, length FROM smartctx.symbol_lengths WHERE commit_id = %s",
            (published.commit.commit_id,),
        ).fetchall()
    )
    ranked = [row_id for row_id, _ in found]
    # The case is the one asked for: hits of different lengths in one bucket, tied at the local index
    # and ordered by id, which their exact lengths would order the other way.
    tied = [
        (first, second)
        for first, second in pairwise(local)
        if first.bm25 == second.bm25
        and lengths[first.node_id] > lengths[second.node_id]
        and norm(lengths[first.node_id]) == norm(lengths[second.node_id])
    ]
    assert tied
    assert ranked != sorted(ranked, key=lambda row_id: (lengths[row_id], row_id))

    assert ranked == [hit.node_id for hit in local]
    assert [score for _, score in found] == pytest.approx([hit.bm25 for hit in local], rel=SCORE_TOLERANCE)


def test_a_published_commit_is_searched_from_vacuumed_tables(published: Published) -> None:
    # A search reads the postings' key alone only on pages VACUUM marked all-visible (team/publish.py).
    for table in SEARCH_TABLES:
        row = published.connection.execute(
            "SELECT relpages, relallvisible FROM pg_class WHERE oid = %s::regclass", (f"smartctx.{table}",)
        ).fetchone()
        assert row is not None
        pages, all_visible = row
        assert pages > 0 and all_visible == pages, table
