"""The option table of wire/options.py: every option a request has, under one name on every wire."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from smartctx.core.context import ContextOptions, InvalidRequestError
from smartctx.mcp.tools import CONTEXT_ARGUMENTS, CONTEXT_INPUT_SCHEMA, context_requests
from smartctx.wire.options import CONTEXT_OPTIONS, OPTIONS_BY_NAME

JSON_SCHEMA_TYPES = {int: "integer", float: "number", bool: "boolean", str: "string"}
ROOTS = (Path("/w/app"),)


def test_every_option_of_a_request_has_one_wire_name() -> None:
    names = [option.name for option in CONTEXT_OPTIONS]
    assert len(set(names)) == len(names)
    assert [option.field for option in CONTEXT_OPTIONS] == [field.name for field in fields(ContextOptions)]


def test_the_mcp_tool_offers_its_options_under_their_wire_names_and_json_types() -> None:
    properties = CONTEXT_INPUT_SCHEMA["properties"]
    assert set(properties) == set(CONTEXT_ARGUMENTS)
    offered = [name for name in properties if name in OPTIONS_BY_NAME]
    assert offered, "the tool offers no option"
    for name in offered:
        assert properties[name]["type"] == JSON_SCHEMA_TYPES[OPTIONS_BY_NAME[name].value_type], name


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"budgetTokens": True}, "budgetTokens must be a whole number, got True"),
        ({"budgetTokens": 1.5}, "budgetTokens must be a whole number, got 1.5"),
        ({"tokenScale": "2"}, "tokenScale must be a number, got '2'"),
        ({"tokenScale": False}, "tokenScale must be a number, got False"),
        ({"includePRs": 1}, "includePRs must be true or false, got 1"),
        ({"prCutoff": 20240501}, "prCutoff must be a string, got 20240501"),
        ({"prCutoff": 1, "maxBodies": "3"}, "maxBodies must be a whole number, got '3'"),
    ],
)
def test_an_mcp_option_of_the_wrong_json_type_is_refused_naming_it(
    arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        context_requests({"task": "charge the card", **arguments}, ROOTS)
    assert str(refused.value) == message


def test_mcp_options_reach_the_request_under_their_fields() -> None:
    [request] = context_requests(
        {"task": "charge the card", "budgetTokens": 3000, "tokenScale": 1.25, "includeImpact": True}, ROOTS
    )
    assert request.options == ContextOptions(budget_tokens=3000, token_scale=1.25, include_impact=True)
