"""The language server's exit (lsp/redacting.py): each of its routes writes the bytes pygls itself
would write for the message, with every string redacted."""

from __future__ import annotations

import io
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCResponseMessage, LanguageServerProtocol

from smartctx.lsp.json_converter import json_converter
from smartctx.lsp.redacting import RedactedJson
from smartctx.lsp.server import SmartctxServer

# Built from pieces so that the test file itself holds no token a scanner would flag.
TOKEN = "ghp_" + "Wq3Zr8Xm2Kp7Lt5Nv9Bc4Df6Gh1Jk0Ls3Qa7"
# What a pack's JSON holds: nested objects and arrays, numbers, null, booleans, text beyond ASCII.
PACK_LIKE: dict[str, Any] = {
    "taskDescription": "fix the “naïve” datetime → aware one",
    "bodies": [{"id": "a.py::f", "score": 0.123456, "scoreParts": {"bm25": 1e-7}, "startLine": 3}],
    "subgraph": {"nodes": ["a.py::f"], "edges": []},
    "trimmed": False,
    "impact": None,
    "metadata": {"timingsMs": {"search": 1.5}, "freshness": {"dirty": None, "gitHead": "abc"}},
}


def written(protocol: LanguageServerProtocol, send: Any) -> bytes:
    sink = io.BytesIO()
    protocol.set_writer(sink)
    send(protocol)
    return sink.getvalue()


def pygls_protocol() -> LanguageServerProtocol:
    """pygls's own protocol, whose ``_send_data`` writes what it is given as it is."""
    return LanguageServer("reference", "1", converter_factory=json_converter).protocol


def smartctx_protocol() -> LanguageServerProtocol:
    return SmartctxServer().protocol


def respond(msg_id: int | str, result: Any) -> Any:
    return lambda protocol: protocol._send_response(msg_id, result=result)


def test_a_result_redacted_on_a_query_thread_leaves_as_pygls_would_send_the_value() -> None:
    expected = written(pygls_protocol(), respond(7, PACK_LIKE))

    assert written(smartctx_protocol(), respond(7, RedactedJson(PACK_LIKE))) == expected
    assert written(smartctx_protocol(), respond(7, PACK_LIKE)) == expected


def test_every_route_replaces_secrets_in_the_result_and_the_envelope() -> None:
    value = {"text": f"token = {TOKEN}", "ids": [f"a.py::{TOKEN}"]}
    redacted = {"text": "token = [REDACTED]", "ids": ["a.py::[REDACTED]"]}
    expected = written(pygls_protocol(), respond("[REDACTED]", redacted))

    assert written(smartctx_protocol(), respond(TOKEN, RedactedJson(value))) == expected
    assert written(smartctx_protocol(), respond(TOKEN, value)) == expected


def test_lsprotocol_types_and_notifications_leave_as_pygls_would_send_them() -> None:
    hover = types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="`f()`"))
    log = types.LogMessageParams(type=types.MessageType.Info, message="indexed")

    def notify(method: str, params: Any) -> Any:
        return lambda protocol: protocol.notify(method, params)

    for send in (
        respond(1, hover),
        respond(2, None),
        notify("smartctx/indexStatus", {"state": "ready", "filesDone": 3}),
        notify(types.WINDOW_LOG_MESSAGE, log),
    ):
        assert written(smartctx_protocol(), send) == written(pygls_protocol(), send)


def test_a_hover_with_a_secret_leaves_redacted() -> None:
    hover = types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=TOKEN))
    clean = types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="[REDACTED]"))

    assert written(smartctx_protocol(), respond(1, hover)) == written(pygls_protocol(), respond(1, clean))


def test_only_json_values_are_made_into_a_redacted_result() -> None:
    envelope = JsonRPCNotification(method="m", jsonrpc="2.0", params=None)

    with pytest.raises(TypeError):
        RedactedJson({"message": envelope})
    with pytest.raises(TypeError):
        RedactedJson([JsonRPCResponseMessage(id=1, jsonrpc="2.0", result=TOKEN)])
