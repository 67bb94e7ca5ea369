"""Options and fixtures shared by every test: an isolated cache folder, --update-golden, a throw-away
PostgreSQL server (started once, on first use) with a fresh database per test."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import postgres_server

UPDATE_GOLDEN_OPTION = "--update-golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        UPDATE_GOLDEN_OPTION,
        action="store_true",
        help="rewrite the golden files from the current output instead of comparing against them",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption(UPDATE_GOLDEN_OPTION))


@pytest.fixture(autouse=True)
def isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Keep every index a test builds out of the developer's real cache folder."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("SMARTCTX_CACHE_DIR", str(cache))
    yield cache


@pytest.fixture(scope="session")
def postgres() -> Iterator[postgres_server.PostgresServer]:
    """A PostgreSQL server of the machine's own binaries for this test session, stopped after it.

    Without the binaries (or psycopg) the tests that use it skip, saying what to install; with
    SMARTCTX_REQUIRE_POSTGRES set, as CI sets it in .ci/run, they fail instead.
    """
    required = bool(os.environ.get(postgres_server.REQUIRE_VARIABLE))
    missing: str | None = None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing = "the psycopg driver is not installed: pip install -e '.[dev]'"
    server: postgres_server.PostgresServer | None = None
    if missing is None:
        try:
            server = postgres_server.start()
        except postgres_server.PostgresUnavailableError as error:
            missing = str(error)
    if server is None:
        if required:
            pytest.fail(
                f"{missing} ({postgres_server.REQUIRE_VARIABLE} is set, so this fails rather than skips)"
            )
        pytest.skip(f"no PostgreSQL for these tests: {missing}")
    yield server
    server.stop()


_database_numbers = itertools.count(1)


def _new_database(postgres: postgres_server.PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database on the session's server, as its superuser; dropped after."""
    import psycopg

    name = f"test_{next(_database_numbers)}"
    with psycopg.connect(postgres.url(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    yield postgres.url(name)
    with psycopg.connect(postgres.url(), autocommit=True) as connection:
        connection.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture
def postgres_url(postgres: postgres_server.PostgresServer) -> Iterator[str]:
    """A new, empty database for one test."""
    yield from _new_database(postgres)


@pytest.fixture(scope="module")
def postgres_url_module(postgres: postgres_server.PostgresServer) -> Iterator[str]:
    """A new, empty database that a module's tests share (one published commit, say)."""
    yield from _new_database(postgres)
