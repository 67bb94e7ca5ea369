"""What packing needs from the workspace: a file's current bytes, where a definition is now, and
(with includePRs) the changes that shaped some lines.

Retrieval reads files and history only through these protocols, so the language server can hand it
unsaved editor buffers and the CLI plain files, and retrieval never imports the parser or runs git.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from smartctx.core.history import FileSpans, HistoryAnswer


class SourceReader(Protocol):
    def read(self, path: str) -> bytes | None:
        """The current content of a workspace-relative path, or None if it cannot be read."""
        ...

    def locate(self, path: str, kind: str, qualified_name: str) -> tuple[int, int] | None:
        """The current 1-based line span of a definition that moved since indexing, or None."""
        ...


class ChangeHistory(Protocol):
    def recent_changes(
        self, files: Sequence[FileSpans], cutoff: datetime | None, limit: int
    ) -> HistoryAnswer:
        """Up to ``limit`` changes per span, newest first, none after ``cutoff``; problems as notes."""
        ...
