"""The ``exclude`` setting: patterns sent with didChangeConfiguration take files out of the index and
put them back, without a restart."""

from __future__ import annotations

from typing import Any

import pytest
from lsp_status import IndexStatusLog
from lsprotocol import types
from pytest_lsp import LanguageClient

from smartctx.lsp.protocol import CONTEXT_FOR_TASK

pytestmark = pytest.mark.asyncio

TASK = "charge_card should raise PaymentDeclined when the gateway refuses"


async def packed_files(client: LanguageClient) -> set[str]:
    pack: dict[str, Any] = await client.protocol.send_request_async(CONTEXT_FOR_TASK, {"task": TASK})
    return {item["filePath"] for item in [*pack["bodies"], *pack["summaries"]]}


def configure(client: LanguageClient, exclude: list[str]) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"smartctx": {"exclude": exclude}})
    )


async def test_excluded_files_leave_the_index_and_come_back(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    await statuses.ready()
    assert "shop/payments.py" in await packed_files(client)

    configure(client, ["shop/payments.py"])
    await statuses.ready(2)
    excluded = await packed_files(client)

    configure(client, [])
    await statuses.ready(3)
    restored = await packed_files(client)

    assert "shop/payments.py" not in excluded
    assert excluded
    assert "shop/payments.py" in restored


async def test_an_invalid_exclude_is_a_warning_and_changes_nothing(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    await statuses.ready()

    configure(client, "shop/payments.py")
    message = await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)

    assert "exclude" in message.message
    assert "shop/payments.py" in await packed_files(client)
