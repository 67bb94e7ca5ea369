"""A multi-root workspace through the real protocol: one index per folder, one pack over all."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import pytest_lsp
from lsp_status import IndexStatusLog
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient, client_capabilities

from conftest import SERVER
from smartctx.lsp.protocol import CONTEXT_FOR_TASK, EXPAND, INDEX_STATUS, REINDEX_COMMAND

pytestmark = pytest.mark.asyncio

FIXTURES = Path(__file__).parent.parent / "fixtures" / "multiroot"
FOLDERS = ("billing", "shipping")
BOTH = "compute_invoice_total print_parcel_label"


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    """Every fixture folder copied; the server opens billing and shipping, a test may add returns."""
    copied = {}
    for name in (*FOLDERS, "returns"):
        copied[name] = tmp_path / "folders" / name
        shutil.copytree(FIXTURES / name, copied[name])
    return copied


@pytest_lsp.fixture(config=SERVER)
async def client(
    lsp_client: LanguageClient, roots: dict[str, Path], statuses: IndexStatusLog, index_dir: Path
) -> AsyncIterator[None]:
    @lsp_client.feature(INDEX_STATUS)
    def on_index_status(params: Any) -> None:
        statuses.record(params)

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=roots["billing"].as_uri(),
            workspace_folders=[
                types.WorkspaceFolder(uri=roots[name].as_uri(), name=name) for name in FOLDERS
            ],
            initialization_options={"indexDir": str(index_dir)},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def request(client: LanguageClient, method: str, params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await client.protocol.send_request_async(method, params)
    return result


def items(pack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in pack["bodies"] + pack["summaries"]}


async def test_one_pack_holds_code_from_both_folders_cited_within_each(
    client: LanguageClient, statuses: IndexStatusLog, roots: dict[str, Path], index_dir: Path
) -> None:
    ready = await statuses.ready()

    pack = await request(client, CONTEXT_FOR_TASK, {"task": BOTH})

    found = items(pack)
    billing = found["billing/app/core.py::compute_invoice_total"]
    shipping = found["shipping/app/core.py::print_parcel_label"]
    assert (billing["workspaceFolder"], billing["filePath"]) == (roots["billing"].as_uri(), "app/core.py")
    assert (shipping["workspaceFolder"], shipping["citation"]) == (
        roots["shipping"].as_uri(),
        "app/core.py:4-6",
    )
    assert "`print_parcel_label` — shipping/app/core.py:4-6" in pack["text"]
    assert (ready["filesTotal"], pack["metadata"]["freshness"]["indexedFiles"]) == (2, 2)
    # One index folder per workspace folder, inside the indexDir the client gave.
    assert len([child for child in index_dir.iterdir() if child.is_dir()]) == 2


async def test_an_unsaved_buffer_in_the_second_folder_is_found(
    client: LanguageClient, statuses: IndexStatusLog, roots: dict[str, Path]
) -> None:
    await statuses.ready()
    core = roots["shipping"] / "app" / "core.py"
    saved = core.read_text(encoding="utf-8")
    document = types.TextDocumentIdentifier(uri=core.as_uri())
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=document.uri, language_id="python", version=1, text=saved
            )
        )
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=document.uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(
                    text=saved + '\n\ndef weigh_parcel_exactly(parcel):\n    return parcel["grams"]\n'
                )
            ],
        )
    )
    await statuses.ready(2)

    pack = await request(
        client, CONTEXT_FOR_TASK, {"task": "weigh_parcel_exactly", "focus": {"uri": core.as_uri()}}
    )

    first = pack["bodies"][0]
    assert (first["id"], first["workspaceFolder"]) == (
        "shipping/app/core.py::weigh_parcel_exactly",
        roots["shipping"].as_uri(),
    )
    assert first["scoreParts"]["focusFile"] > 0


async def test_a_folder_added_at_run_time_is_indexed_and_a_removed_one_leaves_the_pack(
    client: LanguageClient, statuses: IndexStatusLog, roots: dict[str, Path]
) -> None:
    await statuses.ready()
    returns = types.WorkspaceFolder(uri=roots["returns"].as_uri(), name="returns")
    task = {"task": "approve_refund_request for a damaged order"}

    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[returns], removed=[])
        )
    )
    ready = await statuses.ready(2)
    added = await request(client, CONTEXT_FOR_TASK, task)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[], removed=[returns])
        )
    )
    removed = await request(client, CONTEXT_FOR_TASK, task)

    assert ready["filesTotal"] == 3
    assert added["bodies"][0]["id"] == "returns/app/refunds.py::approve_refund_request"
    assert not [item for item in items(removed).values() if item["workspaceFolder"] == returns.uri]
    assert (await request(client, INDEX_STATUS, None))["filesTotal"] == 2


async def test_expand_and_hover_in_the_second_folder(
    client: LanguageClient, statuses: IndexStatusLog, roots: dict[str, Path]
) -> None:
    await statuses.ready()
    core = roots["shipping"] / "app" / "core.py"

    node = await request(client, EXPAND, {"id": "shipping/app/core.py::handle"})
    # Line 11 is "    return print_parcel_label(request["parcel"])" inside handle.
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=core.as_uri()),
            position=types.Position(line=10, character=12),
        )
    )
    with pytest.raises(JsonRpcInvalidParams) as error:
        await request(client, EXPAND, {"id": "app/core.py::handle"})

    assert (node["id"], node["citation"], node["workspaceFolder"]) == (
        "shipping/app/core.py::handle",
        "app/core.py:9-11",
        roots["shipping"].as_uri(),
    )
    assert node["source"].startswith("def handle(request):\n")
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert f"[app/core.py:4-6]({core.as_uri()}#L4)" in hover.contents.value
    assert '"id": "shipping/app/core.py::print_parcel_label"' in unquote(hover.contents.value)
    assert "billing, shipping" in error.value.message


async def test_reindex_reconciles_every_folder_or_the_one_named(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    await statuses.ready()

    every = await client.workspace_execute_command_async(types.ExecuteCommandParams(command=REINDEX_COMMAND))
    one = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=REINDEX_COMMAND, arguments=["shipping"])
    )
    with pytest.raises(JsonRpcInvalidParams) as error:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=REINDEX_COMMAND, arguments=["nowhere"])
        )

    assert (every["filesTotal"], one["filesTotal"]) == (2, 1)
    assert "shipping" in error.value.message
