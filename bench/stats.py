"""The statistics every benchmark reports: percentiles of latencies, and means and percentiles of
scored packs that say "no value" rather than fail when a group is empty.

Two percentile rules are in use, each kept so that a figure is comparable with the ones recorded
before it in bench/HISTORY.md: the latency tables take the value ``⌊n·share⌋`` places into the
sorted values (:func:`percentile`), the quality reports the nearest rank (:func:`nearest_rank`).
They differ only in which of two neighbouring values they pick (p95 of 20 values: the largest, or
the one below it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def percentile(values: Sequence[float], share: float) -> float:
    """The value ``⌊n·share⌋`` places into the sorted values (``share`` from 0 to 1; the largest for
    1), the rule of the latency tables; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def median_and_p95(values: Sequence[float]) -> tuple[float, float]:
    """The p50 and p95 of a latency table: the median (halfway between the middle two of an even
    count) and :func:`percentile` at 0.95."""
    return statistics.median(values), percentile(values, 0.95)


def nearest_rank(values: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile (``percent`` from 0 to 100), the rule of the quality reports; NaN
    for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    index = max(0, math.ceil(percent / 100 * len(ordered)) - 1)
    return ordered[index]


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; NaN for no values."""
    return sum(values) / len(values) if values else math.nan
