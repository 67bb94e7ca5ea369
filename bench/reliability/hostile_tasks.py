"""Reading hostile task texts: how long the task parser takes on a megabyte of the shapes a pasted log
or a generated text can have, for two or more versions side by side.

A task is read up to ``MAX_TASK_CHARS`` (1 MB), and every line of it goes through the parser's
patterns before the search starts: a pattern that backtracks over the lines after it turns such a
text into minutes, and the request that carries it never answers. Each case is a text of about
1 MB (blank lines, lines of spaces or of CRLF, version-report lines, REPL prompts, one long line of
dotted words and frames, SWE-bench Lite's problem statements end to end, …), read by
``parse_task(bound_task(text).text)`` as the pipeline reads it, ``--rounds`` times, in a child
process of each version's own (``--version NAME=SERVER_FOLDER``, at least two), the versions in
alternating order. A child that takes longer than ``--timeout`` seconds is stopped and its case
reported as timed out. Prints one table (median seconds per version, and each version's ratio to
the first) and writes JSON:

    .venv/bin/python -m bench.reliability.hostile_tasks \\
        --version main=/work/frozen-main/server --version branch=$PWD/server
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import child_process
from bench.datasets import OUT_DIR, SWE_LITE
from bench.side_by_side import add_version_argument, in_turns

# Characters of each case's text: the most a task is read of.
TEXT_CHARS = 1_000_000


def _repeated(unit: str) -> Callable[[], str]:
    return lambda: (unit * (TEXT_CHARS // len(unit) + 1))[:TEXT_CHARS]


def _problem_statements() -> str:
    rows = (json.loads(line) for line in SWE_LITE.read_text(encoding="utf-8").splitlines() if line)
    return "\n\n".join(str(row["problem_statement"]) for row in rows)[:TEXT_CHARS]


def _dotted_frames() -> str:
    words = (f"a.b.c{n}.py:{n}" if n % 3 == 0 else f"word{n}" for n in range(200_000))
    return " ".join(words)[:TEXT_CHARS]


CASES: dict[str, Callable[[], str]] = {
    "blank lines": _repeated("\n"),
    "lines of spaces": _repeated("  \n"),
    "CRLF lines": _repeated("\r\n"),
    "heads (a:)": _repeated("a:\n"),
    "version lines": _repeated("numpy: 1.17.3\n"),
    "name version, blank": _repeated("x 1.2 \n\n"),
    "REPL prompts": _repeated(">>> \n"),
    "code fences, no line break": _repeated("```"),
    "one-character lines": _repeated("a\n"),
    "one line, dotted words and frames": _dotted_frames,
    "one line, at-dotted runs": _repeated("at " + ".".join(f"pkg{n}" for n in range(40)) + " "),
    "SWE-bench Lite's problem statements": _problem_statements,
}


def worker(case: str, rounds: int) -> None:
    """Inside a child: the case's text parsed ``rounds`` times; one JSON line of the seconds each took."""
    from smartctx.retrieval.query import bound_task, parse_task

    text = CASES[case]()
    seconds = []
    for _ in range(rounds):
        started = time.perf_counter()
        parse_task(bound_task(text).text)
        seconds.append(time.perf_counter() - started)
    print(json.dumps({"chars": len(text), "seconds": seconds}), flush=True)


def run_case(server: Path, case: str, rounds: int, timeout: float) -> dict[str, Any]:
    """One version's figures for one case, or ``timedOut`` when its child took longer than ``timeout``."""
    process = child_process.start(__file__, "--worker", case, "--rounds", str(rounds), server=server)
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


def _shown(found: dict[str, Any]) -> str:
    return f"> {found['timedOut']:.0f} (stopped)" if "timedOut" in found else f"{found['median']:.3f}"


def _ratio(found: dict[str, Any], first: dict[str, Any]) -> str:
    if "median" not in found or "median" not in first:
        return "-"
    return f"x{found['median'] / max(first['median'], 1e-9):.2f}"


def table(rows: list[dict[str, Any]], names: list[str]) -> str:
    """Markdown: each case's median seconds per version, and each version's ratio to the first."""
    first = names[0]
    header = ["case", "chars", *(f"{name} s" for name in names), *(f"{name} / {first}" for name in names[1:])]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        figures = row["versions"]
        chars = next((found["chars"] for found in figures.values() if "chars" in found), 0)
        cells = [
            row["case"],
            f"{chars:,}",
            *(_shown(figures[name]) for name in names),
            *(_ratio(figures[name], figures[first]) for name in names[1:]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--worker", choices=sorted(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a version may take a case")
    parser.add_argument("--cases", nargs="*", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--json", type=Path, default=OUT_DIR / "hostile_tasks.json")
    known, _ = parser.parse_known_args()
    if known.worker is not None:
        worker(known.worker, known.rounds)
        return
    add_version_argument(parser)
    args = parser.parse_args()
    if len(args.version) < 2:
        parser.error("give --version two or more times")
    names = [version.name for version in args.version]
    rows: list[dict[str, Any]] = []
    for turn, case in enumerate(args.cases):
        figures = {
            version.name: run_case(version.server, case, args.rounds, args.timeout)
            for version in in_turns(args.version, turn)
        }
        rows.append({"case": case, "versions": figures})
        print(f"{case}: " + ", ".join(f"{name} {figures[name].get('median', 'stopped')}" for name in names))
    print(table(rows, names))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rounds": args.rounds, "rows": rows}, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
