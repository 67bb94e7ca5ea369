"""A stdio transport for the MCP SDK's own ``Client`` that writes the way JavaScript clients do.

The SDK's client encodes each message with pydantic, which cannot encode a lone UTF-16 surrogate at
all; JavaScript's ``JSON.stringify`` writes one as the escape ``"\\ud800"``, and a string an agent
cut inside a surrogate pair holds one. This transport writes every message with ``json.dumps``
(ASCII, each other character escaped), so such a string reaches the server as it would from
JavaScript. ``send_line`` puts any line on the wire besides, for frames no client library writes;
the answers to those (their ids are strings of the caller's choosing, never the client's, or null)
are kept in ``answers``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import mcp_types as types
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

# A line from the server may be this long (a pack that echoes a huge task is long).
MAX_LINE_BYTES = 512 * 1024 * 1024
# How long the server gets to exit once its stdin is closed.
EXIT_WAIT_S = 10.0


class Wire:
    """The process and its streams; ``streams`` is what ``mcp.Client`` takes as its transport."""

    def __init__(self, process: Process) -> None:
        self.process = process
        # Answers whose id is a string or null, in the order they came, and how many were taken.
        self.answers: list[dict[str, Any]] = []
        self._taken: set[int] = set()
        self._answered = anyio.Event()
        self._to_client, self._from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        self._to_server, self._from_client = anyio.create_memory_object_stream[SessionMessage](0)
        self._write_lock = anyio.Lock()

    @asynccontextmanager
    async def streams(
        self,
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
    ]:
        yield self._from_server, self._to_server

    async def send_line(self, line: str) -> None:
        async with self._write_lock:
            assert self.process.stdin is not None
            await self.process.stdin.send(line.encode("utf-8", "surrogatepass") + b"\n")

    async def answer(self, request_id: str | None, wait_s: float) -> dict[str, Any] | None:
        """The first answer not taken yet whose id is ``request_id`` (a line sent with
        ``send_line``), or None if none came within ``wait_s``."""
        with anyio.move_on_after(wait_s):
            while True:
                for index, answer in enumerate(self.answers):
                    if index not in self._taken and answer.get("id") == request_id:
                        self._taken.add(index)
                        return answer
                await self._answered.wait()
        return None

    async def _read(self) -> None:
        assert self.process.stdout is not None
        lines = BufferedByteReceiveStream(self.process.stdout)
        async with self._to_client:
            while True:
                try:
                    line = await lines.receive_until(b"\n", MAX_LINE_BYTES)
                except (anyio.EndOfStream, anyio.IncompleteRead):
                    return
                value = json.loads(line)
                if isinstance(value, dict) and "method" not in value and not isinstance(value.get("id"), int):
                    self.answers.append(value)
                    self._answered.set()
                    self._answered = anyio.Event()
                    continue
                try:
                    await self._to_client.send(
                        SessionMessage(types.jsonrpc_message_adapter.validate_python(value))
                    )
                except anyio.BrokenResourceError:
                    return

    async def _write(self) -> None:
        async with self._from_client:
            async for item in self._from_client:
                plain = item.message.model_dump(by_alias=True, exclude_unset=True, mode="json")
                await self.send_line(json.dumps(plain, ensure_ascii=True, allow_nan=True))


@asynccontextmanager
async def js_stdio(command: Sequence[str], cwd: Path | None, stderr: IO[str]) -> AsyncIterator[Wire]:
    """Start ``command`` and connect to its stdin and stdout; on exit close stdin and wait for it to
    end (killing it after ``EXIT_WAIT_S``)."""
    process = await anyio.open_process(list(command), cwd=cwd, stderr=stderr)
    wire = Wire(process)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(wire._read)
            group.start_soon(wire._write)
            try:
                yield wire
            finally:
                group.cancel_scope.cancel()
    finally:
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.move_on_after(EXIT_WAIT_S):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
