"""A request's signals as one matrix, and a candidate's row of it read as a mapping.

A request ranks hundreds of definitions and a hundred or so files. Their signals are the columns of
one array, so the weighted sums that rank them are a few vector operations rather than a dictionary
per candidate; a candidate's signals and parts become a dictionary only when something reads them
(a pack explains the few dozen items it shows; a training dump reads them all).

Only additions and multiplications run on the array, which IEEE 754 makes exact to the bit on every
machine, and each sum adds its columns one at a time in a fixed order, so a ranking never depends on
the CPU it runs on. Logarithms are taken by ``math`` before the values enter the array.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from smartctx.retrieval.rank_model import LinearWeights

Vector = NDArray[np.float64]
NO_VALUES: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True)
class SignalTable:
    """Named columns of values, one row per candidate."""

    names: tuple[str, ...]
    values: NDArray[np.float64]

    @classmethod
    def of(cls, columns: Mapping[str, Vector | float], rows: int) -> SignalTable:
        """The table of these columns, in their order; a number stands for a column of it."""
        values = np.empty((rows, len(columns)), dtype=np.float64)
        for index, column in enumerate(columns.values()):
            values[:, index] = column
        return cls(tuple(columns), values)

    @classmethod
    def of_rows(cls, names: tuple[str, ...], rows: Sequence[Sequence[float]]) -> SignalTable:
        """The table of these rows, each holding a value for every name in order."""
        return cls(names, np.array(rows, dtype=np.float64).reshape(len(rows), len(names)))

    def weighed(self, weights: LinearWeights) -> SignalTable:
        """The parts: each column a non-zero weight names, times that weight, in the weights' order."""
        places = {name: index for index, name in enumerate(self.names)}
        named = [(name, weight) for name, weight in weights.nonzero if name in places]
        parts = np.empty((len(self.values), len(named)), dtype=np.float64)
        for index, (name, weight) in enumerate(named):
            parts[:, index] = self.values[:, places[name]] * weight
        return SignalTable(tuple(name for name, _ in named), parts)

    def total(self, leaving_out: str | None = None) -> Vector:
        """Each row's sum, its columns added one at a time from the first (``leaving_out`` not)."""
        total = np.zeros(len(self.values), dtype=np.float64)
        for index, name in enumerate(self.names):
            if name != leaving_out:
                total += self.values[:, index]
        return total

    def row(self, index: int, then: Mapping[str, float] = NO_VALUES) -> Row:
        """One row, read as a mapping of its non-zero values, then ``then``."""
        return Row(self, index, then)


class Row(Mapping[str, float]):
    """One row's non-zero values by column name, followed by ``then`` (values found after the
    table, in their order); made into a dictionary the first time it is read."""

    __slots__ = ("_index", "_made", "_table", "_then")

    def __init__(self, table: SignalTable, index: int, then: Mapping[str, float]) -> None:
        self._table = table
        self._index = index
        self._then = then
        self._made: dict[str, float] | None = None

    def _values(self) -> dict[str, float]:
        if self._made is None:
            row: list[float] = self._table.values[self._index].tolist()
            made = {name: value for name, value in zip(self._table.names, row, strict=True) if value}
            made.update(self._then)
            self._made = made
        return self._made

    def __getitem__(self, name: str) -> float:
        return self._values()[name]

    # Asked of the best definition of every file (files.py's reasons): the dictionary answers
    # without the KeyError that Mapping's own ``get`` and ``in`` go through.
    def __contains__(self, name: object) -> bool:
        return name in self._values()

    def get(self, name: str, default: float = 0.0) -> float:  # type: ignore[override]
        return self._values().get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())

    def __repr__(self) -> str:
        return repr(self._values())


def column(values: Sequence[float]) -> Vector:
    return np.asarray(values, dtype=np.float64)
