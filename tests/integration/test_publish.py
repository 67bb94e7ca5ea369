"""``smartctx index --publish``: a real git repository published into a real PostgreSQL.

The server is the session's throw-away one (tests/postgres_server.py), with a new database per test;
publishing runs as a user runs it, as a ``smartctx`` process, except where a test needs to break it
from inside.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from postgres_server import REQUIRE_VARIABLE, SUPERUSER

if not os.environ.get(REQUIRE_VARIABLE):
    # A .venv installed before the driver was a dev dependency skips these tests, saying why; CI,
    # which requires them, fails on the import below instead.
    pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")
import psycopg
from psycopg.rows import TupleRow

from gitrepos import Repo
from published_postings import postings
from smartctx.core.identifiers import search_words
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.export import IndexExport, SearchWordsRecord
from smartctx.store.lexical import symbol_text
from smartctx.store.snapshot import IndexSnapshot
from smartctx.team.database import UPGRADES, connect, parse_url
from smartctx.team.postings import document, symbol_documents
from smartctx.team.publish import COMMIT_TABLES, publish

REPOSITORY = "example.invalid/shop"
# Lines of function bodies: code that must never reach the database.
BODY_LINE = "subtotal = sum(line.price for line in self.lines)"
BODY_STRING = "quokka-voucher-7731"
SHOP = {
    "app/models.py": (
        "class Order:\n"
        '    """An order of the shop."""\n'
        "\n"
        "    def __init__(self, lines):\n"
        "        self.lines = lines\n"
        "\n"
        "    def total(self):\n"
        f"        {BODY_LINE}\n"
        f'        return apply_discount(subtotal, "{BODY_STRING}")\n'
    ),
    "app/pricing.py": (
        "def apply_discount(amount, code):\n"
        '    rate = 0.9 if code.startswith("quokka") else 1.0\n'
        "    return round(amount * rate, 2)\n"
    ),
    "app/checkout.py": (
        "from app.models import Order\n"
        "from app.pricing import apply_discount\n"
        "\n"
        "\n"
        "def checkout(lines):\n"
        "    order = Order(lines)\n"
        "    return order.total()\n"
    ),
}
Database = psycopg.Connection[TupleRow]
# How long a test waits for a process or the server to reach a state before failing.
WAIT_S = 60


def make_shop(root: Path) -> Repo:
    """The shop in two commits: the models and pricing, then checkout."""
    repo = Repo(root)
    for path in ("app/models.py", "app/pricing.py"):
        repo.write(path, SHOP[path])
    repo.commit("models and pricing")
    repo.write("app/checkout.py", SHOP["app/checkout.py"])
    repo.commit("checkout")
    return repo


def run_index(
    root: Path, index_dir: Path, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    arguments = ["index", str(root), "--index-dir", str(index_dir), "--quiet", *args]
    return subprocess.run(
        [sys.executable, "-m", "smartctx", *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_publish(
    root: Path, index_dir: Path, url: str, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return run_index(root, index_dir, "--publish", url, "--repository", REPOSITORY, *args, timeout=timeout)


@pytest.fixture
def database(postgres_url: str) -> Iterator[Database]:
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        yield connection


def complete_commits(database: Database) -> list[str]:
    """The published commits a reader sees, newest first."""
    return [
        str(sha)
        for (sha,) in database.execute(
            "SELECT sha FROM smartctx.commits WHERE complete ORDER BY completed_at DESC"
        ).fetchall()
    ]


def scalar(database: Database, query: str, *parameters: object) -> int:
    row = database.execute(query.encode(), parameters).fetchone()
    assert row is not None
    return int(row[0])


def commit_id(database: Database, sha: str) -> int:
    return scalar(database, "SELECT id FROM smartctx.commits WHERE sha = %s", sha)


def rows_per_table(database: Database, commit: int) -> dict[str, int]:
    return {
        table: scalar(database, f"SELECT count(*) FROM smartctx.{table} WHERE commit_id = %s", commit)
        for table in COMMIT_TABLES
    }


def postings_of(database: Database, kind: str) -> set[tuple[object, ...]]:
    return {tuple(row) for row in database.execute(postings(kind)).fetchall()}


def rows_of_other_commits(database: Database, kept: list[int]) -> int:
    return sum(
        scalar(database, f"SELECT count(*) FROM smartctx.{table} WHERE NOT commit_id = ANY(%s)", kept)
        for table in COMMIT_TABLES
    )


def local_counts(index_dir: Path) -> tuple[int, int, int]:
    """Files, definitions and edges of the local index."""
    with IndexSnapshot(index_dir / INDEX_FILE_NAME) as snapshot:
        stats = snapshot.stats()
    return stats.files, stats.nodes, stats.edges


def test_publish_writes_the_commit_index_and_no_source_text(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_shop(tmp_path / "shop")
    head = repo.git("rev-parse", "HEAD")

    result = run_publish(repo.root, tmp_path / "index", postgres_url)

    assert result.returncode == 0, result.stderr
    assert f"published  commit {head[:12]} of {REPOSITORY}" in result.stdout
    assert complete_commits(database) == [head]
    published = rows_per_table(database, commit_id(database, head))
    files, nodes, edges = local_counts(tmp_path / "index")
    assert (published["files"], published["nodes"], published["edges"]) == (files, nodes, edges)
    assert files == 3 and nodes > 3 and edges > 0
    assert published["symbol_lengths"] == nodes and published["file_lengths"] == files
    # A term's list is one row: its documents, each once, as many as the row says.
    for kind in ("symbol", "file"):
        terms = scalar(database, f"SELECT count(DISTINCT term) FROM ({postings(kind)}) p")
        assert published[f"{kind}_lists"] == terms > 0
        id_column = "node_id" if kind == "symbol" else "file_id"
        counted = database.execute(
            f"SELECT l.documents, (SELECT count(DISTINCT p.{id_column}) FROM ({postings(kind)}) p"
            f" WHERE p.term = l.term) FROM smartctx.{kind}_lists l"
        ).fetchall()
        assert all(documents == distinct for documents, distinct in counted)
    hashes = dict(database.execute("SELECT path, content_hash FROM smartctx.files").fetchall())
    with IndexExport(tmp_path / "index" / INDEX_FILE_NAME) as export:
        assert hashes == {record.path: record.content_hash for record in export.files()}
    # A definition's name counts ten times in its own search words, as in the local engine.
    discount = database.execute(
        f"SELECT p.frequency FROM ({postings('symbol')}) p JOIN smartctx.nodes n"
        " ON n.commit_id = p.commit_id AND n.node_id = p.node_id"
        " WHERE n.name = 'apply_discount' AND p.term = 'discount'"
    ).fetchone()
    assert discount is not None and discount[0] >= 10
    tables = [
        str(name)
        for (name,) in database.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'smartctx'"
        ).fetchall()
    ]
    assert set(COMMIT_TABLES) <= set(tables)
    for table in tables:
        for text in (BODY_LINE, BODY_STRING, "round(amount * rate"):
            found = scalar(
                database, f"SELECT count(*) FROM smartctx.{table} AS r WHERE r::text LIKE %s", f"%{text}%"
            )
            assert found == 0, f"{table} holds source text {text!r}"


# Planted secrets of the kinds the scanner knows (tests/unit/test_redact.py): a password in a URL in
# a docstring and in a default argument, a secret-named assignment, an AWS-style key in a string.
PASSWORD_URL = "postgres://app:Wombat5Secret9@db.internal/app"
CLIENT_SECRET = "Pl4typusQx9Lm2Zt"
AWS_KEY = "AKIAQUOKKAZEBRAXYZ27"
LEDGER = (
    f'"""The ledger, kept in {PASSWORD_URL}."""\n'
    "\n"
    f'CLIENT_SECRET = "{CLIENT_SECRET}"\n'
    "\n"
    "\n"
    f'def connect(url="{PASSWORD_URL}"):\n'
    "    return url\n"
    "\n"
    "\n"
    "def upload(report):\n"
    f'    """Send the report to {PASSWORD_URL}."""\n'
    f'    return send(report, key="{AWS_KEY}", region="eu-west-1")\n'
    "\n"
    "\n"
    "def send(report, key, region):\n"
    "    return (report, key, region)\n"
)
# What of each secret could be recognised in a column or a term, whole or in pieces.
SECRET_PIECES = ("wombat", "pl4typus", "typus", "qx9lm", "quokkazebra", "akiaquokka")


def test_published_text_and_terms_hold_no_secret(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = Repo(tmp_path / "ledger")
    repo.write("app/ledger.py", LEDGER)
    repo.commit("ledger")

    result = run_publish(repo.root, tmp_path / "index", postgres_url)

    assert result.returncode == 0, result.stderr
    text_columns = database.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'smartctx'"
        " AND data_type IN ('text', 'character varying')"
    ).fetchall()
    assert ("symbol_lists", "term") in text_columns and ("nodes", "doc") in text_columns
    for table, column in text_columns:
        for piece in SECRET_PIECES:
            found = scalar(
                database, f"SELECT count(*) FROM smartctx.{table} WHERE {column} ILIKE %s", f"%{piece}%"
            )
            assert found == 0, f"smartctx.{table}.{column} holds {piece!r} of a planted secret"
    names = {str(name) for (name,) in database.execute("SELECT name FROM smartctx.nodes").fetchall()}
    assert {"connect", "upload", "send"} <= names
    docs = dict(database.execute("SELECT name, doc FROM smartctx.nodes").fetchall())
    assert docs["upload"] == "Send the report to postgres://app:[REDACTED]@db.internal/app."
    # A body's terms and weights are the local engine's, which are those of its text as written
    # less the secrets' words alone.
    upload_id, upload_length = database.execute(
        "SELECT n.node_id, l.length FROM smartctx.nodes n JOIN smartctx.symbol_lengths l"
        " ON l.commit_id = n.commit_id AND l.node_id = n.node_id WHERE n.name = 'upload'"
    ).fetchone() or (None, None)
    published = Counter(
        dict(
            database.execute(
                f"SELECT term, frequency FROM ({postings('symbol')}) p WHERE node_id = %s", (upload_id,)
            ).fetchall()
        )
    )
    with IndexExport(tmp_path / "index" / INDEX_FILE_NAME) as export:
        record = next(record for record in export.search_words() if upload_id in record.node_ids)
        node = next(node for node in export.nodes() if node.node_id == upload_id)
    local = dict(symbol_documents(record))[upload_id]
    body = "".join(LEDGER.splitlines(keepends=True)[node.start_line - 1 : node.end_line])
    texts = (node.name, node.qualified_name, node.signature, node.doc, body)
    written = document(symbol_text(tuple(search_words(text) for text in texts), record.path_words))
    # The password's words twice (the doc, and the docstring's line in the body), the key's once.
    secret_words = Counter({"wombat5secret9": 2, "wombat": 2, "5": 2, "secret": 2, "9": 2})
    secret_words += Counter({"akiaquokkazebraxyz27": 1, "akiaquokkazebraxyz": 1, "27": 1})
    assert Counter(local.frequencies) == Counter(written.frequencies) - secret_words
    assert published == Counter(local.frequencies)
    assert upload_length == local.length == written.length - secret_words.total()
    assert published["region"] == 1 and published["upload"] >= 10


def test_publishing_a_commit_again_writes_nothing(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_shop(tmp_path / "shop")
    head = repo.git("rev-parse", "HEAD")
    assert run_publish(repo.root, tmp_path / "index", postgres_url).returncode == 0
    first_id = commit_id(database, head)
    first_rows = rows_per_table(database, first_id)

    again = run_publish(repo.root, tmp_path / "index", postgres_url)

    assert again.returncode == 0, again.stderr
    assert "already; nothing written" in again.stdout
    assert complete_commits(database) == [head]
    assert commit_id(database, head) == first_id
    assert rows_per_table(database, first_id) == first_rows


class _ExportThatFails(IndexExport):
    """A local index whose reading fails partway through the search words, as a full disk would."""

    def search_words(self) -> Iterator[SearchWordsRecord]:
        records = super().search_words()
        yield next(records)
        raise OSError("the disk went away")


def test_a_publish_that_fails_partway_leaves_no_visible_commit(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_shop(tmp_path / "shop")
    head = repo.git("rev-parse", "HEAD")
    assert run_index(repo.root, tmp_path / "index").returncode == 0
    address = parse_url(postgres_url)
    with (
        connect(address) as connection,
        _ExportThatFails(tmp_path / "index" / INDEX_FILE_NAME) as export,
        pytest.raises(OSError, match="disk went away"),
    ):
        publish(
            connection,
            address,
            export,
            repository=REPOSITORY,
            commit=head,
            keep=5,
            smartctx_version="t",
        )
    abandoned = commit_id(database, head)
    assert complete_commits(database) == []
    assert rows_per_table(database, abandoned)["nodes"] > 0, (
        "the rows written before the failure stay, unseen"
    )

    result = run_publish(repo.root, tmp_path / "index", postgres_url)

    assert result.returncode == 0, result.stderr
    assert complete_commits(database) == [head]
    replaced = commit_id(database, head)
    assert rows_per_table(database, replaced)["nodes"] == local_counts(tmp_path / "index")[1]
    assert rows_of_other_commits(database, [replaced]) == 0


def test_a_killed_publish_leaves_no_visible_commit_and_the_next_one_completes(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_shop(tmp_path / "shop")
    first = repo.git("rev-parse", "HEAD")
    assert run_publish(repo.root, tmp_path / "index", postgres_url).returncode == 0
    repo.write("app/refunds.py", "def refund(order):\n    return -order.total()\n")
    second = repo.commit("refunds")
    command = [
        sys.executable, "-m", "smartctx", "index", str(repo.root), "--index-dir", str(tmp_path / "index"),
        "--quiet", "--publish", postgres_url, "--repository", REPOSITORY,
    ]  # fmt: skip
    # The definitions' table is locked while the publisher copies into it: the publisher has
    # registered the commit and written its files when it blocks there, and is killed.
    with psycopg.connect(postgres_url) as blocker:
        blocker.execute("LOCK TABLE smartctx.nodes IN ACCESS EXCLUSIVE MODE")
        publisher = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(
                lambda: publisher_sessions(database, waiting=True) > 0,
                "the publisher to block on the locked table",
            )
        finally:
            os.kill(publisher.pid, signal.SIGKILL)
            publisher.wait(timeout=WAIT_S)
        blocker.rollback()
    wait_for(
        lambda: publisher_sessions(database, waiting=False) == 0, "the killed publisher's session to end"
    )
    assert complete_commits(database) == [first]
    assert rows_per_table(database, commit_id(database, second))["files"] > 0

    result = run_publish(repo.root, tmp_path / "index", postgres_url)

    assert result.returncode == 0, result.stderr
    assert complete_commits(database) == [second, first]
    _, nodes, _ = local_counts(tmp_path / "index")
    assert rows_per_table(database, commit_id(database, second))["nodes"] == nodes


def publisher_sessions(database: Database, waiting: bool) -> int:
    return scalar(
        database,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'smartctx publish'"
        " AND (NOT %s OR wait_event_type = 'Lock')",
        waiting,
    )


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {WAIT_S} s for {what}")
        time.sleep(0.05)


def test_pruning_keeps_the_newest_commits(tmp_path: Path, postgres_url: str, database: Database) -> None:
    repo = make_shop(tmp_path / "shop")
    published = []
    for number in range(3):
        if number:
            repo.write(f"app/extra_{number}.py", f"def extra_{number}():\n    return {number}\n")
            repo.commit(f"extra {number}")
        published.append(repo.git("rev-parse", "HEAD"))
        result = run_publish(repo.root, tmp_path / "index", postgres_url, "--keep", "2")
        assert result.returncode == 0, result.stderr

    assert "removed 1 older" in result.stdout
    assert complete_commits(database) == [published[2], published[1]]
    kept = [commit_id(database, sha) for sha in published[1:]]
    assert rows_of_other_commits(database, kept) == 0
    assert scalar(database, "SELECT count(*) FROM smartctx.commits") == 2


def test_a_work_tree_that_is_not_its_commit_is_not_published(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_shop(tmp_path / "shop")
    head = repo.git("rev-parse", "HEAD")
    repo.write("app/pricing.py", SHOP["app/pricing.py"] + "\n\ndef surcharge():\n    return 2\n")
    repo.write("app/draft.py", "def draft():\n    pass\n")
    repo.write("notes.txt", "untracked, and not indexed: no reason to refuse\n")

    result = run_publish(repo.root, tmp_path / "index", postgres_url)

    assert result.returncode == 1
    message = result.stderr.strip()
    assert f"--publish writes the index of commit {head[:12]}, not local edits" in message
    assert "app/pricing.py (modified)" in message and "app/draft.py (not committed)" in message
    assert "notes.txt" not in message
    assert database.execute("SELECT to_regclass('smartctx.commits')").fetchone() == (None,)


def test_a_role_that_may_only_read_is_told_so(tmp_path: Path, postgres_url: str, database: Database) -> None:
    repo = make_shop(tmp_path / "shop")
    assert run_publish(repo.root, tmp_path / "index", postgres_url).returncode == 0
    database.execute("CREATE ROLE reader LOGIN")
    database.execute("GRANT USAGE ON SCHEMA smartctx TO reader")
    database.execute("GRANT SELECT ON ALL TABLES IN SCHEMA smartctx TO reader")
    repo.write("app/refunds.py", "def refund(order):\n    return -order.total()\n")
    repo.commit("refunds")

    result = run_publish(repo.root, tmp_path / "index", postgres_url.replace(f"{SUPERUSER}@", "reader@"))

    assert result.returncode == 1
    assert "refused to let this role write" in result.stderr
    assert "a read-only role is enough for editors" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://db.example.invalid/shop", "is not a PostgreSQL URL"),
        ("postgresql://user@host/a b", "not a valid PostgreSQL URL"),
    ],
)
def test_a_bad_url_is_refused_before_indexing(tmp_path: Path, url: str, message: str) -> None:
    repo = make_shop(tmp_path / "shop")

    result = run_publish(repo.root, tmp_path / "index", url)

    assert result.returncode == 1 and message in result.stderr
    assert not (tmp_path / "index" / INDEX_FILE_NAME).exists()


def test_an_unreachable_server_is_reported_at_once(tmp_path: Path) -> None:
    repo = make_shop(tmp_path / "shop")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    result = run_publish(repo.root, tmp_path / "index", f"postgresql://someone:hunter2@127.0.0.1:{port}/shop")

    assert result.returncode == 1
    assert f"cannot connect to PostgreSQL at someone@127.0.0.1:{port}/shop" in result.stderr
    assert "hunter2" not in result.stderr
    assert not (tmp_path / "index" / INDEX_FILE_NAME).exists()


def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    repo = make_shop(tmp_path / "shop")
    with socket.socket() as silent:
        # Connections complete in the kernel's backlog and are never answered.
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        started = time.monotonic()

        result = run_publish(
            repo.root,
            tmp_path / "index",
            f"postgresql://u@127.0.0.1:{port}/shop?connect_timeout=2",
            timeout=60,
        )

        elapsed_s = time.monotonic() - started
    assert result.returncode == 1
    assert "cannot connect to PostgreSQL" in result.stderr and "did not answer within 2 s" in result.stderr
    assert elapsed_s < 30


def test_a_repository_without_a_name_or_a_commit_is_explained(tmp_path: Path, postgres_url: str) -> None:
    repo = make_shop(tmp_path / "shop")
    unnamed = run_index(repo.root, tmp_path / "index", "--publish", postgres_url)
    assert unnamed.returncode == 1 and "name it with --repository NAME" in unnamed.stderr

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("def a():\n    pass\n")
    outside = run_publish(plain, tmp_path / "index2", postgres_url)
    assert outside.returncode == 1 and "is not in a git repository" in outside.stderr


def test_a_database_of_another_schema_version_is_refused(tmp_path: Path, postgres_url: str) -> None:
    address = parse_url(postgres_url)
    with connect(address) as connection:
        connection.execute("CREATE SCHEMA smartctx")
        connection.execute("CREATE TABLE smartctx.schema_version (version integer, digest text)")
        connection.execute("INSERT INTO smartctx.schema_version VALUES (5, 'later')")
    repo = make_shop(tmp_path / "shop")

    result = run_publish(repo.root, tmp_path / "index", postgres_url)

    assert result.returncode == 1
    assert "holds a newer smartctx schema (v5) than this smartctx writes (v4)" in result.stderr


def test_a_database_of_schema_v1_is_upgraded_and_keeps_its_commits(
    tmp_path: Path, postgres_url: str, database: Database
) -> None:
    repo = make_shop(tmp_path / "shop")
    first = repo.git("rev-parse", "HEAD")
    assert run_publish(repo.root, tmp_path / "index", postgres_url).returncode == 0
    # The database as schema v1 left it: no shards, postings a row each, and v1's record of itself.
    before = {kind: postings_of(database, kind) for kind in ("symbol", "file")}
    database.execute("DROP TABLE smartctx.shards")
    for kind, id_column in (("symbol", "node_id"), ("file", "file_id")):
        database.execute(
            f"CREATE TABLE smartctx.{kind}_postings (commit_id bigint NOT NULL, term text NOT NULL,"
            f" {id_column} integer NOT NULL, frequency integer NOT NULL, norm integer NOT NULL,"
            f" PRIMARY KEY (commit_id, term, {id_column}) INCLUDE (frequency, norm))"
        )
        database.execute(f"INSERT INTO smartctx.{kind}_postings {postings(kind)}")
        database.execute(f"DROP TABLE smartctx.{kind}_lists")
    database.execute("ALTER TABLE smartctx.commits DROP COLUMN shard_count")
    database.execute("DROP INDEX smartctx.edges_ref, smartctx.refs_file")
    database.execute("DELETE FROM smartctx.schema_version")
    database.execute(
        "INSERT INTO smartctx.schema_version (version, digest) VALUES (1, %s)", (UPGRADES[1][0],)
    )
    repo.write("app/refunds.py", "def refund(order):\n    return -order.total()\n")
    second = repo.commit("refunds")

    result = run_publish(repo.root, tmp_path / "index", postgres_url)

    assert result.returncode == 0, result.stderr
    assert complete_commits(database) == [second, first]
    versions = database.execute("SELECT version FROM smartctx.schema_version").fetchall()
    assert sorted(versions) == [(1,), (2,), (3,), (4,)]
    kept = rows_per_table(database, commit_id(database, first))
    assert kept["nodes"] > 0
    # The commit published before the upgrade has its postings as lists, so editors can search it.
    first_id = commit_id(database, first)
    for kind in ("symbol", "file"):
        assert {row for row in postings_of(database, kind) if row[0] == first_id} == before[kind]
    # What publishing in shards needs is there.
    assert database.execute(
        "SELECT shard_count FROM smartctx.commits WHERE sha = %s", (second,)
    ).fetchone() == (None,)
    assert database.execute("SELECT count(*) FROM smartctx.shards").fetchone() == (0,)
    # And the indexes an editor's overlay reads through.
    indexes = {
        name for (name,) in database.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'smartctx'")
    }
    assert {"edges_ref", "refs_file"} <= indexes


def test_without_the_driver_publish_says_what_to_install(tmp_path: Path) -> None:
    repo = make_shop(tmp_path / "shop")
    # As in an install without the smartctx[team] extra: the driver cannot be imported.
    without_driver = (
        "import sys; sys.modules['psycopg'] = None; from smartctx.cli import main; sys.exit(main())"
    )
    arguments = ["index", str(repo.root), "--index-dir", str(tmp_path / "index"), "--repository", REPOSITORY]

    result = subprocess.run(
        [sys.executable, "-c", without_driver, *arguments, "--publish", "postgresql://u@127.0.0.1/shop"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 1
    assert result.stderr.strip() == (
        "smartctx: error: --publish needs the PostgreSQL driver: pip install 'smartctx[team]'"
    )
