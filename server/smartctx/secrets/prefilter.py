"""The Hyperscan prefilter: the patterns of the rules tried one line at a time, compiled into one
database, so one native pass over a text says which rules can match on which lines and Python's
expressions run only there (``scan.py``).

Compiling takes about half a second, loading a compiled database a millisecond: the database is kept
in the cache folder between processes, and each thread scans with its own scratch space.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import cast

import hyperscan

from smartctx.core.cache_folder import cache_folder

# The length of a SHA-256 digest, which begins a saved prefilter database.
_DIGEST_BYTES = 32
# ``\\Z`` where it is an escape, not a backslash followed by "Z".
_END_OF_TEXT = re.compile(r"(?<!\\)((?:\\\\)*)\\Z")


def prefilter_database(patterns: list[re.Pattern[str]]) -> hyperscan.Database:
    """The patterns compiled as one Hyperscan block-mode database, pattern ``i`` reporting id ``i``.

    ``HS_FLAG_PREFILTER`` makes each a superset of itself where Hyperscan lacks a construct
    (lookarounds, lazy bounded runs), so a line the database finds nothing on is one the pattern
    finds nothing on. Python's ``\\Z``, at the end of a line that a line rule runs on, is ``$``
    before the line break that follows it in the scanned text. A pattern Hyperscan cannot compile
    is an error here, not a rule silently tried everywhere.

    Compiling takes about half a second, loading a compiled database a millisecond: each process
    after the first loads the one the first saved in the cache folder, named by a digest of
    Hyperscan's version and everything it was compiled from. A damaged file, or one Hyperscan refuses
    (built for another version or processor), is compiled again.
    """
    expressions = [_END_OF_TEXT.sub(r"\1$", pattern.pattern).encode("utf-8") for pattern in patterns]
    flags = [
        hyperscan.HS_FLAG_PREFILTER
        | hyperscan.HS_FLAG_MULTILINE
        | (hyperscan.HS_FLAG_CASELESS if pattern.flags & re.IGNORECASE else 0)
        for pattern in patterns
    ]
    version = importlib.metadata.version("hyperscan")
    digest = hashlib.sha256(repr((version, expressions, flags)).encode("utf-8")).hexdigest()
    saved = cache_folder() / f"secret-prefilter-{digest[:32]}.hsdb"
    # Nothing is logged here: a log record is redacted, and the rules are not ready yet.
    try:
        stored = saved.read_bytes()
        # The file begins with the digest of the rest: a damaged file is compiled again, never
        # loaded as a database that would miss matches.
        if hashlib.sha256(stored[_DIGEST_BYTES:]).digest() == stored[:_DIGEST_BYTES]:
            return hyperscan.loadb(stored[_DIGEST_BYTES:], hyperscan.HS_MODE_BLOCK)
    except (OSError, hyperscan.HyperscanError):
        pass
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=expressions, ids=list(range(len(patterns))), elements=len(patterns), flags=flags
    )
    serialized = hyperscan.dumpb(database)
    _save(saved, hashlib.sha256(serialized).digest() + serialized)
    return database


def _save(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (processes starting together may race); a
    folder that cannot be written leaves the next process to compile again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=path.name)
    except OSError:
        return
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)


class Prefilter:
    """The patterns compiled as one database (see :func:`prefilter_database`), pattern ``i``
    reporting id ``i``, and each thread's scratch space for scanning with it."""

    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        self.database = prefilter_database(patterns)
        # Hyperscan's scratch space serves one scan at a time: query threads and the event loop
        # redact at once, so each thread has its own.
        self._scratches = threading.local()

    def hits(self, data: bytes) -> list[tuple[int, int]]:
        """The (pattern id, end offset) of every match in ``data``; Hyperscan reports no starts."""
        hits: list[tuple[int, int]] = []
        self.database.scan(data, match_event_handler=_on_match, context=hits, scratch=self._scratch())
        return hits

    def _scratch(self) -> hyperscan.Scratch:
        scratch: hyperscan.Scratch | None = getattr(self._scratches, "scratch", None)
        if scratch is None:
            scratch = self._scratches.scratch = hyperscan.Scratch(self.database)
        return scratch


def _on_match(rule: int, start: int, end: int, flags: int, hits: object) -> None:
    cast("list[tuple[int, int]]", hits).append((rule, end))
