"""Requests and notifications that leave out ``params`` (JSON-RPC allows it, and vscode-jsonrpc sends
a parameterless request that way) are answered like any other."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from smartctx.lsp.protocol import INDEX_STATUS

pytestmark = pytest.mark.asyncio

WAIT_S = 30.0


class RawClient:
    """Frames JSON-RPC by hand, so a message carries exactly the fields a test writes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout

    async def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.stdin.drain()

    async def receive(self) -> dict[str, Any]:
        length = 0
        while (line := await self.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(await self.stdout.readexactly(length))
        return message

    async def answer_to(self, request_id: int) -> dict[str, Any]:
        """Read messages until the response to ``request_id``; the server's own requests get null."""
        while True:
            message = await asyncio.wait_for(self.receive(), WAIT_S)
            if message.get("id") == request_id and "method" not in message:
                return message
            if "method" in message and "id" in message:
                await self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})


async def test_a_request_without_params_is_answered(workspace: Path, index_dir: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "smartctx",
        "serve",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    client = RawClient(process)
    try:
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": workspace.as_uri(),
                    "capabilities": {},
                    "initializationOptions": {"indexDir": str(index_dir)},
                },
            }
        )
        assert "result" in await client.answer_to(1)
        await client.send({"jsonrpc": "2.0", "method": "initialized"})

        await client.send({"jsonrpc": "2.0", "id": 2, "method": INDEX_STATUS})
        status = await client.answer_to(2)
        await client.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        shutdown = await client.answer_to(3)
        await client.send({"jsonrpc": "2.0", "method": "exit"})

        assert status["result"]["state"] in ("indexing", "ready")
        assert shutdown == {"jsonrpc": "2.0", "id": 3, "result": None}
        assert await asyncio.wait_for(process.wait(), WAIT_S) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
