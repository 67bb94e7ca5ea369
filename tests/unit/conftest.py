"""Options and fixtures shared by the unit tests."""

from __future__ import annotations

import pytest

from smartctx.parsing.extract import SourceParser

UPDATE_GOLDEN_OPTION = "--update-golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    # pytest only registers options from conftest files it loads at start-up, so pass the
    # flag together with a path under tests/unit: `pytest tests/unit --update-golden`.
    parser.addoption(
        UPDATE_GOLDEN_OPTION,
        action="store_true",
        help="rewrite the golden files from the current output instead of comparing against them",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption(UPDATE_GOLDEN_OPTION))


@pytest.fixture(scope="session")
def source_parser() -> SourceParser:
    return SourceParser()
