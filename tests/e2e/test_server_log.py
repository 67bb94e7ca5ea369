"""The server's log reaches the user once: a record goes either to the client as a log message or to
stderr, never both (VS Code shows the two in the same output channel)."""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_client import RawClient

pytestmark = pytest.mark.asyncio


async def test_a_warning_sent_to_the_client_is_not_repeated_on_stderr(
    workspace: Path, index_dir: Path, tmp_path: Path
) -> None:
    stderr = tmp_path / "stderr.log"
    with stderr.open("w") as server_stderr_file:
        client = await RawClient.start(stderr=server_stderr_file)
    try:
        await client.initialize(workspace, index_dir, settings={"bufferDebounceMs": "soon"})
        # The index status answer comes after the initialized handler has logged its warnings.
        await client.request(2, "smartctx/indexStatus", {})
        assert await client.shutdown_and_exit() == 0
    finally:
        await client.close()

    logged = [
        message["params"]["message"]
        for message in client.notifications
        if message["method"] == "window/logMessage"
    ]
    warnings = [message for message in logged if "bufferDebounceMs" in message]
    assert len(warnings) == 1
    server_stderr = stderr.read_text()
    assert "bufferDebounceMs" not in server_stderr
    # Records below the client's level (info, by default) still go to stderr.
    assert "workspace folder" in server_stderr
