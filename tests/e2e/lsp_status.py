"""Waiting on the server's ``smartctx/indexStatus`` notifications instead of sleeping."""

from __future__ import annotations

import asyncio
from typing import Any

# Long enough for a loaded CI machine, short enough that a hang fails quickly.
WAIT_S = 30.0
STATE_READY = "ready"


class IndexStatusLog:
    """Every ``smartctx/indexStatus`` notification received, and a way to wait for the n-th "ready"."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self._waiters: list[tuple[str, int, asyncio.Future[dict[str, Any]]]] = []
        self._later: list[tuple[int, asyncio.Future[dict[str, Any]]]] = []

    def count(self, state: str) -> int:
        return sum(1 for status in self.received if status["state"] == state)

    def record(self, params: Any) -> None:
        self.received.append(params)
        for state, count, future in list(self._waiters):
            if self.count(state) >= count and not future.done():
                future.set_result(params)
                self._waiters.remove((state, count, future))
        for seen, future in list(self._later):
            if len(self.received) > seen and not future.done():
                future.set_result(params)
                self._later.remove((seen, future))

    async def ready(self, count: int = 1) -> dict[str, Any]:
        """The status once ``count`` "ready" notifications have arrived in total."""
        return await self.state(STATE_READY, count)

    async def after(self, seen: int) -> None:
        """Return once more than ``seen`` notifications have arrived in total."""
        if len(self.received) > seen:
            return
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._later.append((seen, future))
        await asyncio.wait_for(future, WAIT_S)

    async def state(self, state: str, count: int = 1) -> dict[str, Any]:
        """The status once ``count`` notifications with this state have arrived in total."""
        if self.count(state) >= count:
            return next(s for s in reversed(self.received) if s["state"] == state)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((state, count, future))
        return await asyncio.wait_for(future, WAIT_S)
