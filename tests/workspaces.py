"""Building small workspaces on disk for tests."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


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
