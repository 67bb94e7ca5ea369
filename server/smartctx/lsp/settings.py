"""Client settings: typed, with defaults, and tolerant of bad values.

The client sends them as ``initializationOptions`` at start-up and again with
``workspace/didChangeConfiguration`` (protocol.py, :class:`~smartctx.lsp.protocol.WireSettings`).
An invalid value never fails the server: it is reported as a warning that names the setting, and
the default is used instead.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smartctx.core.context import ContextOptions, InvalidRequestError
from smartctx.lsp.protocol import CONFIGURATION_SECTION
from smartctx.wire.options import OPTION_FIELDS

MAX_BUFFER_DEBOUNCE_MS = 10_000
MAX_EXCLUDE_PATTERNS = 1_000

# What ``clientLogLevel`` accepts: the lowest level of smartctx log records sent to the client.
CLIENT_LOG_LEVELS = {
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


@dataclass(frozen=True)
class Settings:
    """Every setting with its default; the camelCase wire names are in protocol.py (``WireSettings``)."""

    # The parent of every workspace folder's index, usually the client's workspace storage folder;
    # None: the user cache.
    index_dir: Path | None = None
    # How long typing must pause before an unsaved buffer is indexed.
    buffer_debounce_ms: int = 150
    # smartctx log records at this level and above are also sent to the client (window/logMessage).
    client_log_level: str = "warning"
    # Whether the server answers textDocument/hover.
    hover: bool = True
    # Options of a contextForTask request that does not set them.
    context_defaults: ContextOptions = field(default_factory=ContextOptions)
    # Gitignore-syntax patterns of files never to index, on top of .gitignore and .smartctxignore.
    exclude: tuple[str, ...] = ()
    # The team's published base index (postgresql://…): its nearest published ancestor of a
    # folder's HEAD, with the folder's local files laid over it, answers for the folder while the
    # folder's own first index runs. Read at start-up only. Kept out of the settings' repr, which the
    # log shows: the URL may hold a password.
    base_index: str | None = field(default=None, repr=False)
    # The base answers for good: only the files that differ from it are indexed (live/workspace.py).
    base_index_only: bool = False

    @property
    def buffer_debounce_s(self) -> float:
        return self.buffer_debounce_ms / 1000

    @property
    def client_log_level_number(self) -> int:
        return CLIENT_LOG_LEVELS[self.client_log_level]


def _index_dir(value: Any) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a folder path, got {value!r}")
    return Path(value).expanduser()


def _buffer_debounce_ms(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BUFFER_DEBOUNCE_MS:
        raise ValueError(
            f"must be a whole number of milliseconds from 0 to {MAX_BUFFER_DEBOUNCE_MS}, got {value!r}"
        )
    return value


def _client_log_level(value: Any) -> str:
    if value not in CLIENT_LOG_LEVELS:
        raise ValueError(f"must be one of {', '.join(CLIENT_LOG_LEVELS)}, got {value!r}")
    return str(value)


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r}")
    return value


def _context_defaults(value: Any) -> ContextOptions:
    if not isinstance(value, dict):
        raise ValueError(f"must be an object of contextForTask options, got {value!r}")
    unknown = sorted(name for name in value if name not in OPTION_FIELDS)
    if unknown:
        raise ValueError(f"has unknown option {unknown[0]}; known options: {', '.join(OPTION_FIELDS)}")
    try:
        return ContextOptions.from_values({OPTION_FIELDS[name]: option for name, option in value.items()})
    except (InvalidRequestError, TypeError) as error:
        raise ValueError(f"has an invalid value: {error}") from None


def _exclude(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(pattern, str) for pattern in value):
        raise ValueError(
            f'must be a list of .gitignore patterns such as ["docs/", "*.gen.ts"], got {value!r}'
        )
    if len(value) > MAX_EXCLUDE_PATTERNS:
        raise ValueError(f"may hold at most {MAX_EXCLUDE_PATTERNS} patterns, got {len(value)}")
    return tuple(pattern.strip() for pattern in value if pattern.strip())


def _base_index(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.startswith(("postgresql://", "postgres://")):
        raise ValueError(f"must be a postgresql:// URL of the team's published index, got {value!r}")
    return value


# Wire name -> (Settings field, parser that raises ValueError with what is allowed).
_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "indexDir": ("index_dir", _index_dir),
    "bufferDebounceMs": ("buffer_debounce_ms", _buffer_debounce_ms),
    "clientLogLevel": ("client_log_level", _client_log_level),
    "hover": ("hover", _boolean),
    "contextDefaults": ("context_defaults", _context_defaults),
    "exclude": ("exclude", _exclude),
    "baseIndex": ("base_index", _base_index),
    "baseIndexOnly": ("base_index_only", _boolean),
}


def parse_settings(raw: Any, where: str) -> tuple[Settings, list[str]]:
    """Settings from the client's JSON; each invalid or unknown entry is a warning, never an error.

    ``where`` names the source in the warnings (``initializationOptions``, …). Settings nested under
    the ``smartctx`` section (as VS Code sends a configuration section) are read from there.
    """
    if raw is None:
        return Settings(), []
    if isinstance(raw, dict) and isinstance(raw.get(CONFIGURATION_SECTION), dict):
        raw = raw[CONFIGURATION_SECTION]
        where = f"{where}.{CONFIGURATION_SECTION}"
    if not isinstance(raw, dict):
        return Settings(), [
            f"{where} must be an object of smartctx settings, got {raw!r}; using the defaults"
        ]
    values: dict[str, Any] = {}
    warnings: list[str] = []
    for name, value in raw.items():
        known = _FIELDS.get(name)
        if known is None:
            warnings.append(
                f"{where}.{name} is not a smartctx setting (known: {', '.join(_FIELDS)}); ignored"
            )
            continue
        field_name, parse = known
        if value is None:
            continue
        try:
            values[field_name] = parse(value)
        except ValueError as error:
            warnings.append(f"{where}.{name} {error}; using the default")
    return Settings(**values), warnings


def apply_changed_settings(current: Settings, raw: Any) -> tuple[Settings, list[str]]:
    """The settings after ``workspace/didChangeConfiguration``: what it sends replaces what was set.

    The index folder is fixed once the index is open, so a new ``indexDir`` is a warning until the
    server restarts.
    """
    changed, warnings = parse_settings(raw, "workspace/didChangeConfiguration settings")
    if changed.index_dir is not None and changed.index_dir != current.index_dir:
        warnings.append(
            f"indexDir changed to {changed.index_dir}: the index stays in "
            f"{current.index_dir or 'the user cache folder'} until the server restarts"
        )
    return dataclasses.replace(changed, index_dir=current.index_dir), warnings
