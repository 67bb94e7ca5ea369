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

from smartctx.lsp.protocol import CONTEXT_FOR_TASK, EXPAND, INDEX_STATUS

SHOP = Path(__file__).parent.parent / "fixtures" / "shop"
# Built from pieces so that the test file itself holds no token a scanner would flag.
TOKEN = "ghp_" + "Wq3Zr8Xm2Kp7Lt5Nv9Bc4Df6Gh1Jk0Ls3Qa7"
BOT = "xoxb-" + "50129837465-60123984756-" + "Kq8Zx3Lm7Np2Rt6Vw9Yb4Cd1"
PASSWORD = "Kp3Xr8Wm2Qz7" + "Lt5NvB"
# A token no entropy check passes, a character longer than its format: still a token.
ZEROS = "ghp_" + "0" * 30 + "Wq3Zr8X"
SECRETS = (TOKEN, BOT, PASSWORD, ZEROS)
# The definition starts on line 4: on line 1 a hover finds the module, which spans the same lines.
VAULT = (
    '"""Vault access."""\n\n\n'
    f'def open_vault(region, token="{TOKEN}"):\n'
    f'    """Open the vault; staging bot {BOT} for now, or the old {ZEROS}."""\n'
    f'    password = "{PASSWORD}"\n'
    "    return region, token, password\n"
)


# A token that is also a Python identifier: a definition named by it puts it where the pipeline
# redacts nothing (ids, names, citations), so only the exit's pass over each message can catch it.
NAMED = "ghp_" + "Zk4Xq9Wm2Rt7Lp5Nv8Bc3Df6Gh1Jk0Ls9Qa4"
KEYS = f"def {NAMED}():\n    return 1\n"


def assert_no_secret(*shown: Any, secrets: tuple[str, ...] = SECRETS) -> None:
    text = json.dumps(shown, default=str)
    assert [secret for secret in secrets if secret in text] == []


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The shop fixture with one file of secrets (replaces conftest's fixture for this module)."""
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root)
    (root / "shop" / "vault.py").write_text(VAULT, encoding="utf-8")
    (root / "shop" / "keys.py").write_text(KEYS, encoding="utf-8")
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


@pytest.mark.asyncio
async def test_the_language_server_redacts_what_only_its_exit_sees(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    """A task, an id, a name: texts no stage of the pipeline redacts, in the answers that are
    redacted and serialised on a query thread (a pack, an expanded node) and in a hover."""
    await statuses.ready()
    pack = await client.protocol.send_request_async(CONTEXT_FOR_TASK, {"task": f"return 1 from {NAMED}"})
    expanded = await client.protocol.send_request_async(EXPAND, {"id": f"shop/keys.py::{NAMED}"})
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=(workspace / "shop" / "keys.py").as_uri()),
            position=types.Position(line=0, character=6),
        )
    )

    assert pack["taskDescription"] == "return 1 from [REDACTED]"
    assert "return 1 from [REDACTED]" in pack["text"]
    assert expanded["name"] == "[REDACTED]" and expanded["id"] == "shop/keys.py::[REDACTED]"
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "[REDACTED]" in hover.contents.value
    assert_no_secret(pack, expanded, hover.contents.value, client.log_messages, secrets=(NAMED,))


@pytest.mark.asyncio
@pytest.mark.parametrize("index_dir", [Path(f"/dev/null/{NAMED}")])
async def test_the_language_server_redacts_its_own_json_results_and_notifications(
    client: LanguageClient, statuses: IndexStatusLog, index_dir: Path
) -> None:
    """An index that cannot be opened is reported with its path: in a notification, a result and
    an error, whose JSON the exit reads where it is."""
    failed = await statuses.state("failed")
    status = await client.protocol.send_request_async(INDEX_STATUS, None)
    with pytest.raises(JsonRpcException) as error:
        await client.protocol.send_request_async(CONTEXT_FOR_TASK, {"task": "open_vault"})

    assert "/dev/null/[REDACTED]" in failed["message"]
    assert status == failed
    assert "/dev/null/[REDACTED]" in error.value.message
    assert_no_secret(failed, status, error.value.message, client.log_messages, secrets=(NAMED,))


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
