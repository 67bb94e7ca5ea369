"""A benchmark run again in a child process of its own: a measurement whose time and memory must be
the child's alone, or one version of smartctx among several (``bench.side_by_side``).

The child runs the same script as a module of this ``bench`` package (``python -m
bench.<group>.<name>``) from the checkout's root, so it imports the same benchmark code as its
parent whatever folder the parent was started from; path arguments must therefore be absolute.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.datasets import CHECKOUT


def _command(script: str, arguments: tuple[str, ...]) -> list[str]:
    module = Path(script).resolve().relative_to(CHECKOUT).with_suffix("")
    return [sys.executable, "-m", ".".join(module.parts), *arguments]


def _environment(server: Path | None) -> dict[str, str]:
    """This process's environment with PYTHONPATH naming the code to run first (``server``'s
    smartctx, or else whatever this process was given) and then the checkout, for ``bench``."""
    if server is not None:
        code = [str(server.resolve())]
    else:
        code = [part for part in os.environ.get("PYTHONPATH", "").split(os.pathsep) if part]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*code, str(CHECKOUT)])}


def start(script: str, *arguments: str, server: Path | None = None) -> subprocess.Popen[str]:
    """``script`` (a module's ``__file__``) started with ``arguments``, its standard input and output
    pipes of text; with ``server``, that folder's smartctx instead of this process's."""
    return subprocess.Popen(
        _command(script, arguments),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_environment(server),
        cwd=CHECKOUT,
    )


def result(script: str, *arguments: str) -> Any:
    """The last line ``script`` printed when run to its end with ``arguments``, read as JSON: the
    child's result, after whatever else it printed (CalledProcessError if it failed)."""
    printed = subprocess.run(
        _command(script, arguments),
        capture_output=True,
        text=True,
        check=True,
        env=_environment(None),
        cwd=CHECKOUT,
    ).stdout
    return json.loads(printed.strip().splitlines()[-1])
