"""A CI-sized slice of bench/reliability/fuzz_lsp.py: generated faulty frames interleaved with valid
requests over real stdio, and not one crash, hang, unanswered request or wrong answer."""

from __future__ import annotations

from bench.reliability import fuzz_lsp

# A few seconds on the project's 2-core machine (well inside the 60 s budget); the bench runs 6,000.
SLICE_FRAMES = 1000


def test_a_fuzz_slice_finds_no_fault() -> None:
    tally = fuzz_lsp.run_fuzz(frames=SLICE_FRAMES, seed=7)
    assert tally.frames >= SLICE_FRAMES
    assert (tally.crashes, tally.hangs, tally.missing, tally.no_id, tally.wrong) == (0, 0, 0, 0, 0), (
        tally.examples
    )
