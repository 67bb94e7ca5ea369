"""Two or more versions of smartctx measured side by side in one run.

Each version is a worker process of the benchmark itself, importing smartctx from the server folder
it is given (a frozen worktree of a commit), answering one JSON line with one JSON line. The
questions go to the versions in turns whose order alternates from one turn to the next, so that the
load of a shared machine falls on every version alike: the ratio of their figures is what to read,
more than the milliseconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bench import child_process

Turned = TypeVar("Turned")


@dataclass(frozen=True)
class VersionSpec:
    """A version as ``--version NAME=SERVER_FOLDER[,INDEX_DIR]`` names it: the index folder is given
    when the version keeps an index of its own (one whose format differs from the others')."""

    name: str
    server: Path
    index_dir: Path | None = None


def version_spec(text: str) -> VersionSpec:
    """``NAME=SERVER_FOLDER[,INDEX_DIR]`` read as a :class:`VersionSpec` (an argparse type)."""
    name, _, folders = text.partition("=")
    server, _, index_dir = folders.partition(",")
    return VersionSpec(name, Path(server), Path(index_dir) if index_dir else None)


def add_version_argument(parser: argparse.ArgumentParser, *, own_index: bool = False) -> None:
    """``--version``, given two or more times; ``own_index`` when a version may name its own index."""
    shape = "NAME=SERVER_FOLDER[,INDEX_DIR]" if own_index else "NAME=SERVER_FOLDER"
    parser.add_argument(
        "--version", type=version_spec, action="append", required=True, help=f"{shape}, two or more"
    )


class Worker:
    """One version's worker: the benchmark ``script`` run again with ``arguments`` under the
    smartctx of ``server``; ``rows`` keeps what the benchmark collects from it."""

    def __init__(self, name: str, server: Path, script: str, *arguments: str) -> None:
        self.name = name
        self.process = child_process.start(script, *arguments, server=server)
        self.rows: list[dict[str, Any]] = []

    def read(self) -> Any:
        """The worker's next line, as JSON."""
        assert self.process.stdout is not None
        return json.loads(self.process.stdout.readline())

    def ask(self, question: Any) -> Any:
        """``question`` sent as one JSON line; the answer line, as JSON."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(question) + "\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        """End the worker's input and wait for it to finish."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def in_turns(versions: Sequence[Turned], turn: int) -> list[Turned]:
    """The order in which turn number ``turn`` asks the versions: as given, then reversed, in turn."""
    return list(versions) if turn % 2 == 0 else list(versions)[::-1]


def asked() -> Iterator[Any]:
    """Inside a worker: each question, as JSON, until its input ends."""
    for line in sys.stdin:
        yield json.loads(line)


def answer(row: Any) -> None:
    """Inside a worker: one answer line."""
    print(json.dumps(row), flush=True)
