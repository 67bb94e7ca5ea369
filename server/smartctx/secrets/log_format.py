"""Log records leave the process too: formatted, then redacted whole."""

from __future__ import annotations

import logging

from smartctx.secrets.redaction import redact


class RedactingFormatter(logging.Formatter):
    """Formats log records, then redacts the whole line, traceback included: stderr reaches editors'
    output panels and bug reports, so it leaves the process as surely as a reply does."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))[0]
