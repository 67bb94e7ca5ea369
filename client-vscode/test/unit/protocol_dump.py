"""Prints the Python side of the custom protocol as JSON for the client's drift test (drift.test.ts).

The protocol is defined in three modules: ``smartctx.wire.shapes`` (what every front end sends),
``smartctx.wire.options`` (the option names) and ``smartctx.lsp.protocol`` (the language server's
methods, codes, params and settings). Each public TypedDict of theirs becomes
``{field: {"type": <TypeScript type>, "optional": bool}}``, each public constant (a string or a
number) its value, and ``OPTION_FIELDS`` its camelCase names in order. A name one module imports
from another is the same value under the same name, so it is dumped once.
"""

from __future__ import annotations

import json
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from smartctx.lsp import protocol
from smartctx.wire import options, shapes

PUBLIC = {
    name: value
    for module in (shapes, options, protocol)
    for name, value in vars(module).items()
    if not name.startswith("_")
}

ALIASES = {name: value for name, value in PUBLIC.items() if get_origin(value) is Literal}


def typescript(shape: Any) -> str:
    origin = get_origin(shape)
    if is_typeddict(shape):
        return str(shape.__name__)
    if origin is Literal:
        alias = next((name for name, value in ALIASES.items() if value == shape), None)
        return alias or " | ".join(json.dumps(option) for option in get_args(shape))
    if origin in (Union, types.UnionType):
        return " | ".join(typescript(option) for option in get_args(shape))
    if origin is list:
        return f"{typescript(get_args(shape)[0])}[]"
    if origin is dict:
        return f"Record<string, {typescript(get_args(shape)[1])}>"
    simple = {
        str: "string",
        int: "number",
        float: "number",
        bool: "boolean",
        type(None): "null",
        Any: "unknown",
    }
    return simple[shape]


def dump() -> dict[str, Any]:
    interfaces = {}
    constants = {}
    for name, value in PUBLIC.items():
        if is_typeddict(value):
            hints = get_type_hints(value)
            interfaces[name] = {
                key: {"type": typescript(hint), "optional": key in value.__optional_keys__}
                for key, hint in hints.items()
            }
        elif name.isupper() and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            constants[name] = value
    return {
        "interfaces": interfaces,
        "aliases": {
            name: " | ".join(json.dumps(option) for option in get_args(value))
            for name, value in ALIASES.items()
        },
        "constants": constants,
        "optionNames": list(options.OPTION_FIELDS),
    }


if __name__ == "__main__":
    print(json.dumps(dump(), indent=1))
