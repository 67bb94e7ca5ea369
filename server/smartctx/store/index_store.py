"""The index of one workspace: where it lives, its writer, and its snapshots."""

from __future__ import annotations

import hashlib
from pathlib import Path

from smartctx.core.cache_folder import cache_folder
from smartctx.store import lexical
from smartctx.store.database import INDEX_FILE_NAME, OpenedIndex, open_index
from smartctx.store.snapshot import IndexSnapshot, SnapshotPool
from smartctx.store.writer import IndexWriter


def default_index_dir(workspace_root: Path) -> Path:
    """The user cache folder (:func:`~smartctx.core.cache_folder.cache_folder`) keyed by the workspace
    path, so nothing is written into the repository."""
    return index_dir_in(cache_folder(), workspace_root)


def index_dir_in(base: Path, workspace_root: Path) -> Path:
    """The index folder of ``workspace_root`` inside ``base``, keyed by the workspace path, so one
    base folder can hold the indexes of several workspace folders."""
    digest = hashlib.sha256(str(workspace_root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return base / f"{workspace_root.name or 'root'}-{digest}"


def index_size_bytes(index_dir: Path) -> int:
    """The index file in ``index_dir`` with its write-ahead log and its lexical index, without files
    moved aside."""
    return lexical.folder_bytes(index_dir / INDEX_FILE_NAME) + sum(
        candidate.stat().st_size
        for candidate in index_dir.iterdir()
        if candidate.name.startswith(INDEX_FILE_NAME)
        and ".broken-" not in candidate.name
        and candidate.is_file()
    )


class IndexStore:
    """Owns the read-write connection; hands out read-only snapshots."""

    def __init__(self, workspace_root: Path, index_dir: Path | None = None) -> None:
        self.workspace_root = workspace_root
        # SQLite opens the index by file URI, which must be absolute: a relative folder (from
        # ``--index-dir``, say) is taken from the current folder.
        self.index_dir = (
            index_dir.expanduser().absolute() if index_dir is not None else default_index_dir(workspace_root)
        )
        opened: OpenedIndex = open_index(self.index_dir, workspace_root)
        self.path = opened.path
        self.rebuilt_reason = opened.rebuilt_reason
        self._connection = opened.connection
        self.writer = IndexWriter(self._connection, self.path)
        # The lexical index is derived data: if it does not hold what SQLite holds, it is built again
        # from SQLite's rows before anything reads it.
        self.writer.check_lexical()
        self._snapshots = SnapshotPool()

    def snapshot(self) -> IndexSnapshot:
        return self._snapshots.snapshot(self.path)

    def size_bytes(self) -> int:
        return index_size_bytes(self.index_dir)

    def close(self) -> None:
        """Stop writing: the lexical index's writers first (another process may take over once the
        caller releases the writer lock), then the kept read connections and the SQLite connection."""
        lexical.LexicalIndex.stop_writing(self.path)
        self._snapshots.close()
        self._connection.close()
