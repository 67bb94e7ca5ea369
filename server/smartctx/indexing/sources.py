"""Workspace files for packing: read safely, and definitions found again after an edit."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from smartctx.parsing.extract import SourceParser
from smartctx.parsing.languages import language_for_path


class WorkspaceSources:
    """Reads workspace-relative paths under one root; unsaved editor buffers take precedence.

    Only files inside the root are ever read: a path that climbs out, or a symbolic link whose
    target lies outside, reads as missing (architecture.md, *Safety*).
    """

    def __init__(self, root: Path, overlays: Mapping[str, bytes] | None = None) -> None:
        self.root = Path(os.path.realpath(root))
        self._overlays = overlays if overlays is not None else {}
        self._parser = SourceParser()

    def read(self, path: str) -> bytes | None:
        if path in self._overlays:
            return self._overlays[path]
        full = Path(os.path.realpath(self.root / path))
        if full != self.root and self.root not in full.parents:
            return None
        try:
            return full.read_bytes()
        except OSError:
            return None

    def locate(self, path: str, kind: str, qualified_name: str) -> tuple[int, int] | None:
        language = language_for_path(path)
        data = self.read(path)
        if language is None or data is None:
            return None
        for symbol in self._parser.parse(data, language).symbols:
            if symbol.kind.value == kind and symbol.qualified_name == qualified_name:
                return symbol.span.start_line, symbol.span.end_line
        return None
