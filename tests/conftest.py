"""Fixtures shared by every test: an isolated cache folder and helpers to build workspaces."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Keep every index a test builds out of the developer's real cache folder."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("SMARTCTX_CACHE_DIR", str(cache))
    yield cache


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create ``files`` (relative path -> text or bytes) under ``root``."""
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root
