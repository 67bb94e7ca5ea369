"""The language server's one exit: every message it writes passes
:func:`~smartctx.core.redact.redact_tree`.

Responses (packs, expanded nodes, hovers), errors, log and show-message notifications and progress
all leave through pygls's ``_send_data``; redacting there covers what any handler sends, including
texts pygls writes itself (an exception's message in an error reply).
"""

from __future__ import annotations

import json
from typing import Any

from pygls.protocol import LanguageServerProtocol

from smartctx.core.redact import redact_tree


class RedactingProtocol(LanguageServerProtocol):
    def _send_data(self, data: Any) -> None:
        if data:
            # pygls serialises with this default hook; the plain JSON it gives is what is redacted.
            data = redact_tree(json.loads(json.dumps(data, default=self._serialize_message)))
        super()._send_data(data)
