"""The MCP server's stdio transport: one JSON-RPC message per line, and an answer to every request,
including the ones that cannot be read.

The SDK's own stdio transport drops each line it cannot validate with a debug log line, so a client
that sent a request on such a line waits forever. Lines are read here instead, with the SDK's
parser first (a valid message takes exactly the path it takes in the SDK); a line it refuses is
looked at again with Python's ``json`` and answered as JSON-RPC 2.0 says, with the request's id
whenever it can be read and ``null`` otherwise:

* text that is not JSON, or JSON nested deeper than the SDK's parser goes: ``-32700`` (Parse
  error), with the id when Python's parser still reads one;
* a request whose strings hold a lone UTF-16 surrogate (``"\\ud800"`` is a valid JSON escape, and a
  string cut inside a surrogate pair holds one, but it is no Unicode text and the SDK's parser
  refuses it): ``-32602`` (Invalid params), naming the member that holds it;
* JSON that is no JSON-RPC 2.0 message (no ``method``, a wrong ``jsonrpc``, an id of another type,
  an array): ``-32600`` (Invalid Request).

A notification or a response cannot be answered: one with a lone surrogate is read with each
replaced by U+FFFD (a cancellation or a list of roots is then not lost), any other is logged and
dropped.

As in the SDK's transport, the process's own descriptors 0 and 1 point elsewhere while it serves
(the null device and stderr), so a child process or a stray ``print`` can never read or write the
protocol's bytes.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, BinaryIO, cast

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from smartctx.core.json_text import lone_surrogate_at, replace_lone_surrogates
from smartctx.mcp.redacting import redacted_message

log = logging.getLogger(__name__)

Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[Streams]:
    """Serve over the process's stdin and stdout until stdin ends: the streams to hand to the SDK's
    ``Server.run``."""
    wire_in, restore_in = _claim(0, sys.stdin, "rb")
    wire_out, restore_out = _claim(1, sys.stdout, "wb")
    to_server, from_wire = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_wire, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read, anyio.wrap_file(wire_in), to_server, to_wire.clone())
            group.start_soon(_write, anyio.wrap_file(wire_out), from_server)
            yield from_wire, to_wire
    finally:
        restore_out()
        restore_in()


async def _read(
    wire: anyio.AsyncFile[bytes],
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    replies: MemoryObjectSendStream[SessionMessage],
) -> None:
    async with to_server, replies:
        async for raw in wire:
            if raw.isspace():
                continue
            message, refusal = read_message(raw)
            # Neither the line nor the message is kept while the next line is awaited: a message
            # can be tens of megabytes.
            del raw
            if message is not None:
                await to_server.send(SessionMessage(message))
            elif refusal is not None:
                await replies.send(redacted_message(SessionMessage(refusal)))
            del message, refusal


async def _write(
    wire: anyio.AsyncFile[bytes], from_server: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    async with from_server:
        async for item in from_server:
            await wire.write(encode_message(item.message) + b"\n")
            await wire.flush()


def read_message(raw: bytes) -> tuple[types.JSONRPCMessage | None, types.JSONRPCError | None]:
    """A line as the message to serve, or as the error that answers it (or neither: a notification
    or response that cannot be read is logged and dropped).

    The bytes are parsed as they are (a decoded copy of a large message costs its size again);
    bytes that are not UTF-8 are read with each such sequence replaced, as the SDK's transport reads
    them."""
    try:
        return types.jsonrpc_message_adapter.validate_json(raw, by_name=False), None
    except ValidationError as error:
        refused = error
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        line = raw.decode("utf-8", "replace")
        try:
            return types.jsonrpc_message_adapter.validate_json(line, by_name=False), None
        except ValidationError as error:
            refused = error
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as error:
        return None, _error(None, types.PARSE_ERROR, f"the message is not JSON: {error}")
    request_id = _readable_id(value)
    surrogate_at = lone_surrogate_at(value)
    is_request = isinstance(value, dict) and "method" in value and "id" in value
    if surrogate_at is not None and is_request:
        return None, _error(
            request_id,
            types.INVALID_PARAMS,
            f"{surrogate_at} holds a lone UTF-16 surrogate, which is not text: send every string as"
            " valid Unicode (a string cut inside a surrogate pair holds one)",
        )
    if surrogate_at is not None:
        try:
            return types.jsonrpc_message_adapter.validate_python(
                replace_lone_surrogates(value), by_name=False
            ), None
        except ValidationError as error:
            refused = error
    not_json = refused.errors(include_url=False, include_input=False)[0]["type"] == "json_invalid"
    if not_json and is_request:
        # Python's parser reads what the SDK's refuses (nesting a few hundred levels deep).
        return None, _error(
            request_id, types.PARSE_ERROR, f"the message is not JSON: {_first_problem(refused)}"
        )
    if isinstance(value, dict) and "id" not in value and "method" in value:
        log.warning("dropped a notification that is not valid JSON-RPC: %s", _first_problem(refused))
        return None, None
    if isinstance(value, dict) and ("result" in value or "error" in value) and "method" not in value:
        log.warning("dropped a response that is not valid JSON-RPC: %s", _first_problem(refused))
        return None, None
    return None, _error(
        request_id, types.INVALID_REQUEST, f"not a JSON-RPC 2.0 request: {_shape_problem(value)}"
    )


def encode_message(message: types.JSONRPCMessage) -> bytes:
    """A message as one line of JSON. A reply that cannot be encoded becomes an error reply to the
    same request, so the caller is still answered (and the writer never dies on one message)."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
    except (PydanticSerializationError, UnicodeEncodeError) as error:
        log.error("a message could not be encoded as JSON: %s", error)
        request_id = message.id if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) else None
        fallback = _error(request_id, types.INTERNAL_ERROR, "the answer could not be encoded as JSON")
        return fallback.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _readable_id(value: Any) -> int | str | None:
    """The id to answer with: the message's own when JSON-RPC allows it (a string or a whole
    number), else null."""
    if not isinstance(value, dict):
        return None
    request_id = value.get("id")
    if isinstance(request_id, bool):
        return None
    if isinstance(request_id, int):
        return request_id
    if isinstance(request_id, str) and lone_surrogate_at(request_id) is None:
        return request_id
    return None


def _shape_problem(value: Any) -> str:
    """What makes a JSON value no JSON-RPC 2.0 request, in words."""
    if not isinstance(value, dict):
        return "a message is one JSON object (MCP has no batches)"
    if value.get("jsonrpc") != "2.0":
        return 'its "jsonrpc" member must be "2.0"'
    if "method" not in value:
        return 'it has no "method"'
    if not isinstance(value["method"], str):
        return '"method" must be a string'
    if "id" in value and _readable_id(value) is None:
        return '"id" must be a string or a whole number'
    if "params" in value and not isinstance(value["params"], dict):
        return '"params" must be an object'
    return "its members have the wrong types"


def _first_problem(error: ValidationError) -> str:
    first = error.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def _claim(fd: int, stream: Any, mode: str) -> tuple[BinaryIO, Callable[[], None]]:
    """The protocol's end of standard descriptor ``fd``, and how to give ``fd`` back: the wire is
    served from a private copy while ``fd`` points at the null device (stdin) or stderr (stdout).
    A stream that is not backed by ``fd`` (a test's replacement) is served as it is."""
    try:
        backed = stream.buffer.fileno() == fd
    except (AttributeError, OSError, ValueError):
        backed = False
    if not backed:
        return cast(BinaryIO, stream.buffer), lambda: None
    private = os.dup(fd)
    diversion = os.open(os.devnull, os.O_RDONLY) if fd == 0 else os.dup(2)
    os.dup2(diversion, fd)
    os.close(diversion)

    def restore() -> None:
        with suppress(OSError):
            os.dup2(private, fd)

    # closefd=False: a worker thread may still block reading it after the transport has ended.
    return cast(BinaryIO, os.fdopen(private, mode, closefd=False)), restore
