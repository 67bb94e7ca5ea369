"""Starting the language server and running it until the client says exit: the server built with
its handler table, logging set up, and the transport's loop (transport.py) run over stdio or TCP.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from smartctx.lsp.client_log import not_sent_to_client
from smartctx.lsp.framing import DEFAULT_MAX_BODY_BYTES
from smartctx.lsp.handlers import register_handlers
from smartctx.lsp.rpc import SmartctxProtocol
from smartctx.lsp.server import SMARTCTX_LOGGER, STDERR_LOG_LEVEL, SmartctxServer
from smartctx.lsp.transport import serve_stdio, serve_tcp

log = logging.getLogger(__name__)


def build_server() -> SmartctxServer:
    server = SmartctxServer()
    register_handlers(server)
    return server


def serve(tcp: tuple[str, int] | None = None, max_message_bytes: int = DEFAULT_MAX_BODY_BYTES) -> int:
    """Run the language server over stdio, or for one client on ``tcp`` (host, port), until the
    client says exit or goes away. The exit code is LSP's: 1 when exit came without shutdown."""
    logging.getLogger(SMARTCTX_LOGGER).setLevel(STDERR_LOG_LEVEL)
    for handler in logging.getLogger().handlers:
        handler.addFilter(not_sent_to_client)
    # pygls logs every outgoing message body, context packs included, at INFO.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = build_server()
    protocol = server.protocol
    assert isinstance(protocol, SmartctxProtocol)
    try:
        if tcp is None:
            asyncio.run(serve_stdio(protocol, sys.stdin.buffer, sys.stdout.buffer, max_message_bytes))
        else:
            asyncio.run(serve_tcp(protocol, *tcp, max_message_bytes))
    except BrokenPipeError:
        log.warning("the client closed its end of the connection; stopping")
    finally:
        server.close_index()
        server.stop_forwarding_logs()
    return protocol.exit_code or 0
