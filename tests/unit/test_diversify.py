"""Which ranked items become bodies and in what order (retrieval/diversify.py), on made-up rankings."""

from __future__ import annotations

from tests.node_rows import function_row

from smartctx.core.context import ContextOptions
from smartctx.retrieval.diversify import diversify, limits_for
from smartctx.retrieval.files import RankedFile
from smartctx.retrieval.score import ScoredNode


def scored(node_id: int, path: str, score: float) -> ScoredNode:
    node = function_row(node_id, path, f"f{node_id}", node_id * 10, node_id * 10 + 5)
    return ScoredNode(node, score, {"bm25": score})


def test_the_first_ranked_file_leads_then_each_file_s_bodies_together() -> None:
    """The file ranking's first file gives the first bodies, best first, though another file has
    the best-scored definition; then each file's bodies together, the files in the order of their
    best body."""
    ranked = [
        scored(1, "tools/report.py", 2.8),
        scored(2, "accounts/ledger.py", 2.6),
        scored(3, "accounts/ledger.py", 2.5),
        scored(4, "misc/other.py", 2.0),
        scored(5, "accounts/ledger.py", 1.9),
    ]
    files = [
        RankedFile("accounts/ledger.py", 3.0, {}, ()),
        RankedFile("tools/report.py", 2.8, {}, ()),
        RankedFile("misc/other.py", 2.0, {}, ()),
    ]
    selection = diversify(ranked, files, limits_for(ContextOptions(budget_tokens=8000)), frozenset())
    assert [item.node.id for item in selection.bodies] == [2, 3, 5, 1, 4]


def test_the_first_ranked_file_has_a_body_though_its_best_definition_scores_below_the_others() -> None:
    """A long task's one rare name: its file ranks first as a whole, but its one definition scores
    below as many others as the pack has bodies. It still leads the pack."""
    ranked = [scored(number, f"service/part_{number:02d}.py", 2.0 - number / 100) for number in range(1, 21)]
    ranked.append(scored(30, "service/discovery/zeroconf.py", 1.5))
    files = [RankedFile("service/discovery/zeroconf.py", 6.0, {}, ())] + [
        RankedFile(item.node.path, item.score, {}, ()) for item in ranked[:20]
    ]
    limits = limits_for(ContextOptions(budget_tokens=4000))
    selection = diversify(ranked, files, limits, frozenset())
    assert len(selection.bodies) == limits.max_bodies
    assert [item.node.id for item in selection.bodies][:2] == [30, 1]


def test_the_first_ranked_file_takes_three_times_the_bodies_its_later_ones_after_the_other_files() -> None:
    """At 8k one file takes at most four bodies, but the file ranked first may take twelve: its fifth
    to twelfth best definitions are bodies too, after every other file's bodies, which keep their
    places."""
    ranked = [scored(number, "accounts/ledger.py", 3.0 - number / 50) for number in range(1, 15)]
    ranked += [scored(20 + n, f"tools/report_{n}.py", 2.55 - n / 100) for n in range(1, 4)]
    ranked.sort(key=lambda item: -item.score)
    files = [RankedFile("accounts/ledger.py", 5.0, {}, ())] + [
        RankedFile(f"tools/report_{number}.py", 2.0, {}, ()) for number in range(1, 4)
    ]
    limits = limits_for(ContextOptions(budget_tokens=8000))
    assert limits.max_bodies_per_file == 4
    selection = diversify(ranked, files, limits, frozenset())
    assert [item.node.id for item in selection.bodies] == [1, 2, 3, 4, 21, 22, 23, *range(5, 13)]
    assert {item.node.id for item in selection.summaries} >= {13, 14}
