"""A client that frames JSON-RPC by hand over a real ``smartctx serve`` process, so a test (or the fuzz
benchmark) writes exactly the bytes it means: any header, any body, any envelope."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

# Long enough for a loaded CI machine, short enough that a hang fails quickly.
WAIT_S = 30.0
# The checkout's language server, run by the interpreter running the tests.
SERVE = (sys.executable, "-m", "smartctx", "serve")


def frame(body: bytes, header: bytes = b"Content-Length") -> bytes:
    return header + b": %d\r\n\r\n" % len(body) + body


def encode(message: Any) -> bytes:
    return json.dumps(message).encode()


class RawClient:
    """One server process: write bytes, read framed answers, remember what else the server sent."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        # Server notifications, and answers to other ids (errors to id null, say), read while
        # waiting for an answer; oldest first.
        self.notifications: list[dict[str, Any]] = []
        self.other_answers: list[dict[str, Any]] = []

    @classmethod
    async def start(
        cls,
        *arguments: str,
        stderr: IO[str] | None = None,
        command: Sequence[str] = SERVE,
        cwd: Path | None = None,
    ) -> RawClient:
        """A server process (``command`` with ``arguments``, started in ``cwd``); its stderr (the
        log) goes to ``stderr``, or nowhere."""
        process = await asyncio.create_subprocess_exec(
            *command,
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr if stderr is not None else asyncio.subprocess.DEVNULL,
            cwd=cwd,
        )
        return cls(process)

    async def write(self, data: bytes) -> None:
        self.stdin.write(data)
        await self.stdin.drain()

    async def send(self, message: Any) -> None:
        await self.write(frame(encode(message)))

    async def receive(self) -> dict[str, Any]:
        """The next message the server writes (the server frames correctly; this reader need not be
        lenient)."""
        length = 0
        while (line := await self.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if not length:
            raise ConnectionError("the server closed its output")
        message: dict[str, Any] = json.loads(await self.stdout.readexactly(length))
        return message

    async def answer_to(self, request_id: Any, wait_s: float = WAIT_S) -> dict[str, Any]:
        """Read until the response to ``request_id``; the server's own requests get null, and its
        notifications are kept."""
        while True:
            message = await asyncio.wait_for(self.receive(), wait_s)
            if "method" not in message and message.get("id") == request_id:
                return message
            await self._keep(message)

    async def notification(self, method: str, holds: Callable[[Any], bool]) -> dict[str, Any]:
        """The first notification of ``method`` whose params ``holds`` is true of, kept or still to come."""
        while True:
            for kept in self.notifications:
                if kept["method"] == method and holds(kept.get("params")):
                    return kept
            await self._keep(await asyncio.wait_for(self.receive(), WAIT_S))

    async def _keep(self, message: dict[str, Any]) -> None:
        """A message that answers nothing asked for: the server's own requests get null, the rest is kept."""
        if "method" in message and "id" in message:
            await self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)
        else:
            self.other_answers.append(message)

    async def request(self, request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.answer_to(request_id)

    async def initialize(
        self,
        workspace: Path,
        index_dir: Path,
        request_id: Any = "init",
        settings: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``settings``: further initializationOptions beside the index folder."""
        answer = await self.request(
            request_id,
            "initialize",
            {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "capabilities": {},
                "initializationOptions": {"indexDir": str(index_dir), **(settings or {})},
            },
        )
        await self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    async def shutdown_and_exit(self) -> int:
        await self.request("shutdown", "shutdown")
        return await self.exit()

    async def exit(self) -> int:
        await self.send({"jsonrpc": "2.0", "method": "exit"})
        return await asyncio.wait_for(self.process.wait(), WAIT_S)

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
