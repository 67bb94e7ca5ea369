"""Requests and notifications that leave out ``params`` (JSON-RPC allows it, and vscode-jsonrpc sends
a parameterless request that way) are answered like any other."""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_client import RawClient

from smartctx.lsp.protocol import INDEX_STATUS

pytestmark = pytest.mark.asyncio


async def test_a_request_without_params_is_answered(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        assert "result" in await client.initialize(workspace, index_dir, request_id=1)

        await client.send({"jsonrpc": "2.0", "id": 2, "method": INDEX_STATUS})
        status = await client.answer_to(2)
        await client.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        shutdown = await client.answer_to(3)

        assert status["result"]["state"] in ("indexing", "ready")
        assert shutdown == {"jsonrpc": "2.0", "id": 3, "result": None}
        assert await client.exit() == 0
    finally:
        await client.close()
