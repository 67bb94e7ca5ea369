"""A real ``smartctx serve`` over stdio, driven by pytest-lsp, on a fresh copy of a fixture workspace.

Tests wait on the server's ``smartctx/indexStatus`` notifications, never on sleeps: each wait has a
bound only so that a broken server fails the test instead of hanging it.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_client import make_client
from lsp_status import IndexStatusLog
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from smartctx.lsp.protocol import INDEX_STATUS

SHOP = Path(__file__).parent.parent / "fixtures" / "shop"


SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "smartctx", "serve"], client_factory=make_client
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root)
    return root


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "index"


@pytest.fixture
def statuses() -> IndexStatusLog:
    return IndexStatusLog()


@pytest.fixture
def initialize_results() -> list[types.InitializeResult]:
    """The server's answer to ``initialize`` (its capabilities), once the client fixture has run."""
    return []


@pytest_lsp.fixture(config=SERVER)
async def client(
    lsp_client: LanguageClient,
    workspace: Path,
    statuses: IndexStatusLog,
    index_dir: Path,
    initialize_results: list[types.InitializeResult],
) -> AsyncIterator[None]:
    @lsp_client.feature(INDEX_STATUS)
    def on_index_status(params: Any) -> None:
        statuses.record(params)

    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="shop")],
            initialization_options={"indexDir": str(index_dir)},
        )
    )
    initialize_results.append(result)
    yield
    await lsp_client.shutdown_session()
