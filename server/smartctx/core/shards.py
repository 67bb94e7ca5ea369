"""Which files one of N processes indexes when a commit is published in shards (team/publish.py).

A file belongs to the shard its path hashes to, so N jobs that each scan the same checkout split it
into disjoint parts that together hold every file, without talking to each other. A hash of the
path, not its place in a listing, keeps the split the same however a job's scan orders the tree.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_SHARD_TEXT = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
# More shards than this would each hold a handful of files of a large repository and mostly wait on
# the database; the limit also keeps the published ids (team/publish.py) far from overflowing.
MAX_SHARDS = 256


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``, numbered from 0 as in code, written ``I/N`` with I from 1 as a
    CI matrix counts."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_SHARDS or not 0 <= self.index < self.count:
            raise ValueError(f"no shard {self.index + 1} of {self.count}")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``I/N``, the I-th of N shards, 1 ≤ I ≤ N ≤ MAX_SHARDS; ValueError says what is wrong."""
        match = _SHARD_TEXT.match(text)
        if match is None:
            raise ValueError(f"{text!r} is not a shard: give I/N, the I-th of N, such as 1/4")
        number, count = int(match[1]), int(match[2])
        if not 1 <= count <= MAX_SHARDS:
            raise ValueError(f"{text!r}: the number of shards must be between 1 and {MAX_SHARDS}")
        if not 1 <= number <= count:
            raise ValueError(f"{text!r}: a shard's number must be between 1 and {count}")
        return cls(number - 1, count)

    def owns(self, path: str) -> bool:
        """Whether the workspace-relative ``path`` is this shard's to index."""
        digest = hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index + 1}/{self.count}"
