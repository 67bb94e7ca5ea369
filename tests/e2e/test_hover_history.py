"""The hover's git "why" over the real protocol, in a workspace that is a git repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsp_status import IndexStatusLog
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import SHOP
from gitrepos import Repo

pytestmark = pytest.mark.asyncio


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
    payments = workspace / "shop" / "payments.py"

    # Line 25 is "def send_to_gateway(payload):"; the cursor is on the name.
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=payments.as_uri()),
            position=types.Position(line=24, character=6),
        )
    )

    assert result is not None and isinstance(result.contents, types.MarkupContent)
    markdown = result.contents.value
    assert "Last changed by #42: Name the gateway payload \\[docs\\]\\(command:evil\\)" in markdown
    assert "(Grace Hopper, 2024-01-03)" in markdown
    assert "](command:evil)" not in markdown
