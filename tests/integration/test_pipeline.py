"""build_context on a real index of a small fixture workspace: ranking, budget, citations."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smartctx.core.context import ContextOptions, ContextRequest, InvalidRequestError
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.retrieval.query import ECHOED_TASK_CHARS, MAX_TASK_CHARS
from smartctx.retrieval.symbols import expand_node
from smartctx.store.index_store import IndexStore
from smartctx.store.snapshot import IndexSnapshot
from smartctx.wire.convert import pack_to_wire

FIXTURE = Path(__file__).parent.parent / "fixtures" / "shop"
GOLDEN = Path(__file__).parent.parent / "fixtures" / "goldens" / "ranking.json"

RANKING_QUERIES = {
    "discount": "The SAVE10 discount code gives the wrong total on an order",
    "declined": "charge_card should raise PaymentDeclined when the gateway refuses",
    "stock": "reserve stock fails for a SKU with enough units on hand",
    "traceback": 'Traceback (most recent call last):\n  File "/srv/app/shop/orders.py", line 42, in place\n'
    "    raise OrderError(...)\nshop.orders.OrderError: not enough stock",
    "price label": "the cart total label shows the price formatted wrong",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shop") / "shop-ws"
    shutil.copytree(FIXTURE, root)
    return root


@pytest.fixture(scope="module")
def store(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexStore]:
    opened = IndexStore(workspace, tmp_path_factory.mktemp("index"))
    Indexer(workspace, opened, IndexConfig(workers=0)).reconcile()
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def run(store: IndexStore, workspace: Path, counter: TokenCounter, task: str, **options: object):  # type: ignore[no-untyped-def]
    with store.snapshot() as snapshot:
        return build_context(
            ContextRequest(task, ContextOptions.from_values(dict(options))),
            snapshot,
            counter,
            WorkspaceSources(workspace),
        )


def test_ranking_goldens(
    store: IndexStore, workspace: Path, counter: TokenCounter, update_golden: bool
) -> None:
    """The top items for fixed tasks; `pytest --update-golden` rewrites the file (review the diff)."""
    actual = {}
    for name, task in RANKING_QUERIES.items():
        pack = run(store, workspace, counter, task)
        actual[name] = {
            "bodies": [body.id for body in pack.bodies],
            "summaries": [summary.id for summary in pack.summaries[:5]],
        }
    if update_golden:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(actual, indent=2) + "\n")
    assert actual == json.loads(GOLDEN.read_text())


@pytest.mark.parametrize(
    ("task", "expected_first"),
    [
        (RANKING_QUERIES["discount"], "shop/orders.py::apply_discount"),
        (RANKING_QUERIES["declined"], "shop/payments.py::charge_card"),
        (RANKING_QUERIES["traceback"], "shop/orders.py::Order.place"),
    ],
)
def test_the_obvious_answer_comes_first(
    store: IndexStore, workspace: Path, counter: TokenCounter, task: str, expected_first: str
) -> None:
    assert run(store, workspace, counter, task).bodies[0].id == expected_first


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    budget=st.integers(min_value=200, max_value=32_000),
    task=st.one_of(st.sampled_from(list(RANKING_QUERIES.values())), st.text(max_size=300)),
)
def test_budget_is_never_exceeded(
    store: IndexStore, workspace: Path, counter: TokenCounter, budget: int, task: str
) -> None:
    pack = run(store, workspace, counter, task or "x", budget_tokens=budget)
    assert pack.tokens_used <= budget
    assert counter.count(pack.text) == pack.tokens_used


def test_bodies_are_exactly_the_cited_lines(
    store: IndexStore, workspace: Path, counter: TokenCounter
) -> None:
    for task in RANKING_QUERIES.values():
        for body in run(store, workspace, counter, task).bodies:
            lines = (workspace / body.file_path).read_text().splitlines(keepends=True)
            assert body.source == "".join(lines[body.start_line - 1 : body.end_line])
            assert body.citation == f"{body.file_path}:{body.start_line}-{body.end_line}"
            assert f"```{body.language}\n{body.source}```" in pack_text(store, workspace, counter, task)


def pack_text(store: IndexStore, workspace: Path, counter: TokenCounter, task: str) -> str:
    return run(store, workspace, counter, task).text


def test_same_request_same_bytes(store: IndexStore, workspace: Path, counter: TokenCounter) -> None:
    task = RANKING_QUERIES["stock"]
    first = json.dumps(pack_to_wire(run(store, workspace, counter, task)))
    second = json.dumps(pack_to_wire(run(store, workspace, counter, task)))
    strip = lambda text: json.loads(text) | {"metadata": None}  # noqa: E731 - timings differ run to run
    assert strip(first) == strip(second)
    assert json.loads(first)["text"] == json.loads(second)["text"]


# Packs the same requests in a process of its own, whose redaction, token and line caches are empty.
_FRESH_PACKS = """
import json, sys
from pathlib import Path
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.sources import WorkspaceSources
from smartctx.wire.convert import pack_to_wire
from smartctx.retrieval.pipeline import build_context
from smartctx.retrieval.query import ECHOED_TASK_CHARS, MAX_TASK_CHARS
from smartctx.store.snapshot import IndexSnapshot
index, root, requests = json.load(sys.stdin)
packs = []
for task, budget in requests:
    with IndexSnapshot(Path(index)) as snapshot:
        pack = build_context(ContextRequest(task, ContextOptions(budget_tokens=budget)), snapshot,
                             TokenCounter(), WorkspaceSources(Path(root)))
    packs.append(pack_to_wire(pack) | {"metadata": None})
print(json.dumps(packs))
"""


def test_packs_are_the_same_whatever_earlier_requests_left_in_the_caches(
    store: IndexStore, workspace: Path, counter: TokenCounter
) -> None:
    """Redaction answers, token counts and line offsets are kept between requests; a pack built after
    many others is byte for byte the pack a process that built nothing before gives."""
    requests = [(task, budget) for budget in (300, 1_200, 8_000) for task in RANKING_QUERIES.values()]
    for task, budget in requests:
        run(store, workspace, counter, task, budget_tokens=budget)
    warm = [
        pack_to_wire(run(store, workspace, counter, task, budget_tokens=budget)) for task, budget in requests
    ]
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_PACKS],
        input=json.dumps([str(store.path), str(workspace), requests]),
        capture_output=True,
        text=True,
        check=True,
    )
    fresh = json.loads(done.stdout)
    assert [pack | {"metadata": None} for pack in warm] == fresh
    assert any(body["tokens"] for pack in fresh for body in pack["bodies"])
    assert any(warning["code"] == "body-cut" for pack in warm for warning in pack["metadata"]["warnings"])


def test_small_budget_cuts_a_body_at_a_line_boundary(
    store: IndexStore, workspace: Path, counter: TokenCounter
) -> None:
    pack = run(store, workspace, counter, RANKING_QUERIES["discount"], budget_tokens=260, max_bodies=5)
    assert pack.tokens_used <= 260
    assert pack.trimmed


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"budget_tokens": -5}, "budgetTokens must be a whole number from 1 to 1000000"),
        ({"hop_depth": 4}, "hopDepth must be a whole number from 0 to 3"),
        ({"tokenizer": "gpt2"}, "tokenizer must be one of o200k_base, cl100k_base"),
        ({"include_blobs": "yes"}, "includeBlobs must be true or false"),
        ({"colour": 1}, "unknown option colour"),
        ({"token_scale": 0.05}, "tokenScale must be a number from 0.1 to 10"),
        ({"token_scale": 11}, "tokenScale must be a number from 0.1 to 10"),
        ({"token_scale": float("nan")}, "tokenScale must be a number from 0.1 to 10"),
        ({"token_scale": "1.5"}, "tokenScale must be a number"),
        ({"token_scale": True}, "tokenScale must be a number"),
        (
            {"budget_tokens": 900_000, "token_scale": 0.5},
            "budgetTokens / tokenScale must be at most 1000000 o200k_base tokens",
        ),
        ({"token_model": "   "}, "tokenModel must be a model's name"),
        ({"token_model": "gpt\n5"}, "tokenModel must be a model's name"),
        ({"token_model": "m" * 201}, "tokenModel must be a model's name of 1 to 200"),
    ],
)
def test_malformed_options_are_clear_errors(values: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        ContextOptions.from_values(values)


def test_zero_or_missing_options_mean_defaults() -> None:
    assert ContextOptions.from_values({"budget_tokens": 0, "max_bodies": None}) == ContextOptions()


@pytest.mark.parametrize("scale", [0.5, 1, 1.6, 2.5])
def test_a_scaled_budget_is_packed_as_the_budget_divided_by_the_scale(
    store: IndexStore, workspace: Path, counter: TokenCounter, scale: float
) -> None:
    """The server stays exact in its own tokenizer: a budget of 400 of a reader's tokens at 1.6 of
    them per o200k_base token is a pack of 250 o200k_base tokens, the same pack a plain budget of 250
    gives; the scale and the reader's name are only reported."""
    stated = 400
    values = {"budget_tokens": stated, "token_scale": scale, "token_model": "reader-7", "max_bodies": 5}
    options = ContextOptions.from_values(values).scaled()
    with store.snapshot() as snapshot:
        pack = build_context(
            ContextRequest(RANKING_QUERIES["discount"], options),
            snapshot,
            counter,
            WorkspaceSources(workspace),
        )
    budget = math.floor(stated / scale)
    plain = run(store, workspace, counter, RANKING_QUERIES["discount"], budget_tokens=budget, max_bodies=5)

    assert pack.budget_tokens == budget
    assert pack.text == plain.text and pack.tokens_used == plain.tokens_used <= budget
    assert counter.count(pack.text) == pack.tokens_used
    scaled_metadata, plain_metadata = pack_to_wire(pack)["metadata"], pack_to_wire(plain)["metadata"]
    assert (scaled_metadata["tokenScale"], scaled_metadata["tokenModel"]) == (scale, "reader-7")
    assert (plain_metadata["tokenScale"], plain_metadata["tokenModel"]) == (1.0, None)


def test_a_changed_file_is_relocated_or_dropped(tmp_path: Path, counter: TokenCounter) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    changing = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, changing, IndexConfig(workers=0)).reconcile()
        payments = root / "shop" / "payments.py"
        payments.write_text("# A new first line moves everything down.\n\n" + payments.read_text())
        pack = run(changing, root, counter, RANKING_QUERIES["declined"])
        body = next(b for b in pack.bodies if b.id == "shop/payments.py::charge_card")
        lines = payments.read_text().splitlines(keepends=True)
        assert body.source == "".join(lines[body.start_line - 1 : body.end_line])
        assert "stale-relocated" in {w.code for w in pack.warnings}
        payments.write_text("GATEWAY_TIMEOUT_SECONDS = 30\n")
        pack = run(changing, root, counter, RANKING_QUERIES["declined"])
        assert "shop/payments.py::charge_card" not in {b.id for b in pack.bodies}
        assert "stale-dropped" in {w.code for w in pack.warnings}
    finally:
        changing.close()


def test_secrets_in_code_are_redacted(tmp_path: Path, counter: TokenCounter) -> None:
    root = tmp_path / "ws"
    (root / "cloud").mkdir(parents=True)
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    (root / "cloud" / "upload.py").write_text(
        f'def upload_to_bucket(data):\n    """Upload data to the bucket."""\n    client = connect("{key}")\n'
        f'    api_token = "x9F2kQ7zL1mN8pR4tV6wY3bC5dG0hJ"\n    return client.put(data)\n'
    )
    secret_store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, secret_store, IndexConfig(workers=0)).reconcile()
        pack = run(secret_store, root, counter, "upload_to_bucket")
        assert key not in pack.text and "x9F2kQ7zL1mN8pR4tV6wY3bC5dG0hJ" not in pack.text
        assert pack.text.count("[REDACTED]") == 2
        assert "secret-redacted" in {w.code for w in pack.warnings}
    finally:
        secret_store.close()


def test_secrets_in_signatures_and_docs_are_redacted_in_the_json_too(
    tmp_path: Path, counter: TokenCounter
) -> None:
    """Summaries and expanded nodes carry the signature and doc as fields of their own, beside the text."""
    root = tmp_path / "ws"
    root.mkdir()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    key = "AKIA" + "QRSTUVWXYZ234567"
    # Two definitions alike, so that one is packed in full and the other is summarised.
    (root / "vault.py").write_text(
        "".join(
            f'def {name}_vault(region, token="{token}"):\n'
            f'    """{name.title()} the vault with key {key}."""\n'
            "    return region\n\n\n"
            for name in ("open", "close")
        )
    )
    secret_store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, secret_store, IndexConfig(workers=0)).reconcile()
        with secret_store.snapshot() as snapshot:
            request = ContextRequest("open or close the vault", ContextOptions(max_bodies=1))
            pack = build_context(request, snapshot, counter, WorkspaceSources(root))
            detail = expand_node(snapshot, WorkspaceSources(root), counter, "vault.py::open_vault")
    finally:
        secret_store.close()
    assert len(pack.bodies) == 1 and len(pack.summaries) == 1
    wire = json.dumps(pack_to_wire(pack))
    assert token not in wire and key not in wire
    assert "[REDACTED]" in pack.summaries[0].signature and "[REDACTED]" in pack.summaries[0].doc
    assert token not in detail.signature + detail.doc + detail.source and key not in detail.doc
    assert "secret-redacted" in {warning.code for warning in detail.warnings}


def test_nothing_matches_says_not_found(store: IndexStore, workspace: Path, counter: TokenCounter) -> None:
    pack = run(store, workspace, counter, "zzqx wvut")
    assert pack.not_found and not pack.bodies and not pack.summaries


def test_snapshot_is_read_only(store: IndexStore) -> None:
    with store.snapshot() as snapshot, pytest.raises(Exception, match="readonly"):
        snapshot_write(snapshot)


def snapshot_write(snapshot: IndexSnapshot) -> None:
    snapshot._db.execute("DELETE FROM files")


def test_expanding_a_function_named_like_its_module_gives_the_function(
    tmp_path: Path, counter: TokenCounter
) -> None:
    """`report.py::report` is both the module's id and its function's: a pack item is the function."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "report.py").write_text('import os\n\n\ndef report():\n    """Print it."""\n    return 1\n')
    store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, store, IndexConfig(workers=0)).reconcile()
        with store.snapshot() as snapshot:
            detail = expand_node(snapshot, WorkspaceSources(root), counter, "report.py::report")
            pack = build_context(
                ContextRequest("print the report"), snapshot, counter, WorkspaceSources(root)
            )
    finally:
        store.close()
    assert (detail.kind, detail.citation) == ("function", "report.py:4-6")
    assert detail.source.startswith("def report():")
    assert [body.id for body in pack.bodies] == ["report.py::report"]
    assert pack.subgraph_nodes == ("report.py::report",)
    assert pack.subgraph_edges == ()


def test_a_symbol_too_big_to_pack_says_why(tmp_path: Path, counter: TokenCounter) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    # Long lines (under the minified threshold on average) that no cut of six lines fits in the budget.
    terms = " + ".join(f"weight_{number} * value_{number}" for number in range(12))
    body = "".join(f"    total_{line} = {terms}\n" for line in range(40))
    (root / "ledger.py").write_text(f"def reconcile_ledger(value):\n{body}    return value\n")
    parameters = ", ".join(f"option_{number}: int = {number}" for number in range(60))
    # The short function takes the body slot, leaving the long one to the summaries.
    (root / "options.py").write_text(
        f"def configure():\n    return 1\n\n\ndef configure_everything({parameters}):\n    return 1\n"
    )
    big_store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, big_store, IndexConfig(workers=0)).reconcile()
        body_pack = run(big_store, root, counter, "reconcile_ledger", budget_tokens=300, max_summaries=0)
        summary_pack = run(big_store, root, counter, "configure", budget_tokens=120, max_bodies=1)
    finally:
        big_store.close()
    assert body_pack.bodies == ()
    assert ("body-skipped", "ledger.py::reconcile_ledger") in {
        (warning.code, warning.node_id) for warning in body_pack.warnings
    }
    assert "configure_everything" not in [summary.name for summary in summary_pack.summaries]
    assert ("summary-skipped", "options.py::configure_everything") in {
        (warning.code, warning.node_id) for warning in summary_pack.warnings
    }


def test_a_body_too_big_to_pack_is_listed_by_its_signature(tmp_path: Path, counter: TokenCounter) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    terms = " + ".join(f"weight_{number} * value_{number}" for number in range(12))
    body = "".join(f"    total_{line} = {terms}\n" for line in range(40))
    (root / "ledger.py").write_text(
        f'def reconcile_ledger(value):\n    """Balance the ledger."""\n{body}    return value\n'
    )
    big_store = IndexStore(root, tmp_path / "index")
    try:
        Indexer(root, big_store, IndexConfig(workers=0)).reconcile()
        pack = run(big_store, root, counter, "reconcile_ledger", budget_tokens=300)
    finally:
        big_store.close()
    # The body cannot fit, so the pack still says where the definition is and what it takes.
    assert pack.bodies == ()
    assert [(summary.id, summary.citation) for summary in pack.summaries] == [
        ("ledger.py::reconcile_ledger", "ledger.py:1-43")
    ]
    assert "reconcile_ledger(value)" in pack.text and pack.tokens_used <= 300


def test_a_task_over_the_cap_is_read_as_its_start_and_end_and_never_echoed_whole(
    store: IndexStore, workspace: Path, counter: TokenCounter
) -> None:
    """A whole log pasted as the task: its last line names the function, so the end must be read;
    the pack carries back neither the task whole nor its 3 MB middle."""
    filler = "INFO worker heartbeat ok, queue depth nominal\n" * (3 * MAX_TASK_CHARS // 46)
    task = f"{filler}Traceback: charge_card raised PaymentDeclined"
    pack = run(store, workspace, counter, task)

    assert len(task) > 3 * MAX_TASK_CHARS
    assert pack.bodies[0].id == "shop/payments.py::charge_card"
    assert len(pack.task_description) < ECHOED_TASK_CHARS + 200
    assert f"{len(task):,} characters" in pack.task_description
    truncated = [warning for warning in pack.warnings if warning.code == "task-truncated"]
    assert len(truncated) == 1 and f"{MAX_TASK_CHARS:,}" in truncated[0].message
    assert len(json.dumps(pack_to_wire(pack))) < 100_000
    within = "charge_card " + "declined " * (MAX_TASK_CHARS // 10)
    assert run(store, workspace, counter, within).task_description == within
