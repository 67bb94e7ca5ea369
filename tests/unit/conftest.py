"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest

from smartctx.parsing.extract import SourceParser


@pytest.fixture(scope="session")
def source_parser() -> SourceParser:
    return SourceParser()
