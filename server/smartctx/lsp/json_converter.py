"""The JSON converter of the language server: lsprotocol's, strict about JSON types.

pygls builds every message and params object with a cattrs converter; this module makes that
converter answer a value of the wrong JSON type with InvalidParams instead of coercing it, and
leaves the params of the ``smartctx/*`` methods as the plain JSON that convert.py validates.
"""

from __future__ import annotations

from typing import Any

import cattrs
from lsprotocol import converters
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)


def json_converter() -> cattrs.Converter:
    """lsprotocol's converter, strict about JSON types, with the params of methods lsprotocol does not
    know left as plain JSON.

    cattrs would turn ``"line": "4"`` into 4, ``1.5`` into 1 and ``5`` into the URI ``"5"``; a client
    sending those has a bug it should hear about, so a value of the wrong JSON type is InvalidParams.
    pygls's ``default_converter`` turns unknown methods' params into namedtuples, renaming keys that
    are not identifiers; the ``smartctx/*`` methods want the JSON the client sent, which
    ``convert.py`` validates.
    """
    converter = converters.get_converter()
    # These hooks also receive lsprotocol's enums (subclasses of int and str), hence ``kind(value)``.
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(str, _strict_str)
    converter.register_structure_hook(bool, _strict_bool)
    # JSON-RPC lets a request or notification leave out params (vscode-jsonrpc does, for one without
    # any); the message types require the field. Fields other than the envelope's are ignored.
    converter.register_structure_hook(
        JsonRPCRequestMessage,
        lambda data, cls: cls(
            id=data["id"], method=data["method"], jsonrpc=data["jsonrpc"], params=data.get("params")
        ),
    )
    converter.register_structure_hook(
        JsonRPCNotification,
        lambda data, cls: cls(method=data["method"], jsonrpc=data["jsonrpc"], params=data.get("params")),
    )
    converter.register_structure_hook(
        JsonRPCResponseMessage,
        lambda data, cls: cls(id=data["id"], jsonrpc=data["jsonrpc"], result=data.get("result")),
    )
    return converter


def _strict_int(value: Any, kind: type[int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return kind(value)


def _strict_float(value: Any, kind: type[float]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return kind(value)


def _strict_str(value: Any, kind: type[str]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return kind(value)


def _strict_bool(value: Any, _: type[bool]) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {value!r}")
    return value
