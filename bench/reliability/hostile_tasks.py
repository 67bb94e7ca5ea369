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

import json
import time
from collections.abc import Callable

from bench.datasets import OUT_DIR, SWE_LITE
from bench.reliability import timed_cases

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


def main() -> None:
    timed_cases.main(
        __file__,
        __doc__ or "",
        list(CASES),
        worker,
        timeout=60.0,
        json_path=OUT_DIR / "hostile_tasks.json",
        size=("chars", lambda found: f"{found['chars']:,}"),
        recorded={},
    )


if __name__ == "__main__":
    main()
