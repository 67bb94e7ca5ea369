"""What packing needs from the workspace: a file's current bytes, and where a definition is now.

Retrieval reads files only through this protocol, so the language server can hand it unsaved
editor buffers and the CLI plain files, and retrieval never imports the parser.
"""

from __future__ import annotations

from typing import Protocol


class SourceReader(Protocol):
    def read(self, path: str) -> bytes | None:
        """The current content of a workspace-relative path, or None if it cannot be read."""
        ...

    def locate(self, path: str, kind: str, qualified_name: str) -> tuple[int, int] | None:
        """The current 1-based line span of a definition that moved since indexing, or None."""
        ...
