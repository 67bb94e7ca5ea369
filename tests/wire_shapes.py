"""Checks JSON values against the TypedDicts of ``smartctx.wire.shapes`` (and of
``smartctx.lsp.protocol``), field by field.

Those modules document the wire shapes and the client mirrors them (client-vscode/src/lsp_ext.ts);
these checks keep the server's real output equal to what they say.
"""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict


def assert_matches(value: Any, shape: Any, where: str = "$") -> None:
    """Raise AssertionError naming the first place where ``value`` departs from ``shape``."""
    origin = get_origin(shape)
    if is_typeddict(shape):
        assert isinstance(value, dict), f"{where}: expected an object for {shape.__name__}, got {value!r}"
        hints = get_type_hints(shape)
        missing = shape.__required_keys__ - value.keys()
        assert not missing, f"{where}: {shape.__name__} lacks {sorted(missing)}"
        unknown = value.keys() - hints.keys()
        assert not unknown, (
            f"{where}: {shape.__name__} has keys its TypedDict does not declare: {sorted(unknown)}"
        )
        for key, item in value.items():
            assert_matches(item, hints[key], f"{where}.{key}")
    elif origin in (Union, types.UnionType):
        errors = []
        for option in get_args(shape):
            try:
                assert_matches(value, option, where)
                return
            except AssertionError as error:
                errors.append(str(error))
        raise AssertionError(" / ".join(errors))
    elif origin is Literal:
        assert value in get_args(shape), f"{where}: {value!r} is not one of {get_args(shape)}"
    elif origin is list:
        assert isinstance(value, list), f"{where}: expected a list, got {value!r}"
        for position, item in enumerate(value):
            assert_matches(item, get_args(shape)[0], f"{where}[{position}]")
    elif origin is dict:
        assert isinstance(value, dict), f"{where}: expected an object, got {value!r}"
        for key, item in value.items():
            assert_matches(item, get_args(shape)[1], f"{where}.{key}")
    elif shape is Any:
        return
    elif shape is type(None):
        assert value is None, f"{where}: expected null, got {value!r}"
    elif shape is float:
        assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{where}: not a number"
    elif shape in (int, str, bool):
        assert isinstance(value, shape) and (shape is bool or not isinstance(value, bool)), (
            f"{where}: expected {shape.__name__}, got {value!r}"
        )
    else:
        raise AssertionError(f"{where}: wire_shapes cannot check the type {shape!r}")
