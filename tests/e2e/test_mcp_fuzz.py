"""bench/fuzz_mcp.py in CI: every wrong-typed argument of every tool and every envelope no client
library writes, through the MCP SDK's client over real stdio, each answered, none with internals."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import anyio

FUZZ = Path(__file__).resolve().parents[2] / "bench" / "fuzz_mcp.py"
# The planned calls alone (each argument with each wrong value, each raw envelope): about 15 s.
CALLS = 0


def fuzz_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_mcp", FUZZ)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_fuzzed_mcp_call_is_answered_without_internals() -> None:
    report = anyio.run(fuzz_module().fuzz, CALLS, 7, 30.0, 0)
    assert report["calls"] >= 200
    assert report["answered"] == report["calls"], report["bad"]
    assert (report["internal_errors"], report["leaks"], report["probes_failed"]) == (0, 0, 0), report["bad"]
    assert report["tracebacks_logged"] == 0
