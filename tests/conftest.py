"""Options and fixtures shared by every test: an isolated cache folder, --update-golden."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

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
