"""``$/cancelRequest`` through the real protocol, on a workspace large enough for a slow request."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsp_status import IndexStatusLog
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

from smartctx.lsp.protocol import CONTEXT_FOR_TASK
from workspaces import write_tree

pytestmark = pytest.mark.asyncio

MODULES = 150
FUNCTIONS_PER_MODULE = 20
# The most work one request may ask for: on this workspace its stages take well over 100 ms (the
# test checks it), far longer than a cancel written right after it takes to arrive.
HEAVY_OPTIONS = {
    "budgetTokens": 1_000_000,
    "maxBodies": 200,
    "maxSummaries": 1000,
    "candidateLimit": 10_000,
    "rankedCap": 10_000,
    "hopDepth": 3,
    "hopFrontierCap": 100_000,
}
HEAVY_TASK = " ".join(f"step_{m}_{m % FUNCTIONS_PER_MODULE}" for m in range(MODULES)) + " order refund"


def module(index: int) -> str:
    following = (index + 1) % MODULES
    lines = [f"from pkg.mod{following} import step_{following}_0", ""]
    for function in range(FUNCTIONS_PER_MODULE):
        lines += [
            f"def step_{index}_{function}(order, amount):",
            f'    """Step {function}: charge or refund."""',
        ]
        lines += [
            f"    step_{index}_{(function + k) % FUNCTIONS_PER_MODULE}(order, amount)" for k in (1, 2, 3)
        ]
        lines += ["    return order", ""]
    return "\n".join(lines)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """Replaces the shop fixture for these tests: 3,000 functions calling one another."""
    return write_tree(tmp_path / "steps", {f"pkg/mod{index}.py": module(index) for index in range(MODULES)})


async def test_a_cancelled_request_is_answered_request_cancelled_and_the_server_keeps_serving(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    await statuses.ready()
    params: dict[str, Any] = {"task": HEAVY_TASK, "options": HEAVY_OPTIONS}
    request_id = "heavy-request-to-cancel"

    # pygls's plain send_request writes the request at once (pytest-lsp's async one only when
    # awaited), so the cancel surely follows it.
    answer = client.protocol.send_request(CONTEXT_FOR_TASK, params, msg_id=request_id)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(asyncio.wrap_future(answer), 30)
    # The same request, not cancelled, is answered in full: the error above came from the cancel.
    pack: dict[str, Any] = await client.protocol.send_request_async(CONTEXT_FOR_TASK, params)

    assert len(pack["bodies"]) > 100
    assert sum(pack["metadata"]["timingsMs"].values()) > 100
