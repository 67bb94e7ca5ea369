"""One index, several processes: the editor's language server, an agent's MCP server and the CLI on
one folder at once, as real processes over stdio on a real index folder.

One writes the index and the others follow its commits; killing the writer with SIGKILL leaves the
others answering while one of them takes over writing; changes made afterwards reach every one of
them, and the index ends equal to a fresh index of the folder. Nothing sleeps: the servers are asked
again after each notification they send, within ``WAIT_S``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack, asynccontextmanager
from itertools import count
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from raw_client import RawClient
from test_mcp import SHOP, WAIT_S, Session, mcp_server
from test_server import STOCK, focus_parts

from index_dump import assert_same_index, dump, fresh_dump
from smartctx.live.sharing import FOLLOW_POLL_S
from smartctx.lsp.protocol import CONTEXT_FOR_TASK, INDEX_STATUS
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.index_store import index_dir_in
from smartctx.store.snapshot import IndexSnapshot
from workspaces import write_tree

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

REFUNDS = {"shop/refunds.py": 'def refund_everything():\n    """Refund it all."""\n    return 1\n'}
LOYALTY = {"shop/loyalty.py": "def loyalty_points(total):\n    return int(total // 10)\n"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root)
    return root


class Editor:
    """A ``smartctx serve`` process driven over stdio as an editor would, with its log kept."""

    def __init__(self, client: RawClient, log: IO[str]) -> None:
        self.client, self._log = client, log
        self.pid = client.process.pid
        self._ids = count()

    def log(self) -> str:
        return Path(self._log.name).read_text(encoding="utf-8")

    async def request(self, method: str, params: Any = None) -> Any:
        answer = await self.client.request(f"{method}-{next(self._ids)}", method, params)
        assert "error" not in answer, answer
        return answer["result"]

    async def until(self, holds: Callable[[Any], bool], method: str, params: Any = None) -> Any:
        """The first answer for which ``holds`` is true, asking again after each notification."""
        deadline = time.monotonic() + WAIT_S
        while not holds(result := await self.request(method, params)):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{method} still answers {result}"
            message = await asyncio.wait_for(self.client.receive(), remaining)
            if "method" in message and "id" in message:
                await self.client.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        return result

    async def status(self, holds: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        status: dict[str, Any] = await self.until(holds, INDEX_STATUS)
        return status

    async def finds(self, task: str, item_id: str) -> None:
        await self.until(lambda pack: item_id in ids(pack), CONTEXT_FOR_TASK, {"task": task})


@asynccontextmanager
async def editors(workspace: Path, indexes: Path, how_many: int) -> AsyncIterator[list[Editor]]:
    """``how_many`` language servers on ``workspace``, started and initialized at the same time."""
    with ExitStack() as logs:
        files = [
            logs.enter_context(tempfile.NamedTemporaryFile("w+", encoding="utf-8", suffix=".stderr"))
            for _ in range(how_many)
        ]
        clients = await asyncio.gather(*(RawClient.start(stderr=log) for log in files))
        try:
            await asyncio.gather(*(client.initialize(workspace, indexes) for client in clients))
            yield [Editor(client, log) for client, log in zip(clients, files, strict=True)]
        finally:
            for client, log in zip(clients, files, strict=True):
                await client.close()
                print(Path(log.name).read_text(encoding="utf-8"), file=sys.stderr)


def ids(pack: dict[str, Any]) -> list[str]:
    return [item["id"] for item in pack["bodies"] + pack["summaries"]]


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    content: dict[str, Any] = result.structured_content
    return content


def cli_context(workspace: Path, index_dir: Path, task: str) -> tuple[dict[str, Any], str]:
    """``smartctx context --format json``: the pack, and what it said on stderr."""
    command = ["context", task, "--root", str(workspace), "--index-dir", str(index_dir)]
    done = subprocess.run(
        [sys.executable, "-m", "smartctx", *command, "--format", "json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pack: dict[str, Any] = json.loads(done.stdout)
    return pack, done.stderr


def ready(role: str) -> Callable[[dict[str, Any]], bool]:
    return lambda status: status["state"] == "ready" and status["role"] == role


async def mcp_role(server: Session, role: str) -> dict[str, Any]:
    result = await server.eventually("index_status", {}, lambda r: ready(role)(structured(r)))
    return structured(result)


async def settled(index_path: Path) -> None:
    """Wait until the writer has resolved every reference and recomputed the scores: it does so
    once updates have been quiet a moment, and nothing tells the other processes."""
    deadline = time.monotonic() + WAIT_S
    while True:
        with IndexSnapshot(index_path) as snapshot:
            stats = snapshot.stats()
        if not (stats.scores_dirty or stats.pending_references):
            return
        assert time.monotonic() < deadline, "the writer never finished its scores"
        await anyio.sleep(0.05)


async def test_serve_mcp_and_cli_share_one_index_through_a_kill_9_of_the_writer(
    shop: Path, tmp_path: Path
) -> None:
    indexes = tmp_path / "indexes"
    index_dir = index_dir_in(indexes, Path(os.path.realpath(shop)))

    async with editors(shop, indexes, 1) as [first]:
        await first.status(ready("writer"))
        async with mcp_server("--root", str(shop), "--index-dir", str(indexes)) as agent:
            following = await mcp_role(agent, "follower")
            assert (following["writerPid"], following["writerCommand"]) == (first.pid, "smartctx serve")
            assert "smartctx serve" in following["folders"][0]["writerCommand"]

            # The CLI answers from the shared index without indexing it again.
            pack, said = cli_context(shop, index_dir, "charge_card raises PaymentDeclined")
            assert f"smartctx serve (pid {first.pid}) keeps this index up to date" in said
            assert "shop/payments.py::charge_card" in ids(pack)

            # A change on disk: the writer indexes it, the follower answers with it.
            write_tree(shop, REFUNDS)
            await agent.eventually(
                "get_context_for_task",
                {"task": "refund everything"},
                lambda r: "shop/refunds.py::refund_everything" in ids(structured(r)),
            )

            os.kill(first.pid, signal.SIGKILL)
            # The agent goes on answering and takes over writing.
            await mcp_role(agent, "writer")
            answer = await agent.call("get_context_for_task", {"task": "refund everything"})
            assert "shop/refunds.py::refund_everything" in ids(structured(answer))

            async with editors(shop, indexes, 1) as [second]:
                joined = await second.status(ready("follower"))
                assert joined["writerCommand"] == "smartctx mcp"

                # Changes after the takeover reach the new writer, the new follower and the CLI.
                write_tree(shop, LOYALTY)
                (shop / "shop" / "refunds.py").unlink()
                await agent.eventually(
                    "get_context_for_task",
                    {"task": "loyalty points"},
                    lambda r: "shop/loyalty.py::loyalty_points" in ids(structured(r)),
                )
                await second.finds("loyalty points", "shop/loyalty.py::loyalty_points")
                pack, said = cli_context(shop, index_dir, "loyalty points")
                assert "smartctx mcp" in said and "shop/loyalty.py::loyalty_points" in ids(pack)
                refunds = await second.request(CONTEXT_FOR_TASK, {"task": "refund everything"})
                assert not any(item.startswith("shop/refunds.py") for item in ids(refunds))

                await settled(index_dir / INDEX_FILE_NAME)
                with IndexSnapshot(index_dir / INDEX_FILE_NAME) as snapshot:
                    shared = dump(snapshot, with_search=True)
                assert_same_index(shared, fresh_dump(shop, tmp_path / "fresh"))


async def test_two_servers_started_at_once_index_the_folder_once(shop: Path, tmp_path: Path) -> None:
    indexes = tmp_path / "indexes"
    async with editors(shop, indexes, 2) as [one, other]:
        statuses = [
            await one.status(lambda s: s["state"] == "ready"),
            await other.status(lambda s: s["state"] == "ready"),
        ]
        roles = sorted(status["role"] for status in statuses)
        assert roles == ["follower", "writer"]
        writer, follower = (one, other) if statuses[0]["role"] == "writer" else (other, one)
        assert "(on opening)" in writer.log()
        assert "(on opening)" not in follower.log()
        assert [status.get("writerPid") for status in statuses if status["role"] == "follower"] == [
            writer.pid
        ]
        # Both answer the same.
        task = {"task": "charge_card raises PaymentDeclined"}
        assert ids(await one.request(CONTEXT_FOR_TASK, task)) == ids(
            await other.request(CONTEXT_FOR_TASK, task)
        )


async def test_a_follower_packs_with_the_saves_its_writer_saw_and_keeps_them_when_it_takes_over(
    shop: Path, tmp_path: Path
) -> None:
    """A follower watches no files: the saves come from the writer's memory of edits."""
    indexes = tmp_path / "indexes"
    async with editors(shop, indexes, 2) as [one, other]:
        roles = [
            (await one.status(lambda s: s["state"] == "ready"))["role"],
            (await other.status(lambda s: s["state"] == "ready"))["role"],
        ]
        writer, follower = (one, other) if roles[0] == "writer" else (other, one)
        task = {"task": STOCK}
        before = await follower.request(CONTEXT_FOR_TASK, task)
        assert focus_parts(before, "shop/inventory.py") == set()

        inventory = shop / "shop" / "inventory.py"
        inventory.write_text(inventory.read_text(encoding="utf-8") + "\n# saved by someone\n", "utf-8")
        # Nothing notifies the follower when the writer's memory changes (it is no index change),
        # so it is asked again at the pace it reads that memory.
        with anyio.fail_after(WAIT_S):
            while "focusFile" not in focus_parts(
                await follower.request(CONTEXT_FOR_TASK, task), "shop/inventory.py"
            ):
                await anyio.sleep(FOLLOW_POLL_S)

        os.kill(writer.pid, signal.SIGKILL)
        await follower.status(ready("writer"))
        after = await follower.request(CONTEXT_FOR_TASK, task)
        assert "focusFile" in focus_parts(after, "shop/inventory.py")
