"""A team's published base, as a live index sees it: what answers for a folder while its own index
cannot yet.

A folder's first index takes seconds to minutes; when a team publishes its default branch
(team/, ``smartctx index --publish``) and the folder is a clean checkout of a published commit, the
base already holds that index. The workspace asks a :class:`BaseSource` once per folder, in the
background, for the published commit whose tree the folder is; until the folder's own index has
held the whole folder once, and as long as nothing in the folder changed, requests are answered
from that commit (workspace.py). The live index knows no PostgreSQL: the command line or the
language server hands it a source (team/reading.py's ``TeamBase``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from smartctx.store.reader import IndexReader


class BaseCover(Protocol):
    """A published commit that holds a folder's index, ready to be read."""

    @property
    def stamp(self) -> str:
        """Names the base, as packs report it: ``base a1b2c3d + 0 local files``."""
        ...

    @property
    def local_files(self) -> tuple[str, ...] | None:
        """The folder's files that are not the base's, None when the folder is the published tree.
        Otherwise, before the first snapshot, index these alone and :meth:`lay_over` their index
        (an empty one when the folder only deleted files)."""
        ...

    def lay_over(self, overlay_index: Path, paths: Sequence[str]) -> None:
        """Lay the settled index of ``paths`` (:attr:`local_files`, and any others that differ from
        the base: unsaved buffers), and of nothing else, over the base; it is read whole, and may be
        deleted once this returns. Blocks on the database."""
        ...

    def snapshot(self) -> AbstractContextManager[IndexReader]:
        """A consistent read of the commit, for one request; safe from any query thread. A failure
        of the base inside it is raised as store.reader's :class:`ReaderUnavailableError`, and the
        folder's own index answers instead, from then on."""
        ...

    def close(self) -> None: ...


class BaseSource(Protocol):
    def cover(self, root: Path) -> BaseCover | None:
        """The published commit whose tree ``root`` is, or None (having logged why) when there is
        none. Blocks on git and the database: call it off the event loop."""
        ...
