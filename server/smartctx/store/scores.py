"""Graph scores kept with the index: PageRank over the edge graph, and usage.

Plain numpy/scipy over arrays the writer loads; scipy's sparse power iteration takes about a second
on 525k nodes and 3.9M edges on these machines (architecture.md, *Measured on these machines*),
where networkx takes 47 s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
from scipy import sparse

from smartctx.core.model import RefKind

PAGERANK_DAMPING = 0.85
PAGERANK_TOLERANCE = 1e-10
PAGERANK_MAX_ITERATIONS = 100

# How strongly each edge kind passes rank on. Containment links a module to its definitions both
# ways, so an important module lifts what it holds, but weakly: a call is a stronger vote.
PAGERANK_EDGE_WEIGHTS: Mapping[str, float] = {
    RefKind.CALL.value: 1.0,
    RefKind.REFERENCE.value: 0.5,
    RefKind.INHERIT.value: 1.0,
    RefKind.IMPORT.value: 0.5,
    RefKind.CONTAINS.value: 0.2,
}

# Usage counts only what uses a definition (architecture.md, *The index*): calls, and other
# references at half.
USAGE_EDGE_WEIGHTS: Mapping[str, float] = {
    RefKind.CALL.value: 1.0,
    RefKind.REFERENCE.value: 0.5,
    RefKind.INHERIT.value: 1.0,
}

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def pagerank(node_count: int, sources: IntArray, targets: IntArray, weights: FloatArray) -> FloatArray:
    """PageRank of nodes ``0..node_count-1`` over weighted edges; dangling rank spreads evenly.

    The result sums to 1; the tolerance is on the L1 change per iteration, tight enough that the
    order of the top nodes is settled (networkx's default tolerance stops too early at this size).
    """
    if node_count == 0:
        return np.zeros(0)
    matrix = sparse.csr_matrix((weights, (sources, targets)), shape=(node_count, node_count))
    out_weight = np.asarray(matrix.sum(axis=1)).ravel()
    dangling = out_weight == 0
    inverse = np.divide(1.0, out_weight, out=np.zeros(node_count), where=~dangling)
    transition = sparse.diags(inverse) @ matrix
    transposed = transition.T.tocsr()
    rank = np.full(node_count, 1.0 / node_count)
    teleport = (1.0 - PAGERANK_DAMPING) / node_count
    for _ in range(PAGERANK_MAX_ITERATIONS):
        dangling_share = PAGERANK_DAMPING * rank[dangling].sum() / node_count
        updated = PAGERANK_DAMPING * (transposed @ rank) + dangling_share + teleport
        change = float(np.abs(updated - rank).sum())
        rank = updated
        if change < PAGERANK_TOLERANCE:
            break
    result: FloatArray = rank / rank.sum()
    return result


def usage(node_count: int, targets: IntArray, weights: FloatArray) -> FloatArray:
    """Weighted count of incoming uses per node."""
    result: FloatArray = np.bincount(targets, weights=weights, minlength=node_count).astype(np.float64)
    return result


class ScoreGraph:
    """The edges PageRank and usage are computed over, given in as many parts as the caller reads
    them in (a team's finish step reads millions), over nodes numbered ``0..node_count-1``."""

    def __init__(self, node_count: int) -> None:
        self.node_count = node_count
        self._sources: list[IntArray] = []
        self._targets: list[IntArray] = []
        self._rank_weights: list[FloatArray] = []
        self._use_weights: list[FloatArray] = []
        self._contains: list[npt.NDArray[np.bool_]] = []

    def add(
        self, sources: IntArray, targets: IntArray, kinds: Sequence[str], confidences: Sequence[float]
    ) -> None:
        """Edges from ``sources`` to ``targets`` (node numbers), each of a kind and a confidence."""
        self._sources.append(sources)
        self._targets.append(targets)
        self._rank_weights.append(
            np.fromiter(
                (
                    PAGERANK_EDGE_WEIGHTS[kind] * confidence
                    for kind, confidence in zip(kinds, confidences, strict=True)
                ),
                np.float64,
                len(kinds),
            )
        )
        self._use_weights.append(
            np.fromiter(
                (
                    USAGE_EDGE_WEIGHTS.get(kind, 0.0) * confidence
                    for kind, confidence in zip(kinds, confidences, strict=True)
                ),
                np.float64,
                len(kinds),
            )
        )
        self._contains.append(
            np.fromiter((kind == RefKind.CONTAINS.value for kind in kinds), bool, len(kinds))
        )

    def scores(self) -> tuple[FloatArray, FloatArray]:
        """Each node's PageRank and usage."""
        sources = np.concatenate([np.zeros(0, np.int64), *self._sources])
        targets = np.concatenate([np.zeros(0, np.int64), *self._targets])
        rank_weights = np.concatenate([np.zeros(0), *self._rank_weights])
        contains = np.concatenate([np.zeros(0, bool), *self._contains])
        # Containment also passes rank upwards, so a module is as important as what it holds.
        ranks = pagerank(
            self.node_count,
            np.concatenate([sources, targets[contains]]),
            np.concatenate([targets, sources[contains]]),
            np.concatenate([rank_weights, rank_weights[contains]]),
        )
        uses = usage(self.node_count, targets, np.concatenate([np.zeros(0), *self._use_weights]))
        return ranks, uses
