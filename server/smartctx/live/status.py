"""What a live index reports about itself: plain counts that each front end puts on its own wire."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# Whether this process writes the index, follows another process that does, or (over several
# folders) both.
IndexRole = Literal["writer", "follower", "mixed"]


@dataclass(frozen=True)
class WriterInfo:
    """The process that writes an index folder, as its followers name it."""

    pid: int
    # The smartctx command it runs ("smartctx serve", "smartctx mcp", ...).
    command: str


@dataclass(frozen=True)
class StatusCounts:
    indexing: bool
    files_done: int
    files_total: int
    pending_files: int
    # Why the index could not be opened, if it could not.
    error: str | None = None
    # How many files the index holds (files_done/files_total count the work of the current phase).
    indexed_files: int = 0
    role: IndexRole = "writer"
    # The process this one follows, when it follows one (with several folders: the only one).
    writer: WriterInfo | None = None
    # The entries not indexed because their names are not UTF-8, by printable path.
    undecodable_names: tuple[str, ...] = ()
    # The team's published base while it answers for the folder, as packs name it ("base a1b2c3d +
    # 3 local files"); with several folders, each such folder's, joined.
    base: str | None = None

    @property
    def state(self) -> Literal["indexing", "ready", "failed"]:
        """``failed`` when the index cannot be opened, else ``indexing`` while work runs, else ``ready``."""
        return "failed" if self.error else "indexing" if self.indexing else "ready"


def aggregate_status(counts: Sequence[StatusCounts]) -> StatusCounts:
    """The status of several folders as one: indexing while any is, counts summed, every folder's
    open error (which makes the state "failed"), the role they share ("mixed" if they differ), and
    the bases that answer for any of them."""
    errors = [count.error for count in counts if count.error]
    roles = {count.role for count in counts}
    writers = {count.writer for count in counts if count.writer is not None}
    bases = [count.base for count in counts if count.base]
    return StatusCounts(
        indexing=any(count.indexing for count in counts),
        files_done=sum(count.files_done for count in counts),
        files_total=sum(count.files_total for count in counts),
        pending_files=sum(count.pending_files for count in counts),
        error="; ".join(errors) if errors else None,
        indexed_files=sum(count.indexed_files for count in counts),
        role=roles.pop() if len(roles) == 1 else "mixed" if roles else "writer",
        writer=writers.pop() if len(writers) == 1 else None,
        undecodable_names=tuple(name for count in counts for name in count.undecodable_names),
        base="; ".join(bases) if bases else None,
    )
