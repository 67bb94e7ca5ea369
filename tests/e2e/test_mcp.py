"""``smartctx mcp`` as an agent's client runs it: a real process over stdio, driven by the MCP SDK's
own client, on a fresh copy of a fixture workspace.

Nothing sleeps. A check that depends on the index asks again after each log message the server sends
about its index (every update ends with one), within the bound of ``WAIT_S``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPDeprecationWarning, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from test_cancel import HEAVY_TASK, MODULES, module

from mcp_wire import Wire, js_stdio
from workspaces import write_tree

pytestmark = [
    pytest.mark.anyio,
    # The client speaks the 2025 handshake on purpose (it is what clients use today), so the SDK warns
    # that logging and roots leave the protocol in 2026-07-28.
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

SHOP = Path(__file__).parent.parent / "fixtures" / "shop"
# Long enough for a loaded CI machine, short enough that a hang fails quickly.
WAIT_S = 30.0
Result = types.CallToolResult


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root)
    return root


class ServerLog:
    """The log messages the server sent, and a way to wait for the next one."""

    def __init__(self) -> None:
        self.received: list[types.LoggingMessageNotificationParams] = []
        self._arrived = anyio.Event()

    async def record(self, params: types.LoggingMessageNotificationParams) -> None:
        self.received.append(params)
        self._arrived.set()
        self._arrived = anyio.Event()

    async def after(self, seen: int) -> None:
        """Return once more than ``seen`` messages have arrived in total."""
        while len(self.received) <= seen:
            await self._arrived.wait()


class Session:
    def __init__(self, client: Client, log: ServerLog, stderr: TextIO) -> None:
        self.client, self.log, self._stderr = client, log, stderr

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return Path(self._stderr.name).read_text(encoding="utf-8")

    async def call(self, tool: str, arguments: dict[str, Any]) -> Result:
        return await self.client.call_tool(tool, arguments)

    async def eventually(
        self, tool: str, arguments: dict[str, Any], holds: Callable[[Result], bool]
    ) -> Result:
        """The first answer for which ``holds`` is true, asking again after each log message."""
        with anyio.fail_after(WAIT_S):
            while True:
                # Counted before asking: an update committed after this answer logs after it.
                seen = len(self.log.received)
                result = await self.call(tool, arguments)
                if holds(result):
                    return result
                await self.log.after(seen)

    async def ready(self) -> Result:
        return await self.eventually("index_status", {}, lambda r: _structured(r)["state"] == "ready")


@asynccontextmanager
async def mcp_server(
    *args: str,
    cwd: Path | None = None,
    roots: Callable[[], list[types.Root]] | None = None,
    command: Sequence[str] = (sys.executable, "-m", "smartctx", "mcp"),
    env: dict[str, str] | None = None,
) -> AsyncIterator[Session]:
    """A ``smartctx mcp`` process (``command``, by default the checkout's) with ``args``, connected
    with the 2025 handshake (what clients speak today: it carries roots and log messages); its stderr
    is kept for the test to read. ``env`` adds to the few variables the SDK passes on by default."""
    log = ServerLog()
    executable, *command_args = command
    parameters = StdioServerParameters(command=executable, args=[*command_args, *args], cwd=cwd, env=env)

    async def list_roots(context: Any) -> types.ListRootsResult:
        assert roots is not None
        return types.ListRootsResult(roots=roots())

    # The server's stderr goes to a file (a child process needs a real one), shown when a test fails.
    with tempfile.NamedTemporaryFile("w+", encoding="utf-8", suffix=".stderr") as stderr:
        try:
            async with Client(
                stdio_client(parameters, errlog=stderr),
                mode="legacy",
                logging_callback=log.record,
                list_roots_callback=list_roots if roots is not None else None,
            ) as client:
                # Updates after the first index are logged at debug level; the tests wait on them.
                await debug_logging(client)
                yield Session(client, log, stderr)
        finally:
            print(Path(stderr.name).read_text(encoding="utf-8"), file=sys.stderr)


@asynccontextmanager
async def js_mcp_server(*args: str) -> AsyncIterator[tuple[Session, Wire]]:
    """A ``smartctx mcp`` process driven by the SDK's client over a transport that writes as
    JavaScript's ``JSON.stringify`` does (tests/mcp_wire.py): a lone surrogate is sent as its escape,
    and ``Wire.send_line`` puts any line on the wire besides."""
    log = ServerLog()
    command = [sys.executable, "-m", "smartctx", "mcp", *args]
    with tempfile.NamedTemporaryFile("w+", encoding="utf-8", suffix=".stderr") as stderr:
        try:
            async with (
                js_stdio(command, None, stderr) as wire,
                Client(wire.streams(), mode="legacy", logging_callback=log.record) as client,
            ):
                await debug_logging(client)
                yield Session(client, log, stderr), wire
        finally:
            print(Path(stderr.name).read_text(encoding="utf-8"), file=sys.stderr)


async def debug_logging(client: Client) -> None:
    """Ask for the server's log at debug level. The SDK deprecates the logging capability for the
    2026-07-28 protocol; this client speaks the 2025 handshake on purpose (what clients use today),
    so the warning is silenced here, where every test that starts a server asks, in this module or
    another (test_secrets.py)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.set_logging_level("debug")


def _structured(result: Result) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _texts(result: Result) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def _links(result: Result) -> list[types.ResourceLink]:
    return [block for block in result.content if isinstance(block, types.ResourceLink)]


def _ids(result: Result) -> list[str]:
    pack = _structured(result)
    return [item["id"] for item in pack["bodies"] + pack["summaries"]]


def _has(item_id: str) -> Callable[[Result], bool]:
    return lambda result: not result.is_error and item_id in _ids(result)


async def test_lists_three_tools_with_schemas_and_descriptions(shop: Path, tmp_path: Path) -> None:
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        listed = await server.client.list_tools()

    tools = {tool.name: tool for tool in listed.tools}
    assert sorted(tools) == ["expand_symbol", "get_context_for_task", "index_status"]
    context = tools["get_context_for_task"].input_schema
    assert context["required"] == ["task"]
    assert set(context["properties"]) == {
        "task",
        "budgetTokens",
        "tokenScale",
        "maxBodies",
        "maxSummaries",
        "hopDepth",
        "includePRs",
        "prCutoff",
        "includeImpact",
        "focusFile",
        "focusFiles",
    }
    # The tokenizer the budget is counted in, and how to state it for a model that counts otherwise.
    assert "o200k_base" in context["properties"]["budgetTokens"]["description"]
    assert "headroom" in context["properties"]["tokenScale"]["description"]
    assert tools["expand_symbol"].input_schema["required"] == ["id"]
    for tool in tools.values():
        assert tool.description and len(tool.description) > 100
        assert tool.output_schema is not None and tool.annotations is not None
        assert tool.annotations.read_only_hint


async def test_each_tool_answers_with_text_structured_content_and_citation_links(
    shop: Path, tmp_path: Path
) -> None:
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        status = _structured(await server.ready())
        result = await server.call("get_context_for_task", {"task": "charge_card raises PaymentDeclined"})
        pack = _structured(result)
        first = pack["bodies"][0]
        expanded = await server.call("expand_symbol", {"id": first["id"]})
        focused = await server.call(
            "get_context_for_task", {"task": "total", "focusFile": "shop/orders.py", "maxBodies": 1}
        )

    assert (status["state"], status["filesTotal"], status["pendingFiles"]) == ("ready", 7, 0)
    assert status["folders"][0]["path"] == str(shop)
    assert _texts(result) == [pack["text"]]
    assert first["id"] == "shop/payments.py::charge_card"
    assert [link.name for link in _links(result)] == [
        item["citation"] for item in pack["bodies"] + pack["summaries"]
    ]
    link = _links(result)[0]
    assert link.uri == f"{(shop / first['filePath']).as_uri()}#L{first['startLine']}-L{first['endLine']}"
    assert f"lines {first['startLine']}-{first['endLine']}" in (link.description or "")

    node = _structured(expanded)
    lines = (shop / "shop" / "payments.py").read_text(encoding="utf-8").splitlines(keepends=True)
    assert node["source"] == "".join(lines[node["startLine"] - 1 : node["endLine"]])
    assert node["source"] in _texts(expanded)[0]
    assert _links(expanded)[0].uri.endswith(f"shop/payments.py#L{node['startLine']}-L{node['endLine']}")

    top = _structured(focused)["bodies"][0]
    assert top["filePath"] == "shop/orders.py" and "focusFile" in top["scoreParts"]


async def test_a_token_scale_packs_the_budget_in_o200k_base_tokens(shop: Path, tmp_path: Path) -> None:
    """An agent whose model counts 1.5 tokens per o200k_base token asks for 600 of its tokens: the
    pack holds at most 400 o200k_base tokens and says the scale it was made at."""
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        await server.ready()
        task = {"task": "charge_card raises PaymentDeclined", "budgetTokens": 600}
        scaled = _structured(await server.call("get_context_for_task", {**task, "tokenScale": 1.5}))
        plain = _structured(await server.call("get_context_for_task", {**task, "budgetTokens": 400}))

    assert scaled["budgetTokens"] == 400 and scaled["tokensUsed"] <= 400
    assert scaled["text"] == plain["text"]
    assert (scaled["metadata"]["tokenScale"], scaled["metadata"]["tokenizer"]) == (1.5, "o200k_base")


async def test_a_restarted_server_says_how_many_files_its_index_holds(shop: Path, tmp_path: Path) -> None:
    """A second start finds the index up to date and checks no file again; its status still counts
    the files the index holds (it said "0 files checked")."""
    arguments = ("--root", str(shop), "--index-dir", str(tmp_path / "index"))
    async with mcp_server(*arguments) as server:
        await server.ready()
    async with mcp_server(*arguments) as server:
        restarted = await server.ready()

    assert _structured(restarted)["indexedFiles"] == 7
    assert _texts(restarted) == ["The index of 1 workspace folder is ready: 7 files indexed."]


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("get_context_for_task", {}, "task"),
        ("get_context_for_task", {"task": "  "}, "task"),
        ("get_context_for_task", {"task": "cart", "budgetTokens": "lots"}, "budgetTokens"),
        ("get_context_for_task", {"task": "cart", "hopDepth": 9}, "hopDepth"),
        ("get_context_for_task", {"task": "cart", "tokenScale": "double"}, "tokenScale"),
        ("get_context_for_task", {"task": "cart", "tokenScale": 0.01}, "tokenScale"),
        ("get_context_for_task", {"task": "cart", "maxBodies": -1}, "maxBodies"),
        ("get_context_for_task", {"task": "cart", "includePRs": "yes"}, "includePRs"),
        ("get_context_for_task", {"task": "cart", "prCutoff": "last week"}, "prCutoff"),
        ("get_context_for_task", {"task": "cart", "focusFile": "/etc/passwd"}, "focusFile"),
        ("get_context_for_task", {"task": "cart", "focusFile": "../outside.py"}, "focusFile"),
        ("get_context_for_task", {"task": "cart", "focusFile": "shop/missing.py"}, "focusFile"),
        ("get_context_for_task", {"task": "cart", "focusFiles": "shop/orders.py"}, "focusFiles"),
        (
            "get_context_for_task",
            {"task": "cart", "focusFiles": ["shop/orders.py", "/etc/passwd"]},
            "focusFiles[1]",
        ),
        ("get_context_for_task", {"task": "cart", "colour": "red"}, "colour"),
        ("expand_symbol", {}, "id"),
        ("expand_symbol", {"id": "shop/nowhere.py::ghost"}, "id"),
        ("index_status", {"verbose": True}, "verbose"),
    ],
)
async def test_invalid_arguments_are_a_tool_error_naming_the_field(
    shop: Path, tmp_path: Path, tool: str, arguments: dict[str, Any], field: str
) -> None:
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        await server.ready()
        result = await server.call(tool, arguments)
        after = await server.call("get_context_for_task", {"task": "cart total"})

    assert result.is_error and result.structured_content is None
    assert field in _texts(result)[0]
    assert _ids(after), "the server keeps serving after a tool error"


@pytest.mark.parametrize(
    ("tool", "arguments", "member"),
    [
        ("get_context_for_task", {"task": "cart \ud800 total"}, "params.arguments.task"),
        ("get_context_for_task", {"task": "\udfff"}, "params.arguments.task"),
        ("expand_symbol", {"id": "shop/cart.py::\ud83d"}, "params.arguments.id"),
        ("get_context_for_task", {"task": "cart", "focusFiles": ["shop/\udc80.py"]}, "focusFiles[0]"),
    ],
)
async def test_a_lone_surrogate_in_an_argument_is_answered_as_invalid_params(
    shop: Path, tmp_path: Path, tool: str, arguments: dict[str, Any], member: str
) -> None:
    """JavaScript sends a string cut inside a surrogate pair as a lone escape like "\\ud800"; the
    SDK's own transport dropped such a line unanswered, and the agent waited forever."""
    async with js_mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as (server, _):
        await server.ready()
        with anyio.fail_after(WAIT_S), pytest.raises(MCPError) as refused:
            await server.call(tool, arguments)
        after = await server.call("get_context_for_task", {"task": "cart total"})

    assert refused.value.code == types.INVALID_PARAMS
    assert member in refused.value.message and "surrogate" in refused.value.message
    assert _ids(after), "the server keeps serving"


@pytest.mark.parametrize(
    ("line", "answer_id", "code"),
    [
        ("not json", None, types.PARSE_ERROR),
        ('{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"index_status"', None, -32700),
        ('{"jsonrpc":"2.0","id":"r2","params":{}}', "r2", types.INVALID_REQUEST),
        ('{"jsonrpc":"1.0","id":"r3","method":"tools/list"}', "r3", types.INVALID_REQUEST),
        ('[{"jsonrpc":"2.0","id":"r4","method":"tools/list"}]', None, types.INVALID_REQUEST),
        (
            '{"jsonrpc":"2.0","id":"r5","method":"tools/call","params":{"name":"index_status","arguments":'
            + "[" * 300
            + "]" * 300
            + "}}",
            "r5",
            types.PARSE_ERROR,
        ),
        (r'{"jsonrpc":"2.0","id":"\ud800","method":"tools/list"}', None, types.INVALID_PARAMS),
        (
            r'{"jsonrpc":"2.0","id":"r6","method":"tools/call","params":{"name":"index_status",'
            r'"arguments":{"\ud800":1}}}',
            "r6",
            types.INVALID_PARAMS,
        ),
    ],
)
async def test_a_line_that_is_no_readable_request_is_answered_with_its_id_if_it_has_one(
    shop: Path, tmp_path: Path, line: str, answer_id: str | None, code: int
) -> None:
    async with js_mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as (server, wire):
        await wire.send_line(line)
        answer = await wire.answer(answer_id, WAIT_S)
        after = await server.call("index_status", {})

    assert answer is not None, "the line was not answered"
    assert answer["error"]["code"] == code and "data" not in answer["error"]
    assert not after.is_error


@pytest.mark.parametrize(
    "focus",
    [
        "a" * 5000,
        "b" * 300 + ".py",
        "shop/" + "c" * 300 + "/orders.py",
        "file:///tmp/%00.py",
        "shop/orders.py\x00",
    ],
)
async def test_a_focus_path_the_file_system_refuses_is_a_tool_error_that_names_the_field(
    shop: Path, tmp_path: Path, focus: str
) -> None:
    """A name too long for the file system once answered with code 0 and the OS error, which quoted
    the whole absolute path, and logged a traceback."""
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        await server.ready()
        result = await server.call("get_context_for_task", {"task": "cart", "focusFile": focus})
        stderr = server.stderr()

    assert result.is_error
    text = _texts(result)[0]
    assert text.startswith("focusFile") and "Errno" not in text and len(text) < 600
    assert "Traceback" not in stderr


async def test_a_task_over_the_cap_is_answered_without_being_echoed(shop: Path, tmp_path: Path) -> None:
    task = "checkout log\n" + "poll ok\n" * 500_000 + "charge_card raised PaymentDeclined"
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        await server.ready()
        result = await server.call("get_context_for_task", {"task": task})

    pack = _structured(result)
    assert len(task) > 4_000_000
    assert pack["bodies"][0]["id"] == "shop/payments.py::charge_card"
    assert len(pack["taskDescription"]) < 3_000 and f"{len(task):,} characters" in pack["taskDescription"]
    assert "task-truncated" in [warning["code"] for warning in pack["metadata"]["warnings"]]
    assert len(_texts(result)[0]) < 50_000


async def test_a_file_whose_name_is_not_utf8_is_named_by_the_status_and_the_rest_is_served(
    shop: Path, tmp_path: Path
) -> None:
    (shop / "shop" / os.fsdecode(b"caf\xe9.py")).write_bytes(b"def cafe_special():\n    return 1\n")
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        status = await server.ready()
        result = await server.call("get_context_for_task", {"task": "charge_card"})

    assert _structured(status)["indexedFiles"] == 7
    assert (_structured(status)["undecodableCount"], _structured(status)["undecodableNames"]) == (
        1,
        ["shop/caf\\xe9.py"],
    )
    assert "not UTF-8: shop/caf\\xe9.py" in _texts(status)[0]
    assert _ids(result)[0] == "shop/payments.py::charge_card"


async def test_an_unknown_tool_is_a_protocol_error(shop: Path, tmp_path: Path) -> None:
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        with pytest.raises(MCPError, match="unknown tool 'get_context'"):
            await server.call("get_context", {"task": "cart"})
        assert not (await server.call("index_status", {})).is_error


async def test_a_file_changed_on_disk_reaches_the_next_answer(shop: Path, tmp_path: Path) -> None:
    refunds = shop / "shop" / "refunds.py"
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "index")) as server:
        await server.ready()

        refunds.write_text(
            'def refund_everything():\n    """Refund it all."""\n    return 1\n', encoding="utf-8"
        )
        created = await server.eventually(
            "get_context_for_task", {"task": "refund_everything"}, _has("shop/refunds.py::refund_everything")
        )
        refunds.unlink()
        deleted = await server.eventually(
            "get_context_for_task",
            {"task": "refund_everything"},
            lambda result: "shop/refunds.py::refund_everything" not in _ids(result),
        )

    assert _structured(created)["bodies"][0]["id"] == "shop/refunds.py::refund_everything"
    assert not any(item_id.startswith("shop/refunds.py") for item_id in _ids(deleted))
    assert any(message.level == "debug" for message in server.log.received)


async def test_two_roots_are_served_as_one_workspace(shop: Path, tmp_path: Path) -> None:
    billing = write_tree(
        tmp_path / "billing",
        {"ledger/invoices.py": 'def issue_invoice(order):\n    """Invoice an order."""\n    return order\n'},
    )
    roots = ("--root", str(shop), "--root", str(billing))
    async with mcp_server(*roots, "--index-dir", str(tmp_path / "index")) as server:
        status = _structured(await server.ready())
        result = await server.call("get_context_for_task", {"task": "issue_invoice for the order total"})
        pack = _structured(result)
        invoice = next(item for item in pack["bodies"] if item["name"] == "issue_invoice")
        expanded = _structured(await server.call("expand_symbol", {"id": invoice["id"]}))

    assert [folder["name"] for folder in status["folders"]] == ["shop", "billing"]
    assert status["filesTotal"] == 8
    assert invoice["id"] == "billing/ledger/invoices.py::issue_invoice"
    assert invoice["workspaceFolder"] == billing.as_uri()
    assert any(item_id.startswith("shop/") for item_id in _ids(result))
    link = next(link for link in _links(result) if link.name == invoice["citation"])
    assert link.uri.startswith((billing / "ledger" / "invoices.py").as_uri() + "#L1-L3")
    assert expanded["source"].startswith("def issue_invoice(order):")


async def test_without_roots_given_it_serves_the_clients_roots_and_follows_their_changes(
    shop: Path, tmp_path: Path
) -> None:
    billing = write_tree(
        tmp_path / "billing", {"invoices.py": "def issue_invoice(order):\n    return order\n"}
    )
    elsewhere = write_tree(tmp_path / "elsewhere", {"noise.py": "def issue_noise():\n    return 0\n"})
    client_roots = [types.Root(uri=shop.as_uri(), name="shop")]

    async with mcp_server(
        "--index-dir", str(tmp_path / "index"), cwd=elsewhere, roots=lambda: client_roots
    ) as server:
        first = _structured(await server.ready())
        client_roots = [types.Root(uri=billing.as_uri(), name="billing")]
        await server.client.send_roots_list_changed()
        moved = await server.eventually(
            "index_status", {}, lambda r: [f["name"] for f in _structured(r)["folders"]] == ["billing"]
        )
        await server.ready()
        answer = await server.call("get_context_for_task", {"task": "issue_invoice"})

    assert [folder["path"] for folder in first["folders"]] == [str(shop)]
    assert [folder["path"] for folder in _structured(moved)["folders"]] == [str(billing)]
    assert _ids(answer)[0] == "invoices.py::issue_invoice"


async def test_without_roots_anywhere_it_serves_the_current_folder(shop: Path, tmp_path: Path) -> None:
    async with mcp_server("--index-dir", str(tmp_path / "index"), cwd=shop) as server:
        status = _structured(await server.ready())

    assert [folder["path"] for folder in status["folders"]] == [str(shop)]


async def test_the_tools_pack_equals_the_command_lines_json(shop: Path, tmp_path: Path) -> None:
    task = "The SAVE10 discount code gives the wrong total on an order"
    async with mcp_server("--root", str(shop), "--index-dir", str(tmp_path / "mcp-index")) as server:
        await server.ready()
        result = await server.call("get_context_for_task", {"task": task, "includeImpact": True})
    command = subprocess.run(
        [
            *(sys.executable, "-m", "smartctx", "context", task, "--root", str(shop), "--include-impact"),
            *("--index-dir", str(tmp_path / "cli-index"), "--format", "json", "--quiet"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    def comparable(pack: dict[str, Any]) -> dict[str, Any]:
        # Timings and the moment of indexing differ between any two runs; nothing else may.
        metadata = {**pack["metadata"], "timingsMs": None}
        metadata["freshness"] = {**metadata["freshness"], "lastUpdate": None}
        return {**pack, "metadata": metadata}

    assert comparable(_structured(result)) == comparable(json.loads(command.stdout))


async def test_a_cancelled_call_stops_its_work_and_the_server_keeps_serving(tmp_path: Path) -> None:
    steps = write_tree(tmp_path / "steps", {f"pkg/mod{index}.py": module(index) for index in range(MODULES)})
    heavy = {
        "task": HEAVY_TASK,
        "budgetTokens": 1_000_000,
        "maxBodies": 200,
        "maxSummaries": 1000,
        "hopDepth": 3,
    }
    async with mcp_server("--root", str(steps), "--index-dir", str(tmp_path / "index")) as server:
        await server.ready()
        # Leaving the scope cancels the call, and the client sends notifications/cancelled.
        with anyio.move_on_after(0.05) as scope:
            await server.call("get_context_for_task", heavy)
        assert scope.cancelled_caught, "the call ended before it could be cancelled"
        await _wait_for(lambda: "a cancelled call" in server.stderr())
        after = await server.call("get_context_for_task", heavy)
        stderr = server.stderr()

    assert "a cancelled call stopped before it finished" in stderr
    # The same call, not cancelled, is answered in full: the stop above came from the cancel.
    assert _structured(after)["bodies"] and not _structured(after)["notFound"]


async def _wait_for(condition: Callable[[], bool]) -> None:
    """Poll a condition on the server's stderr, which sends no event of its own, within WAIT_S."""
    with anyio.fail_after(WAIT_S):
        while not condition():
            await anyio.sleep(0.01)
