"""The MCP result's citation links point at the cited file, as ``pathlib`` would write its URI."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from smartctx.mcp.results import _FileUris


@pytest.mark.parametrize(
    "relative",
    ["shop/payments.py", "a b/c d.py", "naïve/résumé.py", "odd/%41#?&=;+.py", "x/[1]/y,z'.py"],
)
@pytest.mark.parametrize("root_name", ["shop", "folder with space", "ümlaut"])
def test_a_link_is_the_uri_pathlib_gives_the_file(tmp_path: Path, root_name: str, relative: str) -> None:
    root = tmp_path / root_name
    folders: Any = [SimpleNamespace(uri=root.as_uri(), root=root)]
    assert _FileUris(folders).of(None, relative) == (root / relative).as_uri()


def test_each_item_links_into_its_own_folder(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    folders: Any = [SimpleNamespace(uri=root.as_uri(), root=root) for root in (first, second)]
    uris = _FileUris(folders)
    assert uris.of(second.as_uri(), "b.py") == (second / "b.py").as_uri()
    assert uris.of(first.as_uri(), "a.py") == (first / "a.py").as_uri()


def test_a_link_in_the_file_system_root_has_one_slash() -> None:
    folders: Any = [SimpleNamespace(uri="file:///", root=Path("/"))]
    assert _FileUris(folders).of(None, "etc/hosts") == "file:///etc/hosts"
