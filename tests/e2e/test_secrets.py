"""Secrets never leave a real process: the language server (hover, expand, a pack, an error, a log
line and a message shown to the user), the MCP server (a tool result and a tool error) and the command
line (the issue's repro: a pack's JSON), on a workspace with secrets in a signature, a doc and a body.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_status import IndexStatusLog
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_mcp import mcp_server

from smartctx.lsp.protocol import CONTEXT_FOR_TASK, EXPAND

SHOP = Path(__file__).parent.parent / "fixtures" / "shop"
# Built from pieces so that the test file itself holds no token a scanner would flag.
TOKEN = "ghp_" + "Wq3Zr8Xm2Kp7Lt5Nv9Bc4Df6Gh1Jk0Ls3Qa7"
BOT = "xoxb-" + "50129837465-60123984756-" + "Kq8Zx3Lm7Np2Rt6Vw9Yb4Cd1"
PASSWORD = "Kp3Xr8Wm2Qz7" + "Lt5NvB"
SECRETS = (TOKEN, BOT, PASSWORD)
# The definition starts on line 4: on line 1 a hover finds the module, which spans the same lines.
VAULT = (
    '"""Vault access."""\n\n\n'
    f'def open_vault(region, token="{TOKEN}"):\n'
    f'    """Open the vault; staging bot {BOT} for now."""\n'
    f'    password = "{PASSWORD}"\n'
    "    return region, token, password\n"
)


def assert_no_secret(*shown: Any) -> None:
    text = json.dumps(shown, default=str)
    assert [secret for secret in SECRETS if secret in text] == []


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The shop fixture with one file of secrets (replaces conftest's fixture for this module)."""
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root)
    (root / "shop" / "vault.py").write_text(VAULT, encoding="utf-8")
    return root


@pytest.mark.asyncio
async def test_the_language_server_sends_no_secret_in_any_message(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    vault = workspace / "shop" / "vault.py"
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=vault.as_uri()),
            position=types.Position(line=3, character=6),
        )
    )
    pack = await client.protocol.send_request_async(CONTEXT_FOR_TASK, {"task": "open_vault region token"})
    expanded = await client.protocol.send_request_async(EXPAND, {"id": "shop/vault.py::open_vault"})
    with pytest.raises(JsonRpcException) as error:
        await client.protocol.send_request_async(EXPAND, {"id": f"shop/vault.py::{TOKEN}"})
    # An unknown setting is echoed back in a warning: shown to the user and logged.
    shown = client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"smartctx": {f"apiToken={TOKEN}": 1}})
    )
    await shown

    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "open_vault" in hover.contents.value and "[REDACTED]" in hover.contents.value
    assert "[REDACTED]" in expanded["signature"] and "[REDACTED]" in expanded["doc"]
    assert "[REDACTED]" in error.value.message
    assert any("[REDACTED]" in message.message for message in client.messages)
    assert_no_secret(
        hover.contents.value, pack, expanded, error.value.message, client.messages, client.log_messages
    )


@pytest.mark.anyio
async def test_the_mcp_server_sends_no_secret_in_a_result_or_an_error(
    workspace: Path, tmp_path: Path
) -> None:
    async with mcp_server("--root", str(workspace), "--index-dir", str(tmp_path / "mcp-index")) as server:
        await server.ready()
        result = await server.call(
            "get_context_for_task", {"task": "open_vault region token", "maxBodies": 1}
        )
        expanded = await server.call("expand_symbol", {"id": "shop/vault.py::open_vault"})
        failed = await server.call("expand_symbol", {"id": f"shop/vault.py::{TOKEN}"})

    assert "open_vault" in json.dumps(result.structured_content)
    assert failed.is_error
    assert_no_secret(
        result.model_dump(mode="json"), expanded.model_dump(mode="json"), failed.model_dump(mode="json")
    )


def test_the_command_line_prints_no_secret_in_a_json_pack(workspace: Path, tmp_path: Path) -> None:
    where = ["--root", str(workspace), "--index-dir", str(tmp_path / "cli-index")]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "smartctx",
            "context",
            "open_vault",
            *where,
            "--format",
            "json",
            "--max-bodies",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    pack = json.loads(done.stdout)
    assert "shop/vault.py::open_vault" in {item["id"] for item in pack["bodies"] + pack["summaries"]}
    assert_no_secret(done.stdout, done.stderr)
