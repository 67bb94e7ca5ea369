"""Editor focus in the ranking, on real indexes: it settles what the task leaves close, and a task
about another part of the code still wins. ``pytest --update-golden`` rewrites the golden file."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from smartctx.core.context import ContextPack, ContextRequest, Focus, RecentEdit
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.index_store import IndexStore
from workspaces import write_tree

SHOP = Path(__file__).parent.parent / "fixtures" / "shop"
GOLDEN = Path(__file__).parent.parent / "fixtures" / "goldens" / "focus_ranking.json"

# Two subsystems with the same helper, word for word: only the editor can tell which one is meant.
AMOUNTS = 'def round_amount(value):\n    """Round an amount of money to whole cents."""\n' + (
    "    return round(value, 2)\n"
)
TWINS = {
    "alpha/amounts.py": AMOUNTS,
    "alpha/ledger.py": "from alpha.amounts import round_amount\n\n\n"
    'def close_ledger(entries):\n    """Close the books."""\n    return [round_amount(e) for e in entries]\n',
    "beta/amounts.py": AMOUNTS,
    "beta/report.py": "from beta.amounts import round_amount\n\n\n"
    'def monthly_report(rows):\n    """One line per month."""\n    return [round_amount(r) for r in rows]\n',
}
TWIN_TASK = "round an amount of money to whole cents"
DECLINED = "charge_card should raise PaymentDeclined when the gateway refuses"

# The shop's inventory in the editor: the active file with the cursor in reserve_stock, orders.py
# beside it, both edited minutes ago.
IN_INVENTORY = Focus(
    active_path="shop/inventory.py",
    cursor_line=12,
    visible_paths=("shop/orders.py",),
    recent_edits=(RecentEdit("shop/inventory.py", 60.0), RecentEdit("shop/orders.py", 300.0)),
)
# Each case: the workspace, the task and the focus.
CASES: dict[str, tuple[str, str, Focus]] = {
    "twins, no focus": ("twins", TWIN_TASK, Focus()),
    "twins, beta's report active": ("twins", TWIN_TASK, Focus(active_path="beta/report.py", cursor_line=5)),
    "twins, beta's report open": ("twins", TWIN_TASK, Focus(open_paths=("beta/report.py",))),
    "twins, beta's report edited": (
        "twins",
        TWIN_TASK,
        Focus(recent_edits=(RecentEdit("beta/report.py", 30.0),)),
    ),
    "declined, no focus": ("shop", DECLINED, Focus()),
    "declined, working on inventory": ("shop", DECLINED, IN_INVENTORY),
    "total, working on inventory": ("shop", "the total is wrong", IN_INVENTORY),
}


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, IndexStore]]]:
    base = tmp_path_factory.mktemp("focus")
    roots = {"twins": write_tree(base / "twins", TWINS), "shop": base / "shop"}
    shutil.copytree(SHOP, roots["shop"])
    opened: dict[str, tuple[Path, IndexStore]] = {}
    for name, root in roots.items():
        store = IndexStore(root, base / f"{name}-index")
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        opened[name] = (root, store)
    yield opened
    for _, store in opened.values():
        store.close()


def pack_for(workspaces: dict[str, tuple[Path, IndexStore]], case: str) -> ContextPack:
    name, task, focus = CASES[case]
    root, store = workspaces[name]
    with store.snapshot() as snapshot:
        return build_context(
            ContextRequest(task, focus=focus), snapshot, TokenCounter(), WorkspaceSources(root)
        )


def test_focus_ranking_goldens(workspaces: dict[str, tuple[Path, IndexStore]], update_golden: bool) -> None:
    actual = {}
    for case in CASES:
        pack = pack_for(workspaces, case)
        actual[case] = {
            "bodies": [body.id for body in pack.bodies],
            "summaries": [summary.id for summary in pack.summaries[:5]],
        }
    if update_golden:
        GOLDEN.write_text(json.dumps(actual, indent=2) + "\n")
    assert actual == json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("case", [case for case in CASES if case.startswith("twins, beta")])
def test_an_open_files_neighbour_wins_a_tie(
    workspaces: dict[str, tuple[Path, IndexStore]], case: str
) -> None:
    unfocused = pack_for(workspaces, "twins, no focus").bodies
    focused = pack_for(workspaces, case).bodies

    # Without focus the tie goes to the first path; the editor's file calls beta's twin.
    assert unfocused[0].id == "alpha/amounts.py::round_amount"
    assert focused[0].id == "beta/amounts.py::round_amount"
    assert focused[0].score_parts["focusNear"] > 0
    assert focused[0].score_parts["focusFile"] > 0
    assert (
        "focusFile" not in next(body for body in focused if body.file_path == "alpha/amounts.py").score_parts
    )


def test_a_task_about_another_subsystem_still_wins(workspaces: dict[str, tuple[Path, IndexStore]]) -> None:
    unfocused = pack_for(workspaces, "declined, no focus").bodies
    focused = pack_for(workspaces, "declined, working on inventory").bodies

    assert [body.id for body in focused[:3]] == [body.id for body in unfocused[:3]]
    assert focused[0].id == "shop/payments.py::charge_card"
    assert all(body.file_path != "shop/inventory.py" for body in focused[:3])
