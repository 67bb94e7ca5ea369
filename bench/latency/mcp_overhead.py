"""Where the time of an MCP ``get_context_for_task`` call goes besides the pipeline: each step a pack
passes through between ``build_context`` and the agent, timed in one process on real packs.

bench/latency/mcp_perf.py measures the whole call over stdio; this takes the same packs and times the
server's steps (the result as MCP content, the SDK's dump and check of it, the redaction pass every
outgoing message takes, JSON encoding) and the SDK client's (JSON decoding, its per-method result
check, the pydantic model, the output-schema check), leaving out only the pipes and the two event
loops. Each step is timed in CPU time of the thread that runs it: every step runs on one thread, and
on a machine shared with other work, wall time measures the load as much as the step.

    .venv/bin/python -m bench.latency.mcp_overhead /path/to/django --index-dir DIR --repo django/django
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types import methods

from bench.datasets import OUT_DIR, SWE_LITE, problem_statements
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.mcp.redacting import redacted_message
from smartctx.mcp.results import pack_result
from smartctx.mcp.tools import PACK_OUTPUT_SCHEMA
from smartctx.retrieval.pipeline import build_context
from smartctx.store.snapshot import IndexSnapshot

VERSION = "2025-11-25"


def timed(step: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """``step(*args, **kwargs)`` and the CPU time it took, in ms."""
    began = time.thread_time()
    value = step(*args, **kwargs)
    return value, (time.thread_time() - began) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", type=Path, required=True, help="an up-to-date index of root")
    parser.add_argument("--repo", default="django/django")
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "mcp_overhead.json")
    args = parser.parse_args()
    tasks = problem_statements(args.repo, args.data)
    tasks = tasks[: args.limit] if args.limit else tasks
    root = args.root.resolve()
    folders: Any = [SimpleNamespace(uri=root.as_uri(), root=root)]
    sources, counter = WorkspaceSources(root), TokenCounter()
    validator = jsonschema.validators.validator_for(PACK_OUTPUT_SCHEMA)(PACK_OUTPUT_SCHEMA)
    steps: dict[str, list[float]] = {}
    sizes: list[int] = []
    index_path = args.index_dir / "index-v1.sqlite"
    for task in tasks:
        with IndexSnapshot(index_path) as snapshot:
            request = ContextRequest(task, ContextOptions(budget_tokens=args.budget))
            pack, pipeline_ms = timed(build_context, request, snapshot, counter, sources)
        result, result_ms = timed(pack_result, pack, folders)
        dumped, dump_ms = timed(result.model_dump, by_alias=True, mode="json", exclude_none=True)
        # The SDK's server checks a spec method's result against the protocol before it sends it.
        raw_result, sieve_ms = timed(methods.serialize_server_result, "tools/call", VERSION, dumped)
        message = SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=1, result=raw_result))
        redacted, redact_ms = timed(redacted_message, message)
        line, encode_ms = timed(redacted.message.model_dump_json, by_alias=True, exclude_unset=True)
        decoded, decode_ms = timed(json.loads, line)
        _, check_ms = timed(methods.validate_server_result, "tools/call", VERSION, decoded["result"])
        model, model_ms = timed(types.CallToolResult.model_validate, decoded["result"], by_name=False)
        _, schema_ms = timed(lambda content: list(validator.iter_errors(content)), model.structured_content)
        sizes.append(len(line))
        for name, value in (
            ("pipeline (build_context)", pipeline_ms),
            ("server: pack as MCP content (pack_result)", result_ms),
            ("server: SDK result dump and protocol check", dump_ms + sieve_ms),
            ("server: redaction pass over the message", redact_ms),
            ("server: JSON encoding", encode_ms),
            ("client: JSON decoding", decode_ms),
            ("client: per-method result check", check_ms),
            ("client: pydantic CallToolResult", model_ms),
            ("client: output-schema check (jsonschema)", schema_ms),
        ):
            steps.setdefault(name, []).append(value)
    # The first pack loads the tokenizer and warms caches: left out as in mcp_perf.py.
    rows = {
        name: {"p50_ms": statistics.median(values[1:]), "mean_ms": statistics.fmean(values[1:])}
        for name, values in steps.items()
    }
    print(f"{len(tasks) - 1} packs, message {statistics.median(sizes) / 1000:.0f} kB median\n")
    print("| step | CPU p50 ms | CPU mean ms |")
    print("|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['p50_ms']:.1f} | {row['mean_ms']:.1f} |")
    outside = sum(row["mean_ms"] for name, row in rows.items() if not name.startswith("pipeline"))
    print(f"\noutside the pipeline: {outside:.1f} ms mean per call")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "root": str(root),
                "tasks": len(tasks),
                "steps": rows,
                "message_bytes_p50": statistics.median(sizes),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
