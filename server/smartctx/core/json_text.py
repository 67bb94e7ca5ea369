"""Lone surrogates in decoded JSON: found and named, or replaced, for both servers' readers.

JSON's ``\\ud800`` escape is valid syntax, but an unpaired surrogate is not a character: such a
string cannot be written as UTF-8, and every file, path or search it reached would fail. Decoding
pairs a high and a low surrogate escape into one character, so any surrogate left in a decoded
string is a lone one. Values are walked without recursion, since a message may nest as deep as the
parser allows.
"""

from __future__ import annotations

import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# What a decoder's errors="replace" puts in place of what is not text.
REPLACEMENT_CHARACTER = "\ufffd"


def lone_surrogate_at(value: Any, path: str = "") -> str | None:
    """Where in ``value`` (named ``path``; the root of a message when empty) a string or a key holds
    a lone surrogate, as a dotted path like ``params.focus.uri``; None when none does."""
    pending: list[tuple[str, Any]] = [(path, value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return where or "the message"
        elif isinstance(item, dict):
            for key in item:
                if _LONE_SURROGATE.search(key):
                    return f"a key of {where or 'the message'}"
            pending.extend(
                (f"{where}.{key}" if where else str(key), member) for key, member in reversed(item.items())
            )
        elif isinstance(item, list):
            pending.extend((f"{where}[{index}]", member) for index, member in reversed(list(enumerate(item))))
    return None


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` with U+FFFD for every lone surrogate in its strings and keys (containers are
    changed in place)."""
    if not isinstance(value, dict | list):
        return _replaced(value, [])
    pending: list[dict[str, Any] | list[Any]] = [value]
    while pending:
        container = pending.pop()
        if isinstance(container, dict):
            for key in list(container):
                member = container.pop(key)
                container[_LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, key)] = _replaced(member, pending)
        else:
            container[:] = [_replaced(member, pending) for member in container]
    return value


def _replaced(member: Any, pending: list[dict[str, Any] | list[Any]]) -> Any:
    if isinstance(member, str):
        return _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, member)
    if isinstance(member, dict | list):
        pending.append(member)
    return member
