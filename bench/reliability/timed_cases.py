"""Hostile cases timed side by side: each case run by every version in a child process of its own,
stopped when it takes too long, and the medians printed as one table with each version's ratio to the
first.

A case that hangs must not hang the benchmark, and one version's slow case must not be read as the
machine's: each child runs one case ``--rounds`` times and prints one JSON line, ``{"seconds": [...],
...}`` (any other keys are figures the table may show), and the versions take the cases in turns
(``bench.side_by_side.in_turns``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import child_process
from bench.side_by_side import VersionSpec, add_version_argument, in_turns


def run_case(script: str, server: Path, case: str, rounds: int, timeout: float) -> dict[str, Any]:
    """One version's figures for one case: ``script`` run as ``--worker CASE --rounds N`` under the
    smartctx of ``server``, with ``median`` added, or ``timedOut`` when it took longer than
    ``timeout`` seconds."""
    process = child_process.start(script, "--worker", case, "--rounds", str(rounds), server=server)
    try:
        printed, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return {"timedOut": timeout}
    if process.returncode != 0:
        raise RuntimeError(f"{case}: the child of {server} exited with {process.returncode}")
    found: dict[str, Any] = json.loads(printed.strip().splitlines()[-1])
    return {**found, "median": statistics.median(found["seconds"])}


def measure(
    script: str, versions: Sequence[VersionSpec], cases: Sequence[str], rounds: int, timeout: float
) -> list[dict[str, Any]]:
    """Every case run by every version (in turns), one row a case: ``{"case": …, "versions": {name:
    figures}}``; each case's medians are printed as it ends."""
    rows: list[dict[str, Any]] = []
    for turn, case in enumerate(cases):
        figures = {
            version.name: run_case(script, version.server, case, rounds, timeout)
            for version in in_turns(versions, turn)
        }
        rows.append({"case": case, "versions": figures})
        shown = (f"{version.name} {figures[version.name].get('median', 'stopped')}" for version in versions)
        print(f"{case}: " + ", ".join(shown), flush=True)
    return rows


def _shown(found: dict[str, Any]) -> str:
    return f"> {found['timedOut']:.0f} (stopped)" if "timedOut" in found else f"{found['median']:.3f}"


def _ratio(found: dict[str, Any], first: dict[str, Any]) -> str:
    if "median" not in found or "median" not in first:
        return "-"
    return f"x{found['median'] / max(first['median'], 1e-9):.2f}"


def table(
    rows: list[dict[str, Any]],
    names: Sequence[str],
    size: tuple[str, Callable[[dict[str, Any]], str]],
) -> str:
    """Markdown: each case's median seconds per version, and each version's ratio to the first.
    ``size`` names a column of the case's size and tells it from a version's figures."""
    first = names[0]
    heading, size_of = size
    header = ["case", heading, *(f"{name} s" for name in names), *(f"{name} / {first}" for name in names[1:])]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        figures = row["versions"]
        measured = next((found for found in figures.values() if "median" in found), {})
        cells = [
            row["case"],
            size_of(measured) if measured else "-",
            *(_shown(figures[name]) for name in names),
            *(_ratio(figures[name], figures[first]) for name in names[1:]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(
    script: str,
    description: str,
    cases: Sequence[str],
    worker: Callable[[str, int], None],
    *,
    timeout: float,
    json_path: Path,
    size: tuple[str, Callable[[dict[str, Any]], str]],
    recorded: Mapping[str, Any],
) -> None:
    """A hostile-case benchmark's command line: as a child (``--worker CASE``), ``worker`` runs one
    case; else every case of ``--cases`` is measured with each ``--version``, the table printed and
    the rows written to ``--json`` with ``recorded`` (the run's settings)."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--worker", choices=sorted(cases), help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=timeout, help="seconds a version may take a case")
    parser.add_argument("--cases", nargs="*", choices=sorted(cases), default=list(cases))
    parser.add_argument("--json", type=Path, default=json_path)
    known, _ = parser.parse_known_args()
    if known.worker is not None:
        worker(known.worker, known.rounds)
        return
    add_version_argument(parser)
    args = parser.parse_args()
    if len(args.version) < 2:
        parser.error("give --version two or more times")
    rows = measure(script, args.version, args.cases, args.rounds, args.timeout)
    print(table(rows, [version.name for version in args.version], size))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rounds": args.rounds, **recorded, "rows": rows}, indent=2) + "\n")
    print(f"wrote {args.json}")
