"""The two percentile rules of bench/stats.py: each keeps its figures comparable with the ones
bench/HISTORY.md recorded, so where they differ is pinned here."""

from __future__ import annotations

import math

from bench import stats

TWENTY = [float(value) for value in range(1, 21)]


def test_the_latency_p95_of_twenty_values_is_the_largest_and_the_quality_p95_the_one_below() -> None:
    assert stats.percentile(TWENTY, 0.95) == 20.0
    assert stats.nearest_rank(TWENTY, 95) == 19.0


def test_the_latency_p50_is_the_upper_middle_value_and_the_median_halfway() -> None:
    assert stats.percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 3.0
    assert stats.median_and_p95([4.0, 1.0, 3.0, 2.0]) == (2.5, 4.0)


def test_no_values_give_no_figure() -> None:
    assert math.isnan(stats.percentile([], 0.95))
    assert math.isnan(stats.mean([]))
