"""A CI-sized slice of bench/fuzz_lsp.py: generated faulty frames interleaved with valid requests over
real stdio, and not one crash, hang, unanswered request or wrong answer."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

FUZZ = Path(__file__).resolve().parents[2] / "bench" / "fuzz_lsp.py"
# A few seconds on the project's 2-core machine (well inside the 60 s budget); the bench runs 6,000.
SLICE_FRAMES = 1000


def fuzz_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_lsp", FUZZ)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_fuzz_slice_finds_no_fault() -> None:
    tally = fuzz_module().run_fuzz(frames=SLICE_FRAMES, seed=7)
    assert tally.frames >= SLICE_FRAMES
    assert (tally.crashes, tally.hangs, tally.missing, tally.no_id, tally.wrong) == (0, 0, 0, 0, 0), (
        tally.examples
    )
