"""Fuzz ``smartctx mcp`` over real stdio with the MCP SDK's own client: every argument of every tool
given values of the wrong type, size or text (a lone surrogate, 5,000 characters, a path outside),
combinations of them, and envelopes no client library writes (arguments that are no object, a tool
name that is no string, params of the wrong shape). Prints one table and writes JSON to
bench/out/fuzz_mcp.json; exits 1 when any call went wrong.

    .venv/bin/python -m bench.reliability.fuzz_mcp --calls 300 --seed 1 --big-task-mb 50

``--big-task-mb`` ends the run with one task of that many megabytes (a log pasted whole) and reports
how long it took, how large the answer was and the server's peak memory.

The client writes as JavaScript's ``JSON.stringify`` does (tests/mcp_wire.py), so a lone surrogate
reaches the server as the escape ``"\\ud800"``. What counts as wrong:

- unanswered: no answer within ``--wait-s``; crash: the server process ended;
- internal: a JSON-RPC error of code 0 or -32603 (InternalError): a fault of the server's, not the caller's;
- leak: an answer that carries internals (a traceback, an OS error's ``[Errno …]``, an object's repr);
- probe failed: the valid call made after every fuzzed one did not get a pack.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from tests.mcp_wire import Wire, js_stdio

from bench.datasets import CHECKOUT, OUT_DIR
from smartctx.mcp.tools import (
    CONTEXT_INPUT_SCHEMA,
    EXPAND_INPUT_SCHEMA,
    EXPAND_SYMBOL,
    GET_CONTEXT_FOR_TASK,
    INDEX_STATUS,
)

FIXTURE = CHECKOUT / "tests" / "fixtures" / "shop"

INTERNALS = ("Traceback", "[Errno", "object at 0x", 'File "/')
PROBE = ("get_context_for_task", {"task": "charge_card raises PaymentDeclined"})

# Every argument each tool's schema declares, so a new one is fuzzed too; index_status declares none
# and gets one it does not know.
TOOL_ARGUMENTS = {
    GET_CONTEXT_FOR_TASK: tuple(CONTEXT_INPUT_SCHEMA["properties"]),
    EXPAND_SYMBOL: tuple(EXPAND_INPUT_SCHEMA["properties"]),
    INDEX_STATUS: ("verbose",),
}
# Values of every JSON type, edge sizes and hostile text.
WRONG_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    7,
    2**31,
    10**30,
    1.5,
    float("nan"),
    "",
    " ",
    "x",
    "\ud800",
    "cart \udfff total",
    "a" * 5000,
    "../../etc/passwd",
    "file:///etc/passwd",
    "shop/orders.py\x00",
    [],
    [1, None],
    ["shop/orders.py"] * 300,
    {},
    {"path": "shop/orders.py"},
)
# Envelopes the SDK's client cannot write: each a tools/call line with a string id of its own.
RAW_PARAMS: tuple[str, ...] = (
    '{"name":"get_context_for_task","arguments":"cart"}',
    '{"name":"get_context_for_task","arguments":5}',
    '{"name":"get_context_for_task","arguments":[]}',
    '{"name":"get_context_for_task","arguments":null}',
    '{"name":5,"arguments":{"task":"cart"}}',
    '{"name":null}',
    '{"name":["index_status"]}',
    '{"arguments":{"task":"cart"}}',
    '"cart"',
    "[]",
    '{"name":"\\ud800","arguments":{}}',
    '{"name":"get_context_for_task","arguments":{"\\ud800":"cart"}}',
    '{"name":"get_context_for_task","arguments":{"task":"cart","budgetTokens":1e999}}',
    '{"name":"get_context_for_task","arguments":{"task":' + "[" * 300 + "]" * 300 + "}}",
)


def calls(count: int, rng: random.Random) -> list[tuple[str, str, Any]]:
    """(kind, tool, arguments or raw params): every argument with every wrong value, every raw
    envelope, then random combinations until ``count``."""
    planned: list[tuple[str, str, Any]] = []
    for tool, names in TOOL_ARGUMENTS.items():
        for name in names:
            for value in WRONG_VALUES:
                base = {"task": "cart total"} if tool == "get_context_for_task" and name != "task" else {}
                planned.append(("argument", tool, {**base, name: value}))
    planned.extend(("raw", "tools/call", params) for params in RAW_PARAMS)
    while len(planned) < count:
        tool = rng.choice(list(TOOL_ARGUMENTS))
        names = rng.sample(TOOL_ARGUMENTS[tool], min(len(TOOL_ARGUMENTS[tool]), rng.randint(1, 3)))
        planned.append(("combination", tool, {name: rng.choice(WRONG_VALUES) for name in names}))
    return planned


def internals(text: str) -> bool:
    return any(marker in text for marker in INTERNALS)


async def one(
    client: Client, wire: Wire, kind: str, tool: str, payload: Any, number: int, wait_s: float
) -> str:
    """The outcome of one fuzzed call: result, tool-error, error <code>, or what went wrong."""
    if kind == "raw":
        request_id = f"fuzz-{number}"
        await wire.send_line(f'{{"jsonrpc":"2.0","id":"{request_id}","method":"{tool}","params":{payload}}}')
        answer = await wire.answer(request_id, wait_s)
        if answer is None:
            return "unanswered"
        if "error" in answer:
            code = answer["error"].get("code")
            if code in (0, types.INTERNAL_ERROR):
                return "internal"
            return "leak" if internals(json.dumps(answer)) else f"error {code}"
        if internals(json.dumps(answer)):
            return "leak"
        return "tool-error" if answer["result"].get("isError") else "result"
    try:
        with anyio.fail_after(wait_s):
            result = await client.call_tool(tool, payload)
    except TimeoutError:
        return "unanswered"
    except MCPError as error:
        if error.code in (0, types.INTERNAL_ERROR):
            return "internal"
        return "leak" if internals(error.message) else f"error {error.code}"
    text = " ".join(block.text for block in result.content if isinstance(block, types.TextContent))
    if internals(text) and result.is_error:
        return "leak"
    return "tool-error" if result.is_error else "result"


def peak_rss_mb(pid: int) -> float:
    """The peak resident memory of a process so far (Linux's VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def big_task(client: Client, wire: Wire, megabytes: int, wait_s: float) -> dict[str, Any]:
    """One task of ``megabytes`` MB whose last line names a function: seconds, answer size, the
    server's peak memory before and after, and what the pack says of the task."""
    line = "INFO worker heartbeat ok, queue depth nominal\n"
    task = line * (megabytes * 1_000_000 // len(line)) + "Traceback: charge_card raised PaymentDeclined"
    before_mb = peak_rss_mb(wire.process.pid)
    started = time.perf_counter()
    with anyio.fail_after(wait_s * 10):
        result = await client.call_tool("get_context_for_task", {"task": task})
    seconds = time.perf_counter() - started
    pack = result.structured_content or {}
    answer_bytes = len(json.dumps(pack)) + sum(
        len(block.text) for block in result.content if isinstance(block, types.TextContent)
    )
    return {
        "task_mb": round(len(task) / 1e6, 1),
        "seconds": round(seconds, 2),
        "answer_mb": round(answer_bytes / 1e6, 3),
        "task_description_chars": len(pack.get("taskDescription", "")),
        "warnings": [warning["code"] for warning in pack.get("metadata", {}).get("warnings", [])],
        "first_body": (pack.get("bodies") or [{}])[0].get("id"),
        "peak_rss_mb_before": round(before_mb),
        "peak_rss_mb_after": round(peak_rss_mb(wire.process.pid)),
    }


async def fuzz(count: int, seed: int, wait_s: float, big_task_mb: int) -> dict[str, Any]:
    rng = random.Random(seed)
    planned = calls(count, rng)
    outcomes: Counter[tuple[str, str, str]] = Counter()
    bad: list[dict[str, Any]] = []
    probes_failed = 0
    with (
        tempfile.TemporaryDirectory() as folder,
        tempfile.NamedTemporaryFile("w+", suffix=".stderr") as stderr,
    ):
        root = Path(folder) / "shop"
        shutil.copytree(FIXTURE, root)
        command = [
            sys.executable,
            "-m",
            "smartctx",
            "mcp",
            "--root",
            str(root),
            "--index-dir",
            f"{folder}/index",
        ]
        started = time.perf_counter()
        async with js_stdio(command, None, stderr) as wire, Client(wire.streams(), mode="legacy") as client:
            while (await client.call_tool("index_status", {})).structured_content["state"] != "ready":  # type: ignore[index]
                await anyio.sleep(0.1)
            for number, (kind, tool, payload) in enumerate(planned):
                outcome = await one(client, wire, kind, tool, payload, number, wait_s)
                if wire.process.returncode is not None:
                    outcome = "crash"
                outcomes[(kind, tool, outcome)] += 1
                if outcome in ("unanswered", "crash", "internal", "leak"):
                    bad.append(
                        {"kind": kind, "tool": tool, "payload": repr(payload)[:200], "outcome": outcome}
                    )
                if outcome == "crash":
                    break
                probe = await one(client, wire, "argument", *PROBE, number, wait_s)
                probes_failed += probe != "result"
            big = await big_task(client, wire, big_task_mb, wait_s) if big_task_mb else None
        seconds = time.perf_counter() - started
        stderr.seek(0)
        tracebacks = stderr.read().count("Traceback")
    answered = sum(
        count for (_, _, outcome), count in outcomes.items() if outcome not in ("unanswered", "crash")
    )
    return {
        "calls": sum(outcomes.values()),
        "answered": answered,
        "unanswered": sum(c for (_, _, o), c in outcomes.items() if o == "unanswered"),
        "crashes": sum(c for (_, _, o), c in outcomes.items() if o == "crash"),
        "internal_errors": sum(c for (_, _, o), c in outcomes.items() if o == "internal"),
        "leaks": sum(c for (_, _, o), c in outcomes.items() if o == "leak"),
        "probes_failed": probes_failed,
        "tracebacks_logged": tracebacks,
        "seconds": round(seconds, 1),
        "big_task": big,
        "outcomes": [
            {"kind": kind, "tool": tool, "outcome": outcome, "count": n}
            for (kind, tool, outcome), n in sorted(outcomes.items())
        ],
        "bad": bad[:50],
    }


def table(report: dict[str, Any]) -> str:
    lines = ["| kind | tool | outcome | calls |", "|---|---|---|---|"]
    lines += [
        f"| {row['kind']} | {row['tool']} | {row['outcome']} | {row['count']} |" for row in report["outcomes"]
    ]
    lines.append("")
    lines.append(
        f"{report['calls']} calls in {report['seconds']} s: {report['answered']} answered, "
        f"{report['unanswered']} unanswered, {report['crashes']} crashes, "
        f"{report['internal_errors']} internal errors, {report['leaks']} answers with internals, "
        f"{report['probes_failed']} probes failed, "
        f"{report['tracebacks_logged']} tracebacks in the server's log"
    )
    big = report["big_task"]
    if big:
        lines.append(
            f"a {big['task_mb']} MB task: {big['seconds']} s, answer {big['answer_mb']} MB, taskDescription "
            f"{big['task_description_chars']:,} characters, warnings {big['warnings']}, first body "
            f"{big['first_body']}, server peak RSS {big['peak_rss_mb_before']} -> "
            f"{big['peak_rss_mb_after']} MB"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="fuzzed calls (at least the planned ones)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--wait-s", type=float, default=30.0, help="how long a call may take to be answered")
    parser.add_argument("--big-task-mb", type=int, default=50, help="then one task this large (0: none)")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "fuzz_mcp.json")
    args = parser.parse_args()
    report = anyio.run(fuzz, args.calls, args.seed, args.wait_s, args.big_task_mb)
    print(table(report))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"date": time.strftime("%Y-%m-%d"), "seed": args.seed, **report}, indent=1)
    )
    print(f"\nwritten: {args.json}")
    wrong = report["unanswered"] + report["crashes"] + report["internal_errors"] + report["leaks"]
    return 1 if wrong or report["probes_failed"] or report["tracebacks_logged"] else 0


if __name__ == "__main__":
    sys.exit(main())
