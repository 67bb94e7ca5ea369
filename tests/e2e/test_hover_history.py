"""The hover's git "why" over the real protocol, in a workspace that is a git repository."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_client import make_client
from lsp_status import IndexStatusLog
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import SERVER, SHOP
from gitrepos import Repo
from smartctx.lsp.protocol import INDEX_STATUS

pytestmark = pytest.mark.asyncio

# A server whose git takes seconds to blame, as it does for django's oldest files.
SLOW_GIT_SERVER = ClientServerConfig(
    server_command=SERVER.server_command,
    client_factory=make_client,
    server_env={
        **os.environ,
        "PATH": f"{Path(__file__).parent / 'slow_git'}{os.pathsep}{os.environ.get('PATH', '')}",
        "SMARTCTX_TEST_REAL_GIT": shutil.which("git") or "git",
    },
)
# Line 25 of shop/payments.py is "def send_to_gateway(payload):"; the cursor is on the name.
ON_SEND_TO_GATEWAY = types.Position(line=24, character=6)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The shop fixture as a git repository: one import, then a squash-merged pull request whose
    title tries to smuggle a link into the hover."""
    repo = Repo(tmp_path / "shop")
    shutil.copytree(SHOP, repo.root, dirs_exist_ok=True)
    payments = repo.root / "shop" / "payments.py"
    original = payments.read_text(encoding="utf-8")
    payments.write_text(original.replace("def send_to_gateway(payload):", "def send_to_gateway(data):"))
    repo.commit("Import the shop")
    payments.write_text(original)
    repo.commit("Name the gateway payload [docs](command:evil) (#42)", author="Grace Hopper")
    return repo.root


async def test_hover_shows_the_latest_change_of_the_definition(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    # The hover waits a moment for git; on a loaded machine the answer may come with a later hover.
    markdown = await hover_with_history(client, workspace / "shop" / "payments.py", ON_SEND_TO_GATEWAY)

    assert "Last changed by #42: Name the gateway payload \\[docs\\]\\(command:evil\\)" in markdown
    assert "(Grace Hopper, 2024-01-03)" in markdown
    assert "](command:evil)" not in markdown


@pytest_lsp.fixture(config=SLOW_GIT_SERVER)
async def slow_git_client(
    lsp_client: LanguageClient, workspace: Path, statuses: IndexStatusLog, index_dir: Path
) -> AsyncIterator[None]:
    @lsp_client.feature(INDEX_STATUS)
    def on_index_status(params: Any) -> None:
        statuses.record(params)

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="shop")],
            initialization_options={"indexDir": str(index_dir)},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_a_slow_blame_does_not_hold_the_hover_and_reaches_a_later_one(
    slow_git_client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    payments = workspace / "shop" / "payments.py"

    first = await hover_markdown(slow_git_client, payments, ON_SEND_TO_GATEWAY)
    assert "send_to_gateway" in first
    assert "Last changed" not in first

    # The blame went on in the background; a later hover over the same file shows its answer.
    later = await hover_with_history(slow_git_client, payments, ON_SEND_TO_GATEWAY)
    assert "Last changed by #42" in later


async def hover_markdown(client: LanguageClient, path: Path, position: types.Position) -> str:
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=position)
    )
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    return result.contents.value


async def hover_with_history(client: LanguageClient, path: Path, position: types.Position) -> str:
    """The first hover there that shows a latest change (or the last one tried, after 30 s)."""
    for _ in range(60):
        markdown = await hover_markdown(client, path, position)
        if "Last changed" in markdown:
            break
        await asyncio.sleep(0.5)
    return markdown
