"""The language server through the real protocol: index, answer, reject bad params, follow edits."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from lsp_status import IndexStatusLog
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcMethodNotFound, JsonRpcServerError
from pytest_lsp import LanguageClient

from smartctx.lsp.protocol import (
    CONTEXT_FOR_TASK,
    INDEX_STATUS,
    INDEX_UNAVAILABLE_CODE,
    PROTOCOL_VERSION,
    REINDEX_COMMAND,
    ExperimentalCapabilities,
)
from smartctx.wire.shapes import IndexStatus, WireContextPack
from wire_shapes import assert_matches

pytestmark = pytest.mark.asyncio

DECLINED = "charge_card should raise PaymentDeclined when the gateway refuses"
DECLINED_FIRST_BODY = "shop/payments.py::charge_card"


async def context_for_task(client: LanguageClient, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await client.protocol.send_request_async(CONTEXT_FOR_TASK, params)
    return result


async def test_context_for_task_answers_from_the_background_index(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    ready = await statuses.ready()
    assert statuses.received[0]["state"] == "indexing"
    assert ready["filesDone"] == ready["filesTotal"] > 0
    assert ready["pendingFiles"] == 0

    pack = await context_for_task(client, {"task": DECLINED})

    assert_matches(pack, WireContextPack)
    assert pack["bodies"][0]["id"] == DECLINED_FIRST_BODY
    assert pack["bodies"][0]["citation"].startswith("shop/payments.py:")
    assert pack["metadata"]["freshness"]["pendingFiles"] == 0
    assert pack["metadata"]["freshness"]["indexedFiles"] == ready["filesTotal"]
    kinds = [report.kind for reports in client.progress_reports.values() for report in reports]
    assert kinds[0] == "begin"
    assert kinds[-1] == "end"


async def test_initialize_names_the_server_version_and_the_protocol_version(
    client: LanguageClient, initialize_results: list[types.InitializeResult]
) -> None:
    result = initialize_results[0]

    # What the client compares with the wheel it carries, and with the protocol it needs.
    assert result.server_info is not None
    assert (result.server_info.name, result.server_info.version) == ("smartctx", version("smartctx"))
    experimental = result.capabilities.experimental
    assert_matches(experimental, ExperimentalCapabilities)
    assert experimental["smartctx"]["protocolVersion"] == PROTOCOL_VERSION >= 1


async def test_a_task_over_the_cap_is_answered_without_being_echoed(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    await statuses.ready()
    task = "checkout log\n" + "poll ok\n" * 500_000 + DECLINED

    pack = await context_for_task(client, {"task": task})

    assert pack["bodies"][0]["id"] == DECLINED_FIRST_BODY
    assert len(pack["taskDescription"]) < 3_000
    assert "task-truncated" in [warning["code"] for warning in pack["metadata"]["warnings"]]


async def test_index_status_request_matches_the_notifications(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    ready = await statuses.ready()

    status = await client.protocol.send_request_async(INDEX_STATUS, None)

    assert_matches(status, IndexStatus)
    assert status == ready


# Each case: params, and the field the error message must name.
INVALID_PARAMS = {
    "empty task": ({"task": ""}, "task"),
    "no task": ({"options": {}}, "task"),
    "hop depth out of range": ({"task": DECLINED, "options": {"hopDepth": 9}}, "options.hopDepth"),
    "budget not a number": ({"task": DECLINED, "options": {"budgetTokens": "lots"}}, "options.budgetTokens"),
    "unknown option": ({"task": DECLINED, "options": {"colour": "blue"}}, "options.colour"),
    "cutoff not a date": ({"task": DECLINED, "options": {"prCutoff": "last tuesday"}}, "options.prCutoff"),
    "token scale out of range": ({"task": DECLINED, "options": {"tokenScale": 40}}, "options.tokenScale"),
    "token model not a name": ({"task": DECLINED, "options": {"tokenModel": 7}}, "options.tokenModel"),
    "focus outside the workspace": ({"task": DECLINED, "focus": {"uri": "file:///etc/passwd"}}, "focus.uri"),
    "open file outside the workspace": (
        {"task": DECLINED, "focus": {"openFiles": [{"uri": "file:///etc/passwd"}]}},
        "focus.openFiles[0].uri",
    ),
    "recent edit without a time": (
        {"task": DECLINED, "focus": {"recentEdits": [{"uri": "file:///etc/passwd"}]}},
        "focus.recentEdits[0]",
    ),
}


async def test_invalid_params_get_an_error_naming_the_field_and_the_server_keeps_serving(
    client: LanguageClient, statuses: IndexStatusLog, subtests: pytest.Subtests
) -> None:
    await statuses.ready()
    # One server for every case: starting one costs more than all the requests together.
    for case, (params, named) in INVALID_PARAMS.items():
        with subtests.test(case):
            with pytest.raises(JsonRpcInvalidParams) as error:
                await context_for_task(client, params)

            assert named in error.value.message
            pack = await context_for_task(client, {"task": DECLINED})
            assert pack["bodies"][0]["id"] == DECLINED_FIRST_BODY


async def test_a_budget_stated_in_a_readers_tokens_is_packed_in_the_tokenizers(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    """A client that measured its model at 1.6 tokens per o200k_base token asks for 500 of them: the
    pack is the one of a 312-token budget, and its metadata says for whom and at what scale. A
    setting's tokenScale (headroom for a model nobody can count) applies when a request has none."""
    await statuses.ready()
    options = {"budgetTokens": 500, "maxBodies": 5}

    scaled = await context_for_task(
        client, {"task": DECLINED, "options": {**options, "tokenScale": 1.6, "tokenModel": "reader-7"}}
    )
    plain = await context_for_task(client, {"task": DECLINED, "options": {**options, "budgetTokens": 312}})
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"smartctx": {"contextDefaults": {"tokenScale": 1.25}}})
    )
    headroom = await context_for_task(client, {"task": DECLINED, "options": options})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"smartctx": {}}))

    assert_matches(scaled, WireContextPack)
    assert (scaled["budgetTokens"], scaled["text"]) == (312, plain["text"])
    assert scaled["tokensUsed"] == plain["tokensUsed"] <= 312
    assert scaled["metadata"]["tokenScale"] == 1.6 and scaled["metadata"]["tokenModel"] == "reader-7"
    assert plain["metadata"]["tokenScale"] == 1.0 and plain["metadata"]["tokenModel"] is None
    assert (headroom["budgetTokens"], headroom["metadata"]["tokenScale"]) == (400, 1.25)


async def test_unknown_method_is_method_not_found(client: LanguageClient, statuses: IndexStatusLog) -> None:
    await statuses.ready()

    with pytest.raises(JsonRpcMethodNotFound):
        await client.protocol.send_request_async("smartctx/noSuchMethod", {})

    assert (await client.protocol.send_request_async(INDEX_STATUS, None))["state"] == "ready"


async def test_saved_edit_is_found_by_the_next_request(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    payments = workspace / "shop" / "payments.py"
    payments.write_text(
        payments.read_text(encoding="utf-8")
        + '\n\ndef refund_everything():\n    """Refund every charge ever made."""\n    return []\n',
        encoding="utf-8",
    )

    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=payments.as_uri()))
    )
    await statuses.ready(2)
    pack = await context_for_task(client, {"task": "refund_everything"})

    assert pack["bodies"][0]["id"] == "shop/payments.py::refund_everything"


async def test_after_a_one_file_update_the_status_still_counts_the_whole_index(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    first = await statuses.ready()
    payments = workspace / "shop" / "payments.py"

    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=payments.as_uri()))
    )
    after = await statuses.ready(2)

    assert first["indexedFiles"] == first["filesTotal"] > 1
    assert after["filesTotal"] == 1
    assert after["indexedFiles"] == first["indexedFiles"]


async def test_reindex_command_is_advertised_and_answers_when_the_folder_is_reconciled(
    client: LanguageClient,
    statuses: IndexStatusLog,
    workspace: Path,
    initialize_results: list[types.InitializeResult],
) -> None:
    await statuses.ready()
    inventory = workspace / "shop" / "inventory.py"
    # Changed behind the server's back (no editor event).
    inventory.write_text(
        inventory.read_text(encoding="utf-8") + "\n\ndef count_every_shelf():\n    return 0\n",
        encoding="utf-8",
    )

    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command=REINDEX_COMMAND))
    pack = await context_for_task(client, {"task": "count_every_shelf"})

    provider = initialize_results[0].capabilities.execute_command_provider
    assert provider is not None
    assert REINDEX_COMMAND in provider.commands
    # The server's file watcher may take the change in first on a busy machine, leaving the reindex
    # nothing to parse; either way the reindex answers with its counts and the change is indexed.
    assert result["filesParsed"] in (0, 1) and result["filesDeleted"] == 0
    assert result["filesTotal"] == result["filesParsed"] + result["filesUnchanged"]
    assert pack["bodies"][0]["id"] == "shop/inventory.py::count_every_shelf"
    assert statuses.received[-1]["state"] == "ready"


async def test_unsaved_buffer_is_packed_and_closing_it_reverts_to_disk(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    payments = workspace / "shop" / "payments.py"
    saved = payments.read_text(encoding="utf-8")
    unsaved = saved.replace("raise PaymentDeclined when the gateway refuses", "UNSAVED-EDIT in the buffer")
    assert unsaved != saved
    document = open_buffer(client, payments, saved)
    change_buffer(client, document, unsaved)
    await statuses.ready(2)

    edited = await context_for_task(client, {"task": DECLINED})
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=document))
    await statuses.ready(3)
    reverted = await context_for_task(client, {"task": DECLINED})

    assert "UNSAVED-EDIT" in body_source(edited, DECLINED_FIRST_BODY)
    assert "UNSAVED-EDIT" not in body_source(reverted, DECLINED_FIRST_BODY)
    assert not [w for w in edited["metadata"]["warnings"] if w["code"].startswith("stale-")]


BRAND_NEW = '''def brand_new_fn(order):
    """Ship an order that was typed but never saved."""
    return charge_card(order.token, order.total)


'''


async def test_a_definition_typed_but_not_saved_is_found_until_the_buffer_closes(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    payments = workspace / "shop" / "payments.py"
    saved = payments.read_text(encoding="utf-8")
    # Above the class, so every definition below it moves down in the buffer.
    unsaved = saved.replace("class PaymentDeclined", BRAND_NEW + "class PaymentDeclined")
    document = open_buffer(client, payments, saved)
    change_buffer(client, document, unsaved)
    # The unchanged didOpen indexes nothing; the change is the one batch that reports "ready".
    await statuses.ready(2)

    found = await context_for_task(client, {"task": "brand_new_fn ships an order"})
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=document))
    await statuses.ready(3)
    gone = await context_for_task(client, {"task": "brand_new_fn ships an order"})

    first = found["bodies"][0]
    assert (first["id"], first["citation"]) == ("shop/payments.py::brand_new_fn", "shop/payments.py:6-8")
    assert first["source"] == BRAND_NEW.rstrip("\n") + "\n"
    ids = [item["id"] for item in gone["bodies"] + gone["summaries"]]
    assert "shop/payments.py::brand_new_fn" not in ids
    assert payments.read_text(encoding="utf-8") == saved


ODD_TEXT = """def odd_text_fn():
    return "half \ud800 a pair"


"""


async def test_a_lone_surrogate_typed_in_a_buffer_is_packed_as_a_replacement_character(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    # An editor's buffer may hold a lone surrogate (JavaScript strings can); JSON carries it as the
    # escape \ud800. A notification cannot be refused, so the buffer goes on with U+FFFD there.
    await statuses.ready()
    payments = workspace / "shop" / "payments.py"
    saved = payments.read_text(encoding="utf-8")
    document = open_buffer(client, payments, saved)
    change_buffer(
        client, document, saved.replace("class PaymentDeclined", ODD_TEXT + "class PaymentDeclined")
    )
    await statuses.ready(2)

    found = await context_for_task(client, {"task": "odd_text_fn"})

    assert 'return "half \ufffd a pair"' in body_source(found, "shop/payments.py::odd_text_fn")


def open_buffer(client: LanguageClient, path: Path, text: str) -> types.TextDocumentIdentifier:
    document = types.TextDocumentIdentifier(uri=path.as_uri())
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=document.uri, language_id="python", version=1, text=text)
        )
    )
    return document


def change_buffer(client: LanguageClient, document: types.TextDocumentIdentifier, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=document.uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def body_source(pack: dict[str, Any], body_id: str) -> str:
    source: str = next(body["source"] for body in pack["bodies"] if body["id"] == body_id)
    return source


@pytest.mark.parametrize("index_dir", [Path("/dev/null/index")])
async def test_an_index_that_cannot_be_opened_is_reported_and_every_request_says_why(
    client: LanguageClient, statuses: IndexStatusLog, index_dir: Path
) -> None:
    failed = await statuses.state("failed")

    with pytest.raises(JsonRpcServerError) as error:
        await context_for_task(client, {"task": DECLINED})

    assert str(index_dir) in failed["message"]
    # Logged on the index thread, forwarded to the client by the event loop.
    errors = [log.message for log in client.log_messages if log.type == types.MessageType.Error]
    assert errors == [f"smartctx.live.live_index: {failed['message']}"]
    assert error.value.message == failed["message"]
    assert error.value.code == INDEX_UNAVAILABLE_CODE
    assert (await client.protocol.send_request_async(INDEX_STATUS, None)) == failed


async def test_changed_settings_apply_to_the_next_request_and_invalid_ones_are_shown_as_warnings(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    await statuses.ready()

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"smartctx": {"contextDefaults": {"maxBodies": 1}, "bufferDebounceMs": "soon"}}
        )
    )
    narrow = await context_for_task(client, {"task": DECLINED})
    wide = await context_for_task(client, {"task": DECLINED, "options": {"maxBodies": 4}})

    assert len(narrow["bodies"]) == 1
    assert len(wide["bodies"]) > 1
    warnings = [message for message in client.messages if message.type == types.MessageType.Warning]
    assert len(warnings) == 1
    assert "bufferDebounceMs" in warnings[0].message
    logged = [log.message for log in client.log_messages if log.type == types.MessageType.Warning]
    assert logged == [f"smartctx.lsp.server: {warnings[0].message.removeprefix('smartctx: ')}"]
    # Info records stay on stderr at the default clientLogLevel ("warning").
    assert not [log for log in client.log_messages if log.type == types.MessageType.Info]


async def test_history_sections_over_the_protocol(client: LanguageClient, statuses: IndexStatusLog) -> None:
    """The e2e workspace is not a git repository: impact still comes, recentPRs stay empty, and a
    warning says why."""
    await statuses.ready()
    pack = await context_for_task(
        client, {"task": DECLINED, "options": {"includePRs": True, "includeImpact": True}}
    )
    assert pack["impact"]["target"]["id"] == DECLINED_FIRST_BODY
    assert all(body["recentPRs"] == [] for body in pack["bodies"])
    assert "history-unavailable" in [warning["code"] for warning in pack["metadata"]["warnings"]]


def focus_parts(pack: dict[str, Any], path: str) -> set[str]:
    """The focus parts of the scores of the bodies from ``path``."""
    return {
        part
        for body in pack["bodies"]
        if body["filePath"] == path
        for part in body["scoreParts"]
        if part.startswith("focus")
    }


STOCK = "reserve stock for every line of an order"


async def test_an_edit_in_the_editor_steers_packs_of_a_client_that_sends_no_focus(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    inventory = workspace / "shop" / "inventory.py"
    saved = inventory.read_text(encoding="utf-8")
    before = await context_for_task(client, {"task": STOCK})
    document = open_buffer(client, inventory, saved)
    change_buffer(client, document, saved + "\n# counted again on Mondays\n")
    await statuses.ready(2)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=document))
    await statuses.ready(3)

    after = await context_for_task(client, {"task": STOCK})

    assert focus_parts(before, "shop/inventory.py") == set()
    assert "focusFile" in focus_parts(after, "shop/inventory.py")


async def test_a_save_the_watcher_sees_steers_the_next_pack(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    inventory = workspace / "shop" / "inventory.py"
    inventory.write_text(inventory.read_text(encoding="utf-8") + "\n# saved outside the editor\n", "utf-8")
    await statuses.ready(2)

    pack = await context_for_task(client, {"task": STOCK})

    assert "focusFile" in focus_parts(pack, "shop/inventory.py")
