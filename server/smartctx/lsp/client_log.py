"""smartctx log records to the client as ``window/logMessage``, from whichever thread logs them.

Records come from the event loop, the index thread and query threads; only the event loop may write
to the client, so records from other threads are handed to it. This handler sends the client only
what its ``clientLogLevel`` setting asks for (warnings by default); stderr keeps the rest. A record
goes to one of the two, never both: VS Code shows the server's stderr and its log messages in the
same output channel, where every warning used to appear twice.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

# What a log record's message may be at most when sent to the client; the full text is on stderr.
MAX_CLIENT_MESSAGE_CHARS = 4000

SendLog = Callable[[int, str], None]

# Set on a record once it is on its way to the client, so that the stderr handler can skip it.
_SENT_TO_CLIENT = "smartctx_sent_to_client"


def not_sent_to_client(record: logging.LogRecord) -> bool:
    """A filter for the stderr handler: pass only records the client handler did not take."""
    return not getattr(record, _SENT_TO_CLIENT, False)


class ClientLogHandler(logging.Handler):
    """Forwards records to ``send(levelno, text)`` on the event loop ``loop``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, send: SendLog, level: int) -> None:
        super().__init__(level)
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._send = send
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)[:MAX_CLIENT_MESSAGE_CHARS]
            if threading.get_ident() == self._loop_thread:
                # Sent at once, so it reaches the client before the answer the handler is working on.
                self._send(record.levelno, text)
            else:
                self._loop.call_soon_threadsafe(self._send, record.levelno, text)
            setattr(record, _SENT_TO_CLIENT, True)
        except RuntimeError:
            # The event loop has closed: the server is exiting and stderr has the record.
            pass
        except Exception:
            self.handleError(record)
