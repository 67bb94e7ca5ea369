"""A team's base over the language server: with ``baseIndex`` and ``baseIndexOnly``, a clone of a
published commit is answered from the base for good, its status names the base, and the folder is
never indexed whole. Real PostgreSQL, real git, ``smartctx serve`` over stdio."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_status import IndexStatusLog
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from conftest import SERVER, SHOP
from gitrepos import Repo
from smartctx.lsp.protocol import CONTEXT_FOR_TASK, INDEX_STATUS

pytestmark = pytest.mark.asyncio

# The CI job and the editor's clone name the repository alike, by its origin remote.
REMOTE = "https://example.invalid/team/shop.git"
TASK = "charge_card should raise PaymentDeclined when the gateway refuses"


@pytest.fixture
def workspace(tmp_path: Path, postgres_url: str) -> Path:
    """An editor's clone of a commit that a CI job indexed and published."""
    ci = Repo(tmp_path / "ci")
    shutil.copytree(SHOP, ci.root, dirs_exist_ok=True)
    ci.commit("shop")
    ci.git("remote", "add", "origin", REMOTE)
    published = subprocess.run(
        [
            sys.executable, "-m", "smartctx", "index", str(ci.root), "--quiet",
            "--index-dir", str(tmp_path / "ci-index"), "--publish", postgres_url,
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert published.returncode == 0, published.stderr
    editor = tmp_path / "editor"
    subprocess.run(["git", "clone", "-q", str(ci.root), str(editor)], check=True)
    subprocess.run(["git", "-C", str(editor), "remote", "set-url", "origin", REMOTE], check=True)
    return editor


@pytest_lsp.fixture(config=SERVER)
async def client(
    lsp_client: LanguageClient, workspace: Path, statuses: IndexStatusLog, index_dir: Path, postgres_url: str
) -> AsyncIterator[None]:
    @lsp_client.feature(INDEX_STATUS)
    def on_index_status(params: Any) -> None:
        statuses.record(params)

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="shop")],
            initialization_options={
                "indexDir": str(index_dir),
                "baseIndex": postgres_url,
                "baseIndexOnly": True,
            },
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_the_base_answers_for_good_and_the_status_names_it(
    client: LanguageClient, statuses: IndexStatusLog, index_dir: Path
) -> None:
    ready = await statuses.ready()

    assert ready["base"].startswith("base ") and ready["base"].endswith("+ 0 local files")
    assert ready["indexedFiles"] == 0
    pack: dict[str, Any] = await client.protocol.send_request_async(CONTEXT_FOR_TASK, {"task": TASK})
    answered = pack["metadata"]["warnings"][0]
    assert answered["code"] == "answered-from-base" and ready["base"] in answered["message"]
    assert "shop/payments.py" in {item["filePath"] for item in [*pack["bodies"], *pack["summaries"]]}
    asked: dict[str, Any] = await client.protocol.send_request_async(INDEX_STATUS, None)
    assert asked["base"] == ready["base"] and asked["state"] == "ready"
    # No index of the whole folder was made: the base holds it.
    assert not list(index_dir.rglob("*.sqlite"))
