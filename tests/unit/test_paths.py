"""``file:`` URIs to workspace paths: the one gate every client-sent path passes.

See architecture.md, *Safety*.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from smartctx.live.paths import file_uri_path, innermost_folder, workspace_path


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("file:///home/me/shop/a.py", "/home/me/shop/a.py"),
        ("file:///home/me/my%20shop/caf%C3%A9.py", "/home/me/my shop/café.py"),
        ("file://localhost/home/me/a.py", "/home/me/a.py"),
        ("file://server/share/a.py", "//server/share/a.py"),
        ("untitled:Untitled-1", None),
        ("https://example.com/a.py", None),
    ],
)
def test_file_uri_path(uri: str, expected: str | None) -> None:
    assert file_uri_path(uri) == expected


def test_paths_outside_the_folder_or_through_a_link_that_leaves_it_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "outside.py").write_text("y = 2\n", encoding="utf-8")
    (root / "escape.py").symlink_to(tmp_path / "outside.py")

    assert workspace_path(root, (root / "pkg" / "a.py").as_uri()) == "pkg/a.py"
    assert workspace_path(root, (tmp_path / "outside.py").as_uri()) is None
    assert workspace_path(root, (root / "escape.py").as_uri()) is None
    assert workspace_path(root, root.as_uri()) is None


def test_nested_folders_route_to_the_inner_one(tmp_path: Path) -> None:
    outer, inner = tmp_path / "ws", tmp_path / "ws" / "lib"
    inner.mkdir(parents=True)
    uri = (inner / "m.py").as_uri()

    assert innermost_folder([outer, inner], uri) == (1, "m.py")
    assert innermost_folder([inner, outer], uri) == (0, "m.py")
    assert innermost_folder([outer / "other"], uri) is None
