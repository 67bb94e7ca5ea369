"""``smartctx serve`` over stdio, driven as an editor drives it: the benchmarks' language client.

It keeps every ``smartctx/indexStatus`` notification the server sends, so a benchmark can wait for
the state it needs (ready, nothing pending) instead of sleeping; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.repository import files_table
from smartctx.lsp.protocol import CONTEXT_FOR_TASK, INDEX_STATUS

try:  # the version's own converter, in a module of its own since lsp/server.py was split
    from smartctx.lsp.json_converter import json_converter
except ImportError:  # before (04803d0, the base issue 23's latency target is measured against)
    from smartctx.lsp.server import json_converter  # type: ignore[attr-defined,no-redef]

# Every wait is bounded so a broken server ends the run instead of hanging it.
WAIT_S = 600.0
# The end of the server's log kept in memory, to say what it was doing when a wait fails.
LOG_TAIL_BYTES = 8192


class Server:
    """One `smartctx serve` over stdio and the status notifications it sent.

    Its stderr (the log) is read as it comes, into ``log`` when given: a pipe nobody reads fills up
    (64 KB: about 900 request lines) and then blocks the server at its next log line. The end of
    it is kept in memory either way (:meth:`log_tail`).
    """

    def __init__(
        self, root: Path, index_dir: Path, log: Path | None = None, options: dict[str, Any] | None = None
    ) -> None:
        """``options``: initialization options besides ``indexDir`` (``baseIndex``, …)."""
        self.root = root
        self.index_dir = index_dir
        self.log = log
        self.options = options or {}
        self._log_end = bytearray()
        self.client = LanguageClient("live-perf", "1", converter_factory=json_converter)
        self.statuses: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reading_log: asyncio.Task[None] | None = None

        @self.client.feature(INDEX_STATUS)
        def on_status(params: Any) -> None:
            self.statuses.append(params)
            self._changed.set()

    async def start(self) -> float:
        """Start and initialize; seconds from `initialized` to the first "ready"."""
        await self.launch()
        return await self.initialize()

    async def launch(self) -> None:
        """Start the server process (not yet initialized) and begin reading its log."""
        await self.client.start_io(sys.executable, "-m", "smartctx", "serve")
        self._reading_log = asyncio.create_task(self._read_log())

    async def _read_log(self) -> None:
        process = self.client._server
        stream = process.stderr if process is not None else None
        if stream is None:
            return
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") if self.log is not None else contextlib.nullcontext() as sink:
            while chunk := await stream.read(65536):
                self._log_end += chunk
                del self._log_end[:-LOG_TAIL_BYTES]
                if sink is not None:
                    sink.write(chunk)
                    sink.flush()

    def log_tail(self, lines: int = 10) -> str:
        """The server's last log lines."""
        return "\n".join(self._log_end.decode(errors="replace").splitlines()[-lines:])

    async def initialize(self) -> float:
        """Initialize a launched server; seconds from `initialized` to the first "ready"."""
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=self.root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)],
                initialization_options={"indexDir": str(self.index_dir), **self.options},
            )
        )
        started = time.perf_counter()
        self.client.initialized(types.InitializedParams())
        await self.until(lambda status: status["state"] == "ready")
        return time.perf_counter() - started

    @property
    def pid(self) -> int:
        process = self.client._server
        assert process is not None
        return int(process.pid)

    async def until(self, holds: Any, after: int = 0, timeout_s: float = WAIT_S) -> dict[str, Any]:
        """The first status notification, from number ``after`` on, for which ``holds`` is true;
        TimeoutError, with the end of the server's log, when none comes within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        seen = after
        while True:
            for status in self.statuses[seen:]:
                if holds(status):
                    return status
            seen = len(self.statuses)
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise TimeoutError(
                    f"no such status from the server within {timeout_s:.0f} s; its log ends:\n"
                    + self.log_tail()
                ) from None

    async def until_indexed(self, index: Path, expected: set[tuple[str, str]], after: int = 0) -> None:
        """Until the server is ready with nothing pending and its committed index at ``index`` holds
        exactly the ``expected`` files and hashes (a ready status can come before the last batch)."""
        while True:
            status = await self.until(lambda s: s["state"] == "ready" and s["pendingFiles"] == 0, after)
            after = self.statuses.index(status) + 1
            if files_table(index) == expected:
                return

    async def context(self, task: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.client.protocol.send_request_async(
            CONTEXT_FOR_TASK, {"task": task}
        )
        return result

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()
        if self._reading_log is not None:
            await self._reading_log
