"""The MCP server's one exit: every message it writes passes :func:`~smartctx.secrets.redaction.redact_tree`.

Tool results, log notifications, progress messages and errors all leave through the SDK's write
stream, so redacting there covers what any handler sends, including texts no handler wrote itself.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any, Protocol

import mcp_types as types
from mcp.shared.message import SessionMessage

from smartctx.secrets.redaction import redact_tree

log = logging.getLogger(__name__)


class _Sender(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...
    async def aclose(self) -> None: ...


def redacted_message(message: SessionMessage) -> SessionMessage:
    """``message`` with secrets in any of its strings replaced; the same object when it has none."""
    inner = message.message
    if isinstance(inner, types.JSONRPCResponse):
        # The SDK dumps a result to JSON values before it sends it: it is read where it is, not
        # dumped again (a pack's result holds a few thousand values).
        try:
            return _redacted(message, {"jsonrpc": inner.jsonrpc, "id": inner.id, "result": inner.result})
        except TypeError:
            log.debug("a result holds more than JSON values; it is dumped before it is redacted")
    return _redacted(message, inner.model_dump(by_alias=True, exclude_unset=True, mode="json"))


def _redacted(message: SessionMessage, plain: dict[str, Any]) -> SessionMessage:
    redacted = redact_tree(plain)
    if redacted is plain:
        return message
    return SessionMessage(types.jsonrpc_message_adapter.validate_python(redacted), message.metadata)


class RedactingWriteStream:
    """A write stream that redacts each message, then hands it to the transport's stream."""

    def __init__(self, inner: _Sender) -> None:
        self._inner = inner

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(redacted_message(item))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> RedactingWriteStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
