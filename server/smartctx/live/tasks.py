"""Background work that is never lost: every future is kept until it ends and its failure is logged."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any, Union

log = logging.getLogger(__name__)

AnyFuture = Union["concurrent.futures.Future[Any]", "asyncio.Future[Any]"]


class BackgroundTasks:
    """Holds running futures (thread-pool or asyncio) so none is garbage-collected or fails unseen."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[AnyFuture, str] = {}

    def keep(self, name: str, future: AnyFuture) -> None:
        with self._lock:
            self._running[future] = name
        future.add_done_callback(self._finished)

    def _finished(self, future: AnyFuture) -> None:
        with self._lock:
            name = self._running.pop(future, "background task")
        if future.cancelled():
            log.debug("%s was cancelled", name)
            return
        error = future.exception()
        if error is not None:
            log.error("%s failed: %s", name, error, exc_info=error)
