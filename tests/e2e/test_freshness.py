"""Changes made on disk, outside the editor, reach the answers of the real server over stdio.

Nothing here tells the server about a change except the last test, which sends
``workspace/didChangeWatchedFiles``: the server's own watcher must notice. Each check asks again
after every ``smartctx/indexStatus`` notification until the answer reflects the change, within the
bound of ``lsp_status.WAIT_S``; there is no sleep.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsp_status import IndexStatusLog
from lsprotocol import types
from pytest_lsp import LanguageClient

from smartctx.lsp.protocol import CONTEXT_FOR_TASK

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server watches with inotify"),
]

Pack = dict[str, Any]


def ids(pack: Pack) -> list[str]:
    return [item["id"] for item in pack["bodies"] + pack["summaries"]]


def has(item_id: str) -> Callable[[Pack], bool]:
    return lambda pack: item_id in ids(pack)


async def eventually(
    client: LanguageClient, statuses: IndexStatusLog, task: str, holds: Callable[[Pack], bool]
) -> Pack:
    """The first answer to ``task`` for which ``holds`` is true, asking again after each notification."""
    while True:
        # Counted before asking: an update committed after this answer was built notifies after it.
        seen = len(statuses.received)
        pack: Pack = await client.protocol.send_request_async(CONTEXT_FOR_TASK, {"task": task})
        if holds(pack):
            return pack
        await statuses.after(seen)


def define(path: Path, name: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'def {name}():\n    """{name} does its job."""\n    return 1\n', encoding="utf-8")


async def test_a_file_created_changed_and_deleted_on_disk_is_followed(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    refunds = workspace / "shop" / "refunds.py"

    define(refunds, "refund_everything")
    created = await eventually(
        client, statuses, "refund_everything", has("shop/refunds.py::refund_everything")
    )
    assert created["bodies"][0]["id"] == "shop/refunds.py::refund_everything"

    define(refunds, "refund_nothing")
    changed = await eventually(client, statuses, "refund_nothing", has("shop/refunds.py::refund_nothing"))
    assert changed["bodies"][0]["id"] == "shop/refunds.py::refund_nothing"

    refunds.unlink()
    deleted = await eventually(
        client, statuses, "refund_nothing", lambda p: "shop/refunds.py::refund_nothing" not in ids(p)
    )
    assert not any(item_id.startswith("shop/refunds.py") for item_id in ids(deleted))


async def test_a_renamed_file_is_found_at_its_new_path(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()

    (workspace / "shop" / "payments.py").rename(workspace / "shop" / "billing.py")
    pack = await eventually(client, statuses, "charge_card", has("shop/billing.py::charge_card"))

    assert pack["bodies"][0]["id"] == "shop/billing.py::charge_card"
    assert not any(item_id.startswith("shop/payments.py") for item_id in ids(pack))


async def test_a_new_folder_is_indexed_and_a_file_in_node_modules_is_not(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()

    define(workspace / "node_modules" / "leftpad" / "index.py", "leftpad_everything")
    define(workspace / "returns" / "policy" / "rules.py", "return_window_days")
    pack = await eventually(
        client, statuses, "return_window_days", has("returns/policy/rules.py::return_window_days")
    )
    # The node_modules file was written first, so it had its chance to be (wrongly) indexed.
    dependency = await client.protocol.send_request_async(CONTEXT_FOR_TASK, {"task": "leftpad_everything"})

    assert pack["bodies"][0]["id"] == "returns/policy/rules.py::return_window_days"
    assert not any("node_modules" in item_id for item_id in ids(dependency))


async def test_did_change_watched_files_reindexes_what_the_watcher_cannot_see(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    payments = workspace / "shop" / "payments.py"
    original = payments.read_text(encoding="utf-8")

    # The watcher reacts to writes that end in a close; a file still open for writing sends it nothing,
    # so only the client's notification can make this change known.
    with payments.open("a", encoding="utf-8") as still_open:
        still_open.write("\n\ndef settle_ledger():\n    return 0\n")
        still_open.flush()
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=payments.as_uri(), type=types.FileChangeType.Changed)]
            )
        )
        pack = await eventually(client, statuses, "settle_ledger", has("shop/payments.py::settle_ledger"))

    assert pack["bodies"][0]["id"] == "shop/payments.py::settle_ledger"
    assert "settle_ledger" not in original


async def test_a_file_whose_name_is_not_utf8_is_listed_and_the_rest_of_its_batch_indexed(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    """A Latin-1 name (an old archive unpacked) reaches the watcher in the same burst as a good file:
    the good one is indexed, the other named in the status; once it is gone, so is its mention."""
    await statuses.ready()
    latin1 = workspace / "shop" / os.fsdecode(b"caf\xe9.py")

    latin1.write_bytes(b"def cafe_special():\n    return 1\n")
    define(workspace / "shop" / "latte.py", "latte_special")
    pack = await eventually(client, statuses, "latte_special", has("shop/latte.py::latte_special"))
    while "undecodableNames" not in statuses.received[-1]:
        await statuses.after(len(statuses.received))
    listed = statuses.received[-1]
    latin1.unlink()
    define(workspace / "shop" / "mocha.py", "mocha_special")
    await eventually(client, statuses, "mocha_special", has("shop/mocha.py::mocha_special"))
    while "undecodableNames" in statuses.received[-1]:
        await statuses.after(len(statuses.received))

    assert pack["bodies"][0]["id"] == "shop/latte.py::latte_special"
    assert (listed["undecodableCount"], listed["undecodableNames"]) == (1, ["shop/caf\\xe9.py"])
