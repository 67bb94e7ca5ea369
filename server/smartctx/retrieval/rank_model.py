"""The weights that turn ranking signals into scores, for definitions and for files.

A signal is one fact about a candidate on a fixed scale (a normalised BM25 score, 1 for "the task
names it", the share of its name's words the task uses); a part is a signal times its weight, and a
score is the sum of its parts, so every score explains itself part by part. The weights are data:
``rank_model.json``, written by ``bench/quality/train_ranker.py`` from tasks mined from the history of public
repositories (its ``trainedOn`` names them and their pinned commits), or set by hand. A weight the
file does not name is 0: the signal is computed and kept, but adds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

MODEL_FILE = "rank_model.json"
MODEL_FORMAT = 1


@dataclass(frozen=True)
class LinearWeights:
    """One weight per signal name."""

    weights: Mapping[str, float]
    # The non-zero weights, in the weights' order: the only ones a part can come from.
    nonzero: tuple[tuple[str, float], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        nonzero = tuple((name, weight) for name, weight in self.weights.items() if weight)
        object.__setattr__(self, "nonzero", nonzero)

    def parts(self, signals: Mapping[str, float]) -> dict[str, float]:
        """Each non-zero signal's contribution (weight times value), by signal name, in the order of
        the weights."""
        return {name: weight * value for name, weight in self.nonzero if (value := signals.get(name, 0.0))}

    def weight(self, name: str) -> float:
        return self.weights.get(name, 0.0)


@dataclass(frozen=True)
class RankModel:
    definitions: LinearWeights
    files: LinearWeights
    # Where the weights come from: the repositories and commits they were learned from, and how
    # they measured on repositories held out of the training (free-form, for people).
    provenance: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RankModel:
        if data.get("format") != MODEL_FORMAT:
            raise ValueError(f"rank model format {data.get('format')!r}, expected {MODEL_FORMAT}")
        return cls(
            definitions=LinearWeights(_weights(data, "definitions")),
            files=LinearWeights(_weights(data, "files")),
            provenance=dict(data.get("provenance", {})),
        )


def _weights(data: Mapping[str, Any], section: str) -> dict[str, float]:
    weights = data.get(section)
    if isinstance(weights, dict) and all(isinstance(value, (int, float)) for value in weights.values()):
        return {str(name): float(value) for name, value in weights.items()}
    raise ValueError(f"rank model section {section!r} must map signal names to numbers")


@cache
def shipped_model() -> RankModel:
    """The model packaged with smartctx (read once)."""
    text = resources.files("smartctx.retrieval").joinpath(MODEL_FILE).read_text(encoding="utf-8")
    return RankModel.from_json(json.loads(text))
