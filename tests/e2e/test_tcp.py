"""``smartctx serve --tcp HOST:PORT`` (for debugging): a client connects over TCP and is served."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_client import make_client
from lsp_status import WAIT_S, IndexStatusLog
from lsprotocol import types
from pytest_lsp import client_capabilities

from smartctx.lsp.protocol import INDEX_STATUS

pytestmark = pytest.mark.asyncio

LOCALHOST = "127.0.0.1"
# pygls's line on stderr once the server listens.
LISTENING = b"Serving on"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOCALHOST, 0))
        port: int = probe.getsockname()[1]
        return port


async def wait_for_line(stream: asyncio.StreamReader, marker: bytes) -> None:
    async def read_until_marker() -> None:
        while marker not in (line := await stream.readline()):
            if not line:
                raise AssertionError("the server exited before it listened")

    await asyncio.wait_for(read_until_marker(), WAIT_S)


async def test_serve_over_tcp_answers_a_client(workspace: Path, index_dir: Path) -> None:
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "smartctx",
        "serve",
        "--tcp",
        f"{LOCALHOST}:{port}",
        stderr=asyncio.subprocess.PIPE,
    )
    client = make_client()
    statuses = IndexStatusLog()

    @client.feature(INDEX_STATUS)
    def on_index_status(params: Any) -> None:
        statuses.record(params)

    try:
        assert server.stderr is not None
        await wait_for_line(server.stderr, LISTENING)
        await client.start_tcp(LOCALHOST, port)
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=workspace.as_uri(),
                initialization_options={"indexDir": str(index_dir)},
            )
        )
        ready = await statuses.ready()
        status = await client.protocol.send_request_async(INDEX_STATUS, None)
        await client.shutdown_session()
        exit_code = await asyncio.wait_for(server.wait(), WAIT_S)
    finally:
        await client.stop()
        if server.returncode is None:
            server.kill()
            await server.wait()

    assert result.server_info is not None and result.server_info.name == "smartctx"
    assert status == ready
    assert exit_code == 0
