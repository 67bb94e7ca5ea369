"""Waiting on the server's ``smartctx/indexStatus`` notifications instead of sleeping."""

from __future__ import annotations

import asyncio
from typing import Any

# Long enough for a loaded CI machine, short enough that a hang fails quickly.
WAIT_S = 30.0


class IndexStatusLog:
    """Every ``smartctx/indexStatus`` notification received, and a way to wait for the n-th "ready"."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self._waiters: list[tuple[int, asyncio.Future[dict[str, Any]]]] = []

    @property
    def ready_count(self) -> int:
        return sum(1 for status in self.received if status["state"] == "ready")

    def record(self, params: Any) -> None:
        self.received.append(params)
        for count, future in list(self._waiters):
            if self.ready_count >= count and not future.done():
                future.set_result(params)
                self._waiters.remove((count, future))

    async def ready(self, count: int = 1) -> dict[str, Any]:
        """The status once ``count`` ready notifications have arrived in total."""
        if self.ready_count >= count:
            return next(s for s in reversed(self.received) if s["state"] == "ready")
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((count, future))
        return await asyncio.wait_for(future, WAIT_S)
