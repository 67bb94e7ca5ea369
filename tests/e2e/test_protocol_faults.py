"""Faults a client (or anything else writing to the server's stdin) can make, each answered as JSON-RPC
and LSP ask, with the server serving on: framing, envelopes, params, lifecycle. A real server over
real stdio, bytes written by hand (raw_client.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from raw_client import RawClient, encode, frame

from smartctx.lsp.protocol import (
    CONTEXT_FOR_TASK,
    EXPAND,
    INDEX_STATUS,
    REINDEX_COMMAND,
    UNKNOWN_FIELD_WARNING,
)

pytestmark = pytest.mark.asyncio

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002

STATUS = {"jsonrpc": "2.0", "id": "probe", "method": INDEX_STATUS}


def status_request(request_id: Any) -> bytes:
    return encode({"jsonrpc": "2.0", "id": request_id, "method": INDEX_STATUS})


# Bytes that must neither kill the server nor cost it the frames that follow; the ids listed are
# requests inside the fault that must still be answered.
FRAMING_FAULTS: dict[str, tuple[bytes, list[Any]]] = {
    "a length that overflows memory": (b"Content-Length: 99999999999\r\n\r\n{}", []),
    "a length above 64 bits": (b"Content-Length: 9999999999999999999\r\n\r\n{}", []),
    "a 5,000-digit length": (b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}", []),
    "a length of 2**31": (b"Content-Length: 2147483648\r\n\r\n{}", []),
    "a lower-case header name": (frame(status_request("lower"), b"content-length"), ["lower"]),
    "LF-only line ends": (
        b"Content-Length: %d\n\n" % len(status_request("lf")) + status_request("lf"),
        ["lf"],
    ),
    "a body one byte short": (
        b"Content-Length: %d\r\n\r\n" % (len(status_request(1)) + 1) + status_request(1),
        [1],
    ),
    "a body one byte long": (
        b"Content-Length: %d\r\n\r\n" % (len(status_request(2)) - 1) + status_request(2),
        [],
    ),
    "garbage between frames": (b"\x00\xffhello\r\n\r\nnot a header\r\n", []),
    "a frame without Content-Length": (b"Content-Type: x\r\n\r\n" + status_request(3), []),
    "a negative length": (b"Content-Length: -5\r\n\r\n{}", []),
    "an empty body": (b"Content-Length: 0\r\n\r\n", []),
    "a header line without end": (b"Content-Length: 1" + b" " * 20000, []),
}


async def test_framing_faults_neither_kill_nor_desynchronise(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        unanswered: dict[str, list[Any]] = {}
        for number, (name, (fault, inner_ids)) in enumerate(FRAMING_FAULTS.items()):
            probe = f"probe-{number}"
            await client.write(fault + frame(status_request(probe)))
            answers = [await client.answer_to(request_id) for request_id in [*inner_ids, probe]]
            missing = [answer for answer in answers if "result" not in answer]
            if missing:
                unanswered[name] = missing
        assert unanswered == {}
        assert {answer["error"]["code"] for answer in client.other_answers} <= {PARSE_ERROR, INVALID_REQUEST}
        assert await client.shutdown_and_exit() == 0
    finally:
        await client.close()


async def test_a_message_above_the_limit_is_skipped_and_answered(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start("--max-message-bytes", "1000")
    try:
        await client.initialize(workspace, index_dir)
        big = encode(
            {"jsonrpc": "2.0", "id": "big", "method": CONTEXT_FOR_TASK, "params": {"task": "x" * 2000}}
        )
        await client.write(frame(big) + frame(status_request("after")))
        refused = await client.answer_to("big")
        after = await client.answer_to("after")
        assert refused["error"]["code"] == INVALID_REQUEST
        assert "larger than the limit of 1,000 bytes" in refused["error"]["message"]
        assert "result" in after
    finally:
        await client.close()


async def test_an_unparsable_body_is_a_parse_error_to_id_null(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        await client.write(frame(b'{"jsonrpc": "2.0", "id": 7, "method":') + frame(b"\xff\xfe{}"))
        parse_errors = [await client.answer_to(None), await client.answer_to(None)]
        assert [answer["error"]["code"] for answer in parse_errors] == [PARSE_ERROR, PARSE_ERROR]
        # JSON-RPC: a reply whose request id cannot be read carries "id": null, not no id.
        assert ["id" in answer for answer in parse_errors] == [True, True]
        assert "result" in await client.request("after", INDEX_STATUS)
    finally:
        await client.close()


# Envelopes that are not JSON-RPC requests: (message, the id the error goes to). An id JSON-RPC
# allows (any string or number) is answered to even where LSP's narrower rule refuses it.
BAD_ENVELOPES: dict[str, tuple[Any, Any]] = {
    "a number for method": ({"jsonrpc": "2.0", "id": 1, "method": 5}, 1),
    "null for method": ({"jsonrpc": "2.0", "id": 2, "method": None}, 2),
    "an object id": ({"jsonrpc": "2.0", "id": {}, "method": INDEX_STATUS}, None),
    "an array id": ({"jsonrpc": "2.0", "id": [], "method": INDEX_STATUS}, None),
    "a fractional id": ({"jsonrpc": "2.0", "id": 1.5, "method": INDEX_STATUS}, 1.5),
    "a boolean id": ({"jsonrpc": "2.0", "id": True, "method": INDEX_STATUS}, None),
    "a null id": ({"jsonrpc": "2.0", "id": None, "method": INDEX_STATUS}, None),
    "an id above LSP's integer": ({"jsonrpc": "2.0", "id": 2**31, "method": INDEX_STATUS}, 2**31),
    "a fractional id without jsonrpc": ({"id": 6.5, "method": INDEX_STATUS}, 6.5),
    "no jsonrpc": ({"id": 3, "method": INDEX_STATUS}, 3),
    "jsonrpc 1.0": ({"jsonrpc": "1.0", "id": 4, "method": INDEX_STATUS}, 4),
    "neither method nor id": ({"jsonrpc": "2.0", "params": {}}, None),
    "an id without method": ({"jsonrpc": "2.0", "id": 7002, "params": {}}, 7002),
    "an id alone": ({"jsonrpc": "2.0", "id": 7003}, 7003),
    "a string": ("hello", None),
    "an empty batch": ([], None),
    "a batch": ([{"jsonrpc": "2.0", "id": 5, "method": INDEX_STATUS}], 5),
    "a lone surrogate in an id": ({"jsonrpc": "2.0", "id": "\ud800", "method": 5}, "\ud800"),
}


async def test_wrong_envelopes_are_invalid_requests(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        codes: dict[str, int] = {}
        for name, (message, answer_id) in BAD_ENVELOPES.items():
            await client.send(message)
            answer = await client.answer_to(answer_id)
            codes[name] = answer["error"]["code"]
            assert "data" not in answer["error"], name
            assert "id" in answer, name
        assert codes == {name: INVALID_REQUEST for name in BAD_ENVELOPES}
        assert "result" in await client.request("after", INDEX_STATUS)
    finally:
        await client.close()


# Requests whose params are missing or of the wrong type; each must be answered InvalidParams.
BAD_PARAMS: dict[str, tuple[str, Any]] = {
    "hover without params": ("textDocument/hover", None),
    "hover with a string line": (
        "textDocument/hover",
        {"textDocument": {"uri": "file:///x.py"}, "position": {"line": "4", "character": 0}},
    ),
    "hover with a fractional character": (
        "textDocument/hover",
        {"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 1.5}},
    ),
    "hover with a number for uri": (
        "textDocument/hover",
        {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}},
    ),
    "executeCommand with {}": ("workspace/executeCommand", {}),
    "executeCommand without params": ("workspace/executeCommand", None),
    "executeCommand with a bad argument": (
        "workspace/executeCommand",
        {"command": REINDEX_COMMAND, "arguments": [5]},
    ),
    "contextForTask without params": (CONTEXT_FOR_TASK, None),
    "contextForTask with a number task": (CONTEXT_FOR_TASK, {"task": 5}),
    "contextForTask with a string line": (
        CONTEXT_FOR_TASK,
        {"task": "x", "focus": {"position": {"line": "4", "character": 0}}},
    ),
    "expand without params": (EXPAND, None),
    "expand with an array": (EXPAND, ["id"]),
    "params that are a number": (INDEX_STATUS, 5),
}


async def test_bad_params_are_invalid_params_without_internals(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        errors: dict[str, dict[str, Any]] = {}
        for name, (method, params) in BAD_PARAMS.items():
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": name, "method": method}
            if params is not None:
                message["params"] = params
            await client.send(message)
            errors[name] = (await client.answer_to(name))["error"]
        assert {name: error["code"] for name, error in errors.items()} == {
            name: INVALID_PARAMS for name in BAD_PARAMS
        }
        assert [
            name for name, error in errors.items() if "data" in error or "Traceback" in error["message"]
        ] == []
    finally:
        await client.close()


async def test_hover_on_a_missing_file_is_invalid_params(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        missing = (workspace / "shop" / "gone.py").as_uri()
        answer = await client.request(
            1,
            "textDocument/hover",
            {"textDocument": {"uri": missing}, "position": {"line": 0, "character": 0}},
        )
        assert answer["error"]["code"] == INVALID_PARAMS
        assert "neither open in the editor nor a readable file" in answer["error"]["message"]
        assert "data" not in answer["error"]
    finally:
        await client.close()


async def test_the_lifecycle_is_enforced(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        before = await client.request(1, INDEX_STATUS)
        await client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        await client.initialize(workspace, index_dir)
        again = await client.initialize(workspace / "shop", index_dir, request_id=2)
        await client.request("shutdown", "shutdown")
        after = await client.request(3, INDEX_STATUS)

        assert before["error"]["code"] == SERVER_NOT_INITIALIZED
        assert again["error"]["code"] == INVALID_REQUEST
        assert after["error"]["code"] == INVALID_REQUEST
        assert await client.exit() == 0
    finally:
        await client.close()


async def test_exit_without_shutdown_exits_with_1(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        assert await client.exit() == 1
    finally:
        await client.close()


@pytest.mark.parametrize("cancelled_id", [[], {}, None, 1.5])
async def test_a_cancel_with_an_id_of_the_wrong_type_is_dropped(
    workspace: Path, index_dir: Path, cancelled_id: Any
) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        await client.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": cancelled_id}})
        assert "result" in await client.request("after", INDEX_STATUS)
    finally:
        await client.close()


async def replies_before_probe(client: RawClient, data: bytes) -> dict[Any, dict[str, Any]]:
    """The replies the server writes to ``data`` before it answers a probe sent after it, by id
    (the server reads frames in order, so whatever ``data`` is due is written by then)."""
    await client.write(data + frame(status_request("probe-after")))
    assert "result" in await client.answer_to("probe-after")
    replies = {json.dumps(reply.get("id")): reply for reply in client.other_answers}
    assert [reply for reply in client.other_answers if "id" not in reply] == []
    client.other_answers.clear()
    return replies


def nested(request_id: Any, depth: int, id_last: bool) -> bytes:
    """A status request whose params nest ``depth`` arrays, its id before them or after them."""
    head = json.dumps({"jsonrpc": "2.0", "method": INDEX_STATUS})[:-1]
    params = '"params": {"deep": ' + "[" * depth + "]" * depth + "}"
    member = '"id": ' + json.dumps(request_id)
    members = [params, member] if id_last else [member, params]
    return (head + ", " + ", ".join(members) + "}").encode()


# Bodies the server cannot read, each holding a request whose id can be read all the same: the body,
# and the code its id is answered with ("result" when the request is read after all).
UNREADABLE_BODIES: dict[str, tuple[bytes, Any, int | str]] = {
    "UTF-16 with a byte order mark": (status_request("u16").decode().encode("utf-16"), "u16", PARSE_ERROR),
    "UTF-16BE without one": (status_request("u16be").decode().encode("utf-16-be"), "u16be", PARSE_ERROR),
    "UTF-32": (status_request(32).decode().encode("utf-32"), 32, PARSE_ERROR),
    "UTF-32LE with a fractional id": (status_request(3.5).decode().encode("utf-32-le"), 3.5, PARSE_ERROR),
    "params 1,000 deep, the id first": (nested("deep-first", 1000, False), "deep-first", PARSE_ERROR),
    "params 100,000 deep, the id last": (nested(77, 100_000, True), 77, PARSE_ERROR),
    # RFC 8259 lets a parser skip a byte order mark before UTF-8, and the request is read.
    "a UTF-8 byte order mark": (b"\xef\xbb\xbf" + status_request("bom"), "bom", "result"),
}


async def test_a_body_that_cannot_be_read_is_answered_to_its_id(workspace: Path, index_dir: Path) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        outcomes: dict[str, Any] = {}
        for name, (body, request_id, _) in UNREADABLE_BODIES.items():
            reply = (await replies_before_probe(client, frame(body))).get(json.dumps(request_id))
            outcomes[name] = None if reply is None else reply.get("error", {}).get("code", "result")
        assert outcomes == {name: outcome for name, (_, _, outcome) in UNREADABLE_BODIES.items()}
    finally:
        await client.close()


# Methods LSP defines as notifications, sent with an id. JSON-RPC: a message with an id is a request
# and is answered; there is no request of that name, so MethodNotFound (as vscode-jsonrpc answers),
# and nothing is run: this exit does not end the server.
NOTIFICATIONS_AS_REQUESTS = {
    7001: "initialized",
    7004: "exit",
    7005: "textDocument/didSave",
    7006: "$/cancelRequest",
}


async def test_a_notification_sent_with_an_id_is_answered_method_not_found(
    workspace: Path, index_dir: Path
) -> None:
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        sent = b"".join(
            frame(encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}}))
            for request_id, method in NOTIFICATIONS_AS_REQUESTS.items()
        )
        replies = await replies_before_probe(client, sent)
        codes = {
            request_id: replies[json.dumps(request_id)]["error"]["code"]
            for request_id in NOTIFICATIONS_AS_REQUESTS
            if json.dumps(request_id) in replies
        }
        assert codes == {request_id: METHOD_NOT_FOUND for request_id in NOTIFICATIONS_AS_REQUESTS}
        assert await client.shutdown_and_exit() == 0
    finally:
        await client.close()


@pytest.mark.parametrize("with_id", [False, True], ids=["notification", "with an id"])
async def test_a_second_initialized_opens_nothing_twice_and_exit_still_ends_the_server(
    workspace: Path, index_dir: Path, tmp_path: Path, with_id: bool
) -> None:
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log:
        client = await RawClient.start(stderr=log)
        try:
            await client.initialize(workspace, index_dir)
            await client.notification(INDEX_STATUS, lambda status: status["state"] == "ready")
            again: dict[str, Any] = {"jsonrpc": "2.0", "method": "initialized", "params": {}}
            await client.send({**again, "id": "again"} if with_id else again)
            # Answered once the index thread has done whatever the second initialized gave it.
            reindex = {"command": REINDEX_COMMAND}
            assert "result" in await client.request("after", "workspace/executeCommand", reindex)
            exit_code = await client.shutdown_and_exit()
        finally:
            await client.close()
    assert exit_code == 0
    assert log_path.read_text().count("(on opening)") == 1


async def test_lone_surrogates_in_params_are_invalid_params_naming_the_field(
    workspace: Path, index_dir: Path
) -> None:
    orders = (workspace / "shop" / "orders.py").as_uri()
    position = {"line": 0, "character": 0}
    cases: dict[str, tuple[str, dict[str, Any], str]] = {
        "an expand id": (EXPAND, {"id": "shop/orders.py::Order\ud800"}, "params.id"),
        "a task": (CONTEXT_FOR_TASK, {"task": "order \udfff total"}, "params.task"),
        "the focus": (
            CONTEXT_FOR_TASK,
            {"task": "x", "focus": {"uri": orders + "\ud800"}},
            "params.focus.uri",
        ),
        "an open file": (
            CONTEXT_FOR_TASK,
            {"task": "x", "focus": {"openFiles": [{"uri": orders}, {"uri": "\ud800" + orders}]}},
            "params.focus.openFiles[1].uri",
        ),
        "an option name": (
            CONTEXT_FOR_TASK,
            {"task": "x", "options": {"\ud800": 1}},
            "a key of params.options",
        ),
        "a hover's document": (
            "textDocument/hover",
            {"textDocument": {"uri": orders + "\ud800"}, "position": position},
            "params.textDocument.uri",
        ),
    }
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        errors = {
            name: (await client.request(name, method, params))["error"]
            for name, (method, params, _) in cases.items()
        }
        assert {name: error["code"] for name, error in errors.items()} == {
            name: INVALID_PARAMS for name in cases
        }
        assert [
            name
            for name, (_, _, field) in cases.items()
            if f"{field} holds a lone surrogate" not in errors[name]["message"]
        ] == []
        assert "result" in await client.request("after", INDEX_STATUS)
    finally:
        await client.close()


async def test_focus_fields_of_the_wrong_type_are_refused_and_unknown_ones_reported(
    workspace: Path, index_dir: Path
) -> None:
    orders = (workspace / "shop" / "orders.py").as_uri()
    ill_typed: dict[str, tuple[dict[str, Any], str]] = {
        "a character that is a string": (
            {"uri": orders, "position": {"line": 1, "character": "x"}},
            "focus.position",
        ),
        "open files that are a string": ({"openFiles": "x"}, "focus.openFiles"),
        "a null edit": ({"recentEdits": [None]}, "focus.recentEdits"),
        "a number for the uri": ({"uri": 5}, "focus.uri"),
    }
    client = await RawClient.start()
    try:
        await client.initialize(workspace, index_dir)
        # The pack below must have bodies, so it waits for the first index (a request before it is
        # answered from an empty index).
        await client.notification(INDEX_STATUS, lambda status: status["state"] == "ready")
        errors = {
            name: (await client.request(name, CONTEXT_FOR_TASK, {"task": "order total", "focus": focus}))[
                "error"
            ]
            for name, (focus, _) in ill_typed.items()
        }
        unknown = {
            "task": "order total",
            "focsu": {},
            "focus": {"openUris": "x", "recentUris": [None], "openFiles": [{"uri": orders, "visibel": True}]},
        }
        pack = (await client.request("unknown", CONTEXT_FOR_TASK, unknown))["result"]
    finally:
        await client.close()
    assert {name: error["code"] for name, error in errors.items()} == {
        name: INVALID_PARAMS for name in ill_typed
    }
    assert [name for name, (_, field) in ill_typed.items() if field not in errors[name]["message"]] == []
    warnings = [
        warning for warning in pack["metadata"]["warnings"] if warning["code"] == UNKNOWN_FIELD_WARNING
    ]
    assert len(warnings) == 1
    named = ["focsu", "focus.openUris", "focus.recentUris", "focus.openFiles[0].visibel"]
    assert [field for field in named if field not in warnings[0]["message"]] == []
    assert pack["bodies"], "the known fields are still read"
