"""The language server's one exit: every message it writes passes
:func:`~smartctx.secrets.redaction.redact_tree`.

Responses, notifications, requests to the client and errors all leave through ``_send_data``, so
redacting there covers what any handler sends, including texts pygls writes itself (an exception's
message in an error reply).

A message reaches the wire by one of two routes, each through ``redact_tree``:

- A result made as :class:`RedactedJson` (a context pack, an expanded node) was redacted and
  serialised on the query thread that built it, so the event loop only frames it: the text is
  ``json.dumps(redact_tree(value))``, taken when the result is made, and the envelope around it (the
  id the client chose) is redacted here. The class has no other way in: its one constructor takes the
  value and redacts it, and nothing done to the value afterwards reaches the text.
- Any other message is redacted here as JSON values: pygls's generic envelopes (smartctx's own
  results and notifications) are read where they are when what they carry is JSON already, an
  error reply is built field by field (so its id stays, null included), and anything else
  (lsprotocol's types: a hover, a log message) is first dumped with pygls's hook and read back.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol.types import ResponseErrorMessage
from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)

from smartctx.secrets.redaction import redact_tree

log = logging.getLogger(__name__)


class RedactedJson:
    """A result as JSON text with every string in it redacted (see the module's doc)."""

    __slots__ = ("text",)

    def __init__(self, value: Any) -> None:
        # redact_tree raises TypeError on anything that is not a JSON value, so nothing it cannot
        # read is serialised.
        self.text: str = json.dumps(redact_tree(value))


def message_text(data: Any, serialize: Callable[[Any], Any]) -> str:
    """``data``, a message pygls built, as the JSON text that goes on the wire, redacted;
    ``serialize`` is pygls's hook for the objects ``json`` cannot encode."""
    if type(data) is JsonRPCResponseMessage and isinstance(data.result, RedactedJson):
        envelope = json.dumps(redact_tree({"id": data.id, "jsonrpc": data.jsonrpc}))
        return f'{envelope[:-1]}, "result": {data.result.text}}}'
    if type(data) is ResponseErrorMessage:
        # JSON-RPC: an error reply carries the request's id, null when it could not be read;
        # lsprotocol's converter leaves out a None id.
        reply = {"id": data.id, "jsonrpc": data.jsonrpc, "error": serialize(data.error)}
        return json.dumps(redact_tree(reply))
    fields = _generic_fields(data)
    if fields is not None:
        try:
            return json.dumps(redact_tree(fields))
        except TypeError:
            log.debug("a message holds more than JSON values; it is dumped before it is redacted")
    return json.dumps(redact_tree(json.loads(json.dumps(data, default=serialize))))


def _generic_fields(data: Any) -> dict[str, Any] | None:
    """The fields of one of pygls's generic envelopes, whose payload is whatever a handler gave (JSON
    values for smartctx's methods), in the order pygls's converter gives them; None for any other
    message."""
    kind = type(data)
    if kind is JsonRPCResponseMessage:
        return {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
    if kind is JsonRPCNotification:
        return {"method": data.method, "jsonrpc": data.jsonrpc, "params": data.params}
    if kind is JsonRPCRequestMessage:
        return {"id": data.id, "method": data.method, "jsonrpc": data.jsonrpc, "params": data.params}
    return None


class RedactingProtocol(LanguageServerProtocol):
    def _send_data(self, data: Any) -> None:
        # pygls's own _send_data, but for the body, which message_text makes.
        if not data:
            return
        if self.writer is None:
            log.error("no transport to send a message on")
            return
        try:
            body = message_text(data, self._serialize_message).encode(self.CHARSET)
            if self._include_headers:
                header = (
                    f"Content-Length: {len(body)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                )
                body = header.encode("ascii") + body
            # Both transports' writers (transport.py) write at once: stdout's, and a TCP stream's
            # buffer.
            self.writer.write(body)
        except BrokenPipeError:
            # serve() ends on it: the client has gone.
            raise
        except Exception as error:
            log.exception("a message could not be sent")
            self._server._report_server_error(error, JsonRpcInternalError)
