"""Client settings: every valid value is taken, every invalid one is a warning and the default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smartctx.core.context import ContextOptions
from smartctx.lsp.settings import Settings, apply_changed_settings, parse_settings

WHERE = "initializationOptions"

# Each case: the wire settings, the Settings expected, and the words of the one warning expected
# (none when the list is empty).
CASES: dict[str, tuple[Any, Settings, list[str]]] = {
    "nothing sent": (None, Settings(), []),
    "empty object": ({}, Settings(), []),
    "every setting": (
        {
            "indexDir": "/tmp/smartctx-index",
            "bufferDebounceMs": 400,
            "clientLogLevel": "info",
            "hover": False,
            "contextDefaults": {"budgetTokens": 4000, "maxBodies": 3, "tokenScale": 1.25},
            "exclude": ["docs/", " *.gen.ts ", ""],
            "baseIndex": "postgresql://editor:s3cret@db.internal/smartctx",
            "baseIndexOnly": True,
        },
        Settings(
            index_dir=Path("/tmp/smartctx-index"),
            buffer_debounce_ms=400,
            client_log_level="info",
            hover=False,
            context_defaults=ContextOptions(budget_tokens=4000, max_bodies=3, token_scale=1.25),
            exclude=("docs/", "*.gen.ts"),
            base_index="postgresql://editor:s3cret@db.internal/smartctx",
            base_index_only=True,
        ),
        [],
    ),
    "nested under the VS Code section": (
        {"smartctx": {"bufferDebounceMs": 0}},
        Settings(buffer_debounce_ms=0),
        [],
    ),
    "null means the default": ({"indexDir": None, "hover": None}, Settings(), []),
    "not an object": ([1, 2], Settings(), [f"{WHERE} must be an object"]),
    "index folder not a string": ({"indexDir": 3}, Settings(), [f"{WHERE}.indexDir", "folder path"]),
    "index folder blank": ({"indexDir": "  "}, Settings(), [f"{WHERE}.indexDir"]),
    "debounce negative": ({"bufferDebounceMs": -1}, Settings(), [f"{WHERE}.bufferDebounceMs", "0 to 10000"]),
    "debounce a boolean": ({"bufferDebounceMs": True}, Settings(), [f"{WHERE}.bufferDebounceMs"]),
    "debounce a string": ({"bufferDebounceMs": "150"}, Settings(), [f"{WHERE}.bufferDebounceMs"]),
    "unknown log level": ({"clientLogLevel": "loud"}, Settings(), [f"{WHERE}.clientLogLevel", "warning"]),
    "hover not a boolean": ({"hover": "yes"}, Settings(), [f"{WHERE}.hover", "true or false"]),
    "exclude not a list": ({"exclude": "docs/"}, Settings(), [f"{WHERE}.exclude", ".gitignore patterns"]),
    "exclude with a number": ({"exclude": ["docs/", 3]}, Settings(), [f"{WHERE}.exclude"]),
    "base index not a PostgreSQL URL": (
        {"baseIndex": "mysql://db/team"},
        Settings(),
        [f"{WHERE}.baseIndex", "postgresql:// URL"],
    ),
    "base index empty, the default": ({"baseIndex": ""}, Settings(), []),
    "base only not a boolean": (
        {"baseIndexOnly": "yes"},
        Settings(),
        [f"{WHERE}.baseIndexOnly", "true or false"],
    ),
    "context defaults out of range": (
        {"contextDefaults": {"hopDepth": 9}},
        Settings(),
        [f"{WHERE}.contextDefaults", "hopDepth"],
    ),
    "context defaults with a token scale of 0, the default": (
        {"contextDefaults": {"tokenScale": 0}},
        Settings(),
        [],
    ),
    "context defaults with a token scale that is no number": (
        {"contextDefaults": {"tokenScale": "x1.5"}},
        Settings(),
        [f"{WHERE}.contextDefaults", "tokenScale"],
    ),
    "context defaults with an unknown option": (
        {"contextDefaults": {"colour": "blue"}},
        Settings(),
        [f"{WHERE}.contextDefaults", "colour"],
    ),
    "unknown setting next to a good one": (
        {"hover": False, "colour": "blue"},
        Settings(hover=False),
        [f"{WHERE}.colour is not a smartctx setting"],
    ),
    "one bad value keeps the good ones": (
        {"hover": False, "bufferDebounceMs": 10**9},
        Settings(hover=False),
        [f"{WHERE}.bufferDebounceMs"],
    ),
}


@pytest.mark.parametrize("raw, expected, warned", list(CASES.values()), ids=list(CASES))
def test_parse_settings(raw: Any, expected: Settings, warned: list[str]) -> None:
    settings, warnings = parse_settings(raw, WHERE)

    assert settings == expected
    assert len(warnings) == (1 if warned else 0)
    for words in warned:
        assert words in warnings[0]


def test_a_changed_configuration_replaces_settings_but_not_the_index_folder() -> None:
    current = Settings(index_dir=Path("/first"), hover=False, buffer_debounce_ms=50)

    changed, warnings = apply_changed_settings(current, {"smartctx": {"indexDir": "/second", "hover": True}})

    assert changed == Settings(index_dir=Path("/first"), hover=True)
    assert len(warnings) == 1
    assert "/second" in warnings[0] and "restart" in warnings[0]


def test_the_base_index_url_stays_out_of_the_settings_the_log_shows() -> None:
    settings, _ = parse_settings({"baseIndex": "postgresql://editor:s3cret@db.internal/smartctx"}, WHERE)

    assert settings.base_index is not None
    assert "s3cret" not in repr(settings)
