"""bench/reliability/fuzz_mcp.py in CI: every wrong-typed argument of every tool and every envelope no client
library writes, through the MCP SDK's client over real stdio, each answered, none with internals."""

from __future__ import annotations

import anyio

from bench.reliability import fuzz_mcp

# The planned calls alone (each argument with each wrong value, each raw envelope): about 15 s.
CALLS = 0


def test_every_fuzzed_mcp_call_is_answered_without_internals() -> None:
    report = anyio.run(fuzz_mcp.fuzz, CALLS, 7, 30.0, 0)
    assert report["calls"] >= 200
    assert report["answered"] == report["calls"], report["bad"]
    assert (report["internal_errors"], report["leaks"], report["probes_failed"]) == (0, 0, 0), report["bad"]
    assert report["tracebacks_logged"] == 0
