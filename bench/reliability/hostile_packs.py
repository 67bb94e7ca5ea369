"""The pack stage on hostile bodies: how long a request takes when the code it packs is a function of
ten thousand lines inside one block, a body of lines as long as an indexed line may be, a docstring
of twenty thousand lines, a body whose every line holds the task's words, or thousands of
definitions that all match, for two or more versions side by side.

Every body packed is redacted and counted in tokens, a long docstring is shortened to its first
paragraph (``retrieval/docstrings.py``) and a long body after the first to the lines near the task's
words and the lines opening their blocks (``retrieval/long_bodies.py``): each of those reads every
line of a body, so a body shaped to make one of them quadratic holds its request. Each case writes
its workspace into a temporary folder and indexes it (not timed), then answers its task with
``build_context`` at 4k, 8k and 16k tokens, ``--rounds`` times, in a child process of each version's
own (``--version NAME=SERVER_FOLDER``, at least two); a child that takes longer than ``--timeout``
seconds is stopped and its case reported as timed out. Prints one table (the median seconds of a
round of the three requests per version, and each version's ratio to the first) and writes JSON:

    .venv/bin/python -m bench.reliability.hostile_packs \\
        --version main=/work/frozen-main/server --version branch=$PWD/server
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.datasets import OUT_DIR
from bench.reliability import timed_cases

BUDGETS = (4_000, 8_000, 16_000)
# Lines of the long bodies: a hundred times the length from which a body after the first is shortened.
LONG_LINES = 10_000
MATCHING_DEFINITIONS = 3_000
TASK = "The ledger refund is lost when settle_ledger and audit_ledger run on a closed ledger"

Workspace = dict[str, str]


def _in_one_block(name: str) -> str:
    """A Python function of ``LONG_LINES`` lines all inside one ``if``, a task word every 100th."""
    lines = [f"def {name}(entries, closed):\n", "    if closed:\n"]
    for number in range(LONG_LINES):
        if number % 100 == 0:
            lines.append(f"        refund_{number} = ledger_refund(entries[{number}])\n")
        else:
            lines.append(f"        total_{number} = entries[{number}] + {number}\n")
    return "".join(lines) + "    return entries\n"


def _long_bodies() -> Workspace:
    return {
        "ledger/settle.py": _in_one_block("settle_ledger"),
        "ledger/audit.py": _in_one_block("audit_ledger"),
    }


def _long_lines() -> Workspace:
    """A JavaScript function of 2,500 lines, one in twenty as long as an indexed line may be
    (longer, or longer on average than ``MAX_AVERAGE_LINE_CHARS``, and the file is minified output,
    not indexed), after a short function the task names first."""
    from smartctx.indexing.scanner import MAX_LINE_CHARS

    long_line = "  // " + ("refund ledger " * MAX_LINE_CHARS)[: MAX_LINE_CHARS - 10] + "\n"
    short_line = "  entries[{}] += 1;\n"
    count = LONG_LINES // 4
    lines = [long_line if number % 20 == 0 else short_line.format(number) for number in range(count)]
    return {
        "ledger/settle.js": "function settle_ledger(entries) {\n  return entries.map(ledger_refund);\n}\n",
        "ledger/audit.js": "function audit_ledger(entries) {\n" + "".join(lines) + "  return entries;\n}\n",
    }


def _long_docstring() -> Workspace:
    doc = "".join(f"    The ledger refund rule number {number}.\n\n" for number in range(LONG_LINES))
    body = '    """Audit a closed ledger.\n\n' + doc + '    """\n    return ledger_refund(entries)\n'
    return {
        "ledger/settle.py": "def settle_ledger(entries):\n    return ledger_refund(entries)\n",
        "ledger/audit.py": "def audit_ledger(entries):\n" + body,
    }


def _task_words_everywhere() -> Workspace:
    """Long bodies whose every line holds a task word: shortening would leave nothing out."""
    line = "    ledger_refund(entries[{}], closed_ledger)\n"
    lines = "".join(line.format(number) for number in range(LONG_LINES // 2))
    return {
        "ledger/settle.py": "def settle_ledger(entries, closed_ledger):\n" + lines,
        "ledger/audit.py": "def audit_ledger(entries, closed_ledger):\n" + lines,
    }


def _matching_definitions() -> Workspace:
    """``MATCHING_DEFINITIONS`` small functions in 30 files, every one holding the task's words."""
    files: Workspace = {}
    per_file = MATCHING_DEFINITIONS // 30
    for file in range(30):
        files[f"ledger/part_{file:02d}.py"] = "".join(
            f"def settle_ledger_{file}_{number}(entries):\n"
            f'    """Settle the ledger refund of a closed ledger."""\n'
            f"    return audit_ledger(ledger_refund(entries), {number})\n\n\n"
            for number in range(per_file)
        )
    return files


CASES: dict[str, Callable[[], Workspace]] = {
    f"{LONG_LINES:,} lines inside one block, twice": _long_bodies,
    "lines as long as an indexed line may be": _long_lines,
    f"a docstring of {2 * LONG_LINES:,} lines": _long_docstring,
    "task words on every line": _task_words_everywhere,
    f"{MATCHING_DEFINITIONS:,} definitions that all match": _matching_definitions,
}


def worker(case: str, rounds: int) -> None:
    """Inside a child: the case's workspace indexed, then its task answered at every budget
    ``rounds`` times; one JSON line of the seconds each round took, the pack stage's median
    milliseconds and the workspace's size."""
    from tests.workspaces import write_tree

    from bench.repository import indexed_store
    from smartctx.core.context import ContextOptions, ContextRequest
    from smartctx.core.tokens import TokenCounter
    from smartctx.indexing.sources import WorkspaceSources
    from smartctx.retrieval.pipeline import build_context

    files = CASES[case]()
    counter = TokenCounter("o200k_base")
    with tempfile.TemporaryDirectory(prefix="hostile-packs-") as folder:
        root = write_tree(Path(folder) / "ws", files)
        store = indexed_store(root, Path(folder) / "index")
        try:
            sources = WorkspaceSources(root)
            seconds: list[float] = []
            pack_ms: list[float] = []
            bodies = 0
            with store.snapshot() as snapshot:
                for _ in range(rounds):
                    started = time.perf_counter()
                    for budget in BUDGETS:
                        request = ContextRequest(task=TASK, options=ContextOptions(budget_tokens=budget))
                        pack = build_context(request, snapshot, counter, sources)
                        pack_ms.append(pack.timings_ms["pack"])
                        bodies = max(bodies, len(pack.bodies))
                    seconds.append(time.perf_counter() - started)
        finally:
            store.close()
    source_kb = sum(len(text.encode()) for text in files.values()) / 1024
    figures = {"seconds": seconds, "packMs": statistics.median(pack_ms), "bodies": bodies}
    print(json.dumps({**figures, "sourceKb": source_kb}), flush=True)


def main() -> None:
    timed_cases.main(
        __file__,
        __doc__ or "",
        list(CASES),
        worker,
        timeout=300.0,
        json_path=OUT_DIR / "hostile_packs.json",
        size=("source", lambda found: f"{found['sourceKb']:,.0f} KB"),
        recorded={"budgets": BUDGETS},
    )


if __name__ == "__main__":
    main()
