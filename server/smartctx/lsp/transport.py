"""The byte streams under the protocol: stdin/stdout, or one TCP connection, read through
:class:`~smartctx.lsp.framing.FrameDecoder` into :class:`~smartctx.lsp.rpc.SmartctxProtocol`.

This replaces pygls's ``start_io``/``start_tcp`` loops (see framing.py for why). stdin is read on a
daemon thread so that ``exit`` ends the process even while a read is blocked, and the thread hands
over one chunk at a time, so a client that writes faster than the server parses fills the pipe,
not the server's memory.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from typing import BinaryIO

from pygls.exceptions import JsonRpcInvalidRequest
from pygls.io_ import StdoutWriter

from smartctx.lsp.framing import FrameDecoder, Message, Oversized, Skipped, Unparsable
from smartctx.lsp.rpc import SmartctxProtocol

log = logging.getLogger(__name__)

READ_CHUNK_BYTES = 64 * 1024
# Chunks read ahead of the parser: enough to keep the pipe flowing, little enough to bound memory.
READ_AHEAD_CHUNKS = 4


async def pump(read: Callable[[], Awaitable[bytes]], protocol: SmartctxProtocol, max_body_bytes: int) -> None:
    """Frame and dispatch messages until the stream ends or the client says exit."""
    decoder = FrameDecoder(max_body_bytes)
    while protocol.exit_code is None:
        data = await read()
        if not data:
            log.info("the client closed the connection")
            return
        for event in decoder.feed(data):
            dispatch(event, protocol, max_body_bytes)
            if protocol.exit_code is not None:
                return


def dispatch(
    event: Message | Unparsable | Oversized | Skipped, protocol: SmartctxProtocol, max_body_bytes: int
) -> None:
    if isinstance(event, Message):
        protocol.receive(event.value)
    elif isinstance(event, Unparsable):
        log.warning("a message could not be parsed: %s", event.reason)
        protocol.answer_parse_error(event.reason, event.request_id)
    elif isinstance(event, Oversized):
        message = (
            f"the message of {event.declared_bytes:,} bytes is larger than the limit of "
            f"{max_body_bytes:,} bytes and was skipped (smartctx serve --max-message-bytes sets it)"
        )
        log.warning("%s", message)
        if event.request_id is not None:
            protocol.answer_error(event.request_id, JsonRpcInvalidRequest.CODE, message)
    else:
        log.warning("skipped %d bytes of input: %s", event.byte_count, event.reason)


class StdinChunks:
    """stdin as a stream of chunks, read on a daemon thread; an empty chunk means end of input."""

    def __init__(self, stream: BinaryIO) -> None:
        self._fd = stream.fileno()
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=READ_AHEAD_CHUNKS)
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._read_all, name="smartctx-stdin", daemon=True).start()

    async def read(self) -> bytes:
        return await self._queue.get()

    def _read_all(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, READ_CHUNK_BYTES)
            except OSError as error:
                log.warning("stdin could not be read (%s); stopping", error)
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(self._queue.put(chunk), self._loop).result()
            except RuntimeError:
                # The event loop has closed: the server is exiting.
                return
            if not chunk:
                return


async def serve_stdio(
    protocol: SmartctxProtocol, stdin: BinaryIO, stdout: BinaryIO, max_body_bytes: int
) -> None:
    protocol.set_writer(StdoutWriter(stdout))
    await pump(StdinChunks(stdin).read, protocol, max_body_bytes)


async def serve_tcp(protocol: SmartctxProtocol, host: str, port: int, max_body_bytes: int) -> None:
    """Serve the first client that connects, until it exits or disconnects."""
    done = asyncio.Event()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if done.is_set():
            writer.close()
            return
        protocol.set_writer(writer)
        try:
            await pump(lambda: reader.read(READ_CHUNK_BYTES), protocol, max_body_bytes)
        finally:
            done.set()

    server = await asyncio.start_server(connection, host, port)
    # The line a debugging client (and the TCP test) waits for before it connects.
    log.info("Serving on %s:%d", host, port)
    async with server:
        await done.wait()
