"""One symbol through the real protocol: ``smartctx/expand`` by id, and the hover over a name."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from lsp_status import IndexStatusLog
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from smartctx.lsp.protocol import (
    CONTENT_MODIFIED_CODE,
    CONTEXT_FOR_SYMBOL_COMMAND,
    EXPAND,
    INDEX_STATUS,
)
from smartctx.wire.shapes import WireNode
from wire_shapes import assert_matches

pytestmark = pytest.mark.asyncio

CHARGE_CARD = "shop/payments.py::charge_card"


async def expand(client: LanguageClient, params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await client.protocol.send_request_async(EXPAND, params)
    return result


async def test_expand_answers_one_node_with_its_full_source(
    client: LanguageClient, statuses: IndexStatusLog
) -> None:
    await statuses.ready()

    node = await expand(client, {"id": CHARGE_CARD})

    assert_matches(node, WireNode)
    assert {key: node[key] for key in ("id", "kind", "qualifiedName", "filePath", "citation")} == {
        "id": CHARGE_CARD,
        "kind": "function",
        "qualifiedName": "charge_card",
        "filePath": "shop/payments.py",
        "citation": "shop/payments.py:10-17",
    }
    assert (node["startLine"], node["endLine"]) == (10, 17)
    assert node["source"].startswith("def charge_card(card_token, amount_cents):\n")
    assert node["source"].endswith('    return response["charge_id"]\n')
    assert node["signature"] == "def charge_card(card_token, amount_cents)"
    assert node["doc"].startswith("Charge a tokenized card")
    assert node["tokens"] > 0
    assert node["warnings"] == []


# Each case: params, and what the error message must name.
BAD_EXPAND_PARAMS = {
    "unknown id": ({"id": "shop/payments.py::no_such_function"}, "shop/payments.py::no_such_function"),
    "not an id": ({"id": "charge_card"}, "'charge_card'"),
    "no id": ({}, "id"),
    "id not a string": ({"id": 7}, "id"),
}


async def test_expand_with_bad_params_is_invalid_params_and_the_server_keeps_serving(
    client: LanguageClient, statuses: IndexStatusLog, subtests: pytest.Subtests
) -> None:
    await statuses.ready()
    for case, (params, named) in BAD_EXPAND_PARAMS.items():
        with subtests.test(case):
            with pytest.raises(JsonRpcInvalidParams) as error:
                await expand(client, params)

            assert named in error.value.message
            assert (await expand(client, {"id": CHARGE_CARD}))["citation"] == "shop/payments.py:10-17"


async def test_expand_finds_a_definition_that_moved_on_disk_and_says_when_it_is_gone(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    payments = workspace / "shop" / "payments.py"
    saved = payments.read_text(encoding="utf-8")
    # Written behind the server's back: the index still has the old lines.
    payments.write_text("# one\n# two\n" + saved, encoding="utf-8")
    moved = await expand(client, {"id": CHARGE_CARD})
    payments.write_text(saved.replace("def charge_card(", "def charge_card_renamed("), encoding="utf-8")

    with pytest.raises(JsonRpcException) as error:
        await expand(client, {"id": CHARGE_CARD})

    assert moved["citation"] == "shop/payments.py:12-19"
    assert moved["source"].startswith("def charge_card(")
    assert [warning["code"] for warning in moved["warnings"]] == ["stale-relocated"]
    # The server's watcher may already have indexed the rename, and then the id is simply unknown;
    # else the server finds the indexed definition gone from the file on disk. Either answer says so.
    if error.value.code == CONTENT_MODIFIED_CODE:
        assert "charge_card is no longer in shop/payments.py" in error.value.message
    else:
        assert error.value.code == JsonRpcInvalidParams.CODE
        assert "may have been renamed or removed" in error.value.message


async def hover(client: LanguageClient, path: Path, line: int, character: int) -> types.Hover | None:
    """The hover at a 1-based line and 0-based character, as an editor shows positions."""
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            position=types.Position(line=line - 1, character=character),
        )
    )


def markdown_of(result: types.Hover | None) -> str:
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


async def test_hover_on_a_call_shows_the_definition_it_resolves_to(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    orders = workspace / "shop" / "orders.py"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=orders.as_uri(), language_id="python", version=1, text=orders.read_text(encoding="utf-8")
            )
        )
    )

    # Line 43 is "        charge_card(card_token, self.total_cents())" inside Order.place.
    markdown = markdown_of(await hover(client, orders, 43, 12))

    assert "```python\ndef charge_card(card_token, amount_cents)\n```" in markdown
    assert "Charge a tokenized card; raise PaymentDeclined when the gateway refuses." in markdown
    assert f"[shop/payments.py:10-17]({(workspace / 'shop' / 'payments.py').as_uri()}#L10)" in markdown
    assert f"1 use in 1 file: [`Order.place`]({orders.as_uri()}#L43)" in markdown
    command = f"(command:{CONTEXT_FOR_SYMBOL_COMMAND}?"
    assert command in markdown
    encoded = markdown.split(command)[1].split(")")[0]
    assert f'"id": "{CHARGE_CARD}"' in unquote(encoded)


async def test_hover_on_a_definition_name_shows_it_and_elsewhere_shows_nothing(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    payments = workspace / "shop" / "payments.py"

    on_name = markdown_of(await hover(client, payments, 25, 6))
    on_keyword = await hover(client, payments, 25, 1)
    on_blank_line = await hover(client, payments, 24, 0)
    on_local_name = await hover(client, payments, 14, 5)

    assert "def send_to_gateway(payload)" in on_name
    assert "2 uses in 1 file" in on_name
    assert (on_keyword, on_blank_line, on_local_name) == (None, None, None)
    assert (await client.protocol.send_request_async(INDEX_STATUS, None))["state"] == "ready"


async def test_hover_on_a_definition_that_spans_its_whole_file(
    client: LanguageClient, statuses: IndexStatusLog, workspace: Path
) -> None:
    await statuses.ready()
    solo = workspace / "shop" / "solo.py"
    # The function and the file's module node share lines 1-2: the definition named there wins.
    solo.write_text("def solo_total(amounts):\n    return sum(amounts)\n", encoding="utf-8")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=solo.as_uri()))
    )
    await statuses.ready(2)

    markdown = markdown_of(await hover(client, solo, 1, 6))

    assert "def solo_total(amounts)" in markdown
