"""The ``smartctx`` command as a user runs it: a real process, a real index file on disk."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from index_dump import dump
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.store.index_store import IndexStore
from workspaces import write_tree

SAMPLE = {
    "app/models.py": 'class Order:\n    """An order."""\n\n    def total(self):\n        return price()\n',
    "app/pricing.py": "def price():\n    return 1\n",
    "web/main.ts": "export function start(): void { render(); }\nfunction render() {}\n",
    "notes.txt": "not code",
    ".env": "SECRET=1",
    "big.py": "x = 1\n" * 200_000,
}


def run(
    *args: str, timeout: float = 120, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "smartctx", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
    )


def test_index_then_rerun_parses_nothing(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE)
    first = run("index", str(root), "--index-dir", str(tmp_path / "idx"))
    assert first.returncode == 0, first.stderr
    assert "files    3 (python 2, typescript 1)" in first.stdout
    assert "3 parsed" in first.stdout
    assert "secret 1" in first.stdout and "too-large 1" in first.stdout and "unsupported 1" in first.stdout
    second = run("index", str(root), "--index-dir", str(tmp_path / "idx"))
    assert second.returncode == 0, second.stderr
    assert "0 parsed, 3 unchanged, 0 removed" in second.stdout
    status = run("status", str(root), "--index-dir", str(tmp_path / "idx"))
    assert status.returncode == 0 and "ready" in status.stdout


def test_default_index_lives_outside_the_repository(tmp_path: Path, isolated_cache: Path) -> None:
    root = write_tree(tmp_path / "ws", {"a.py": "def f():\n    pass\n"})
    result = run("index", str(root))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in root.iterdir()) == ["a.py"]
    assert list(isolated_cache.glob("ws-*/index-v1.sqlite"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("index", "/no/such/folder"), "no such folder: /no/such/folder"),
        (("status", "/no/such/folder"), "no such folder"),
        (("index", "--max-file-bytes", "0", "."), "must be greater than 0"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(args: tuple[str, ...], message: str) -> None:
    result = run(*args)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [(("--index-dir", "idx"), {}), ((), {"SMARTCTX_CACHE_DIR": "idx"})],
    ids=["--index-dir", "SMARTCTX_CACHE_DIR"],
)
def test_a_relative_index_folder_is_taken_from_the_current_folder(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    write_tree(tmp_path / "ws", {"a.py": "def f():\n    pass\n"})
    indexed = run("index", "ws", *args, cwd=tmp_path, env=env)
    context = run("context", "f", "--root", "ws", *args, cwd=tmp_path, env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert context.returncode == 0, context.stderr
    assert list((tmp_path / "idx").rglob("index-v1.sqlite"))


@pytest.mark.parametrize("line_end", ["\r", "\r\n", "\n"], ids=["CR", "CRLF", "LF"])
def test_definitions_are_cited_at_their_lines_whatever_the_line_ends(tmp_path: Path, line_end: str) -> None:
    source = ["def first():", "    return 1", "", "", "def second():", "    return first()", ""]
    root = tmp_path / "ws"
    root.mkdir()
    (root / "m.py").write_bytes(line_end.join(source).encode())
    result = run(
        "context",
        "first second",
        "--root",
        str(root),
        "--index-dir",
        str(tmp_path / "idx"),
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    pack = json.loads(result.stdout)
    cited = sorted(item["citation"] for item in pack["bodies"])
    assert cited == ["m.py:1-2", "m.py:5-6"]
    assert "stale" not in str(pack["metadata"]["warnings"])


def test_names_that_are_not_utf8_are_listed_and_the_rest_is_indexed(tmp_path: Path) -> None:
    """One Latin-1 file name once stopped the whole workspace from being indexed (exit 1, a
    UnicodeEncodeError from the store), and every `context` after it failed."""
    root = write_tree(tmp_path / "ws", {"app/pricing.py": "def price():\n    return 1\n"})
    (root / os.fsdecode(b"caf\xe9.py")).write_bytes(b"def cafe():\n    return 2\n")
    (root / os.fsdecode(b"app/\xff\xfe")).mkdir()
    (root / os.fsdecode(b"app/\xff\xfe/inner.py")).write_text("def inner():\n    return 3\n")
    index_dir = str(tmp_path / "index")

    indexed = run("index", str(root), "--index-dir", index_dir, "--quiet")
    status = run("status", str(root), "--index-dir", index_dir)
    context = run("context", "price", "--root", str(root), "--index-dir", index_dir, "--format", "json")

    assert indexed.returncode == 0, indexed.stderr
    assert "undecodable-name 2" in indexed.stdout
    listed = "2 not UTF-8, so not indexed (rename them to index them): app/\\xff\\xfe, caf\\xe9.py"
    assert listed in indexed.stdout and listed in status.stdout
    assert context.returncode == 0, context.stderr
    assert json.loads(context.stdout)["bodies"][0]["id"] == "app/pricing.py::price"


def test_definitions_folded_into_an_ancestor_are_counted_and_a_pack_says_where_one_is(
    tmp_path: Path,
) -> None:
    """Past the fold depth a definition is no node of its own; that was right, saying nothing was
    not: `index` said "skipped none" and a task naming one got its ancestor without a word."""
    count = 5000
    opening = "".join(f"function jsnest_{level}() {{\n" for level in range(count))
    root = write_tree(tmp_path / "ws", {"nest.js": f"{opening}deepCall();\n{'}' * count}\n"})
    index_dir = str(tmp_path / "index")

    indexed = run("index", str(root), "--index-dir", index_dir, "--quiet")
    status = run("status", str(root), "--index-dir", index_dir)
    context = run(
        *("context", "jsnest_4999", "--root", str(root), "--index-dir", index_dir, "--format", "json")
    )

    assert indexed.returncode == 0, indexed.stderr
    counted = f"folded   {count - 24:,} definitions nested too deep"
    assert counted in indexed.stdout and counted in status.stdout
    pack = json.loads(context.stdout)
    holder = ".".join(f"jsnest_{level}" for level in range(24))
    assert pack["bodies"][0]["id"] == f"nest.js::{holder}" and not pack["notFound"]
    (folded,) = [
        warning for warning in pack["metadata"]["warnings"] if warning["code"] == "folded-definition"
    ]
    assert folded["nodeId"] == f"nest.js::{holder}"
    assert folded["message"].startswith("jsnest_4999 (line 5000 of nest.js) is defined too deep")
    assert f"part of {holder} (nest.js:24-" in folded["message"]


def test_status_without_index_says_what_to_do(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", {"a.py": "x = 1\n"})
    result = run("status", str(root), "--index-dir", str(tmp_path / "idx"))
    assert result.returncode == 1
    assert "has no index yet; run: smartctx index" in result.stderr


def test_index_dir_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", {"a.py": "x = 1\n"})
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    result = run("index", str(root), "--index-dir", str(blocker / "idx"))
    assert result.returncode == 1
    assert result.stderr.startswith("smartctx: error: cannot create index folder")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("garbage", [b"this is not sqlite" * 100, b""])
def test_corrupt_index_is_moved_aside_and_rebuilt(tmp_path: Path, garbage: bytes) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE)
    index_dir = tmp_path / "idx"
    index_dir.mkdir()
    (index_dir / "index-v1.sqlite").write_bytes(garbage)
    result = run("index", str(root), "--index-dir", str(index_dir))
    assert result.returncode == 0, result.stderr
    if garbage:
        assert "warning: rebuilding the index" in result.stderr
        assert list(index_dir.glob("index-v1.sqlite.broken-*"))
    assert "files    3" in result.stdout


def test_an_index_whose_search_words_an_older_smartctx_made_is_built_again(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE)
    index_dir = tmp_path / "idx"
    assert run("index", str(root), "--index-dir", str(index_dir)).returncode == 0
    # smartctx before search words version 2 wrote no stamp, and kept every secret's words: its files
    # would keep them until they changed, so the whole index is made again.
    with sqlite3.connect(index_dir / "index-v1.sqlite") as database:
        database.execute("DELETE FROM meta WHERE key = 'search_words'")
    database.close()

    again = run("index", str(root), "--index-dir", str(index_dir))

    assert again.returncode == 0, again.stderr
    assert "warning: rebuilding the index" in again.stderr and "search words" in again.stderr
    assert "3 parsed" in again.stdout
    # Only out of date, not damaged: nothing is kept aside.
    assert not list(index_dir.glob("*.broken-*"))
    third = run("index", str(root), "--index-dir", str(index_dir))
    assert "0 parsed, 3 unchanged" in third.stdout and "warning" not in third.stderr


def test_index_of_another_workspace_is_not_reused(tmp_path: Path) -> None:
    first = write_tree(tmp_path / "one", {"a.py": "def only_in_one():\n    pass\n"})
    second = write_tree(tmp_path / "two", {"b.py": "def only_in_two():\n    pass\n"})
    index_dir = str(tmp_path / "idx")
    assert run("index", str(first), "--index-dir", index_dir).returncode == 0
    result = run("index", str(second), "--index-dir", index_dir)
    assert result.returncode == 0
    assert "indexes" in result.stderr and str(first) in result.stderr
    assert "files    1 (python 1)" in result.stdout


def many_files(root: Path, count: int) -> None:
    for number in range(count):
        folder = root / f"pkg{number % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        calls = "\n".join(f"    helper_{(number * 7 + k) % count}()" for k in range(3))
        (folder / f"mod{number}.py").write_text(
            f"from pkg{(number + 1) % 20}.mod{(number + 1) % count} import helper_{(number + 1) % count}\n\n"
            f"def helper_{number}():\n{calls}\n\n\nclass Thing{number}(Thing{(number + 3) % count}):\n"
            f"    def run(self):\n        return helper_{number}()\n"
        )


def index_state(index_file: Path) -> tuple[int, int] | None:
    """(files, files with unresolved references) as another process sees the index now, or None."""
    if not index_file.exists():
        return None
    try:
        connection = sqlite3.connect(f"{index_file.as_uri()}?mode=ro", uri=True, timeout=0.1)
        try:
            files, pending = connection.execute(
                "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM files WHERE refs_pending = 1)"
            ).fetchone()
        finally:
            connection.close()
    except sqlite3.Error:
        return None
    return int(files), int(pending)


def children_of(pid: int) -> set[int]:
    """Live child processes of ``pid`` (Linux /proc)."""
    found: set[int] = set()
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.update(int(child) for child in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except OSError:
        return False
    return state != "Z"


KILL_POINTS = {
    # The index file exists: the kill may land inside schema creation or the first batch.
    "created": lambda state: state is not None,
    # The first batch of a first index is committed; the rest is not.
    "part-indexed": lambda state: state is not None and 0 < state[0] < 2500,
    # Every file is in; resolution or scoring is under way or about to be.
    "all-files": lambda state: state is not None and state[0] == 2500,
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_mid_index_then_rerun_equals_fresh_index(tmp_path: Path, point: str) -> None:
    """Killing the indexer at any instant loses nothing: the next run completes the same index."""
    root = tmp_path / "ws"
    many_files(root, 2500)
    index_dir = tmp_path / "idx"
    process = subprocess.Popen(
        [sys.executable, "-m", "smartctx", "index", str(root), "--index-dir", str(index_dir), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    reached = KILL_POINTS[point]
    deadline = time.monotonic() + 60
    while process.poll() is None and not reached(index_state(index_dir / "index-v1.sqlite")):
        assert time.monotonic() < deadline, "the indexer never reached the kill point"
        time.sleep(0.005)
    killed = process.poll() is None
    workers = children_of(process.pid)
    if killed:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert killed or point == "all-files", "the indexer finished before it could be killed"
    # Parser workers notice their parent is gone and exit instead of waiting forever.
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers):
        assert time.monotonic() < deadline, "parser workers outlived the killed indexer"
        time.sleep(0.05)
    rerun = run("index", str(root), "--index-dir", str(index_dir))
    assert rerun.returncode == 0, rerun.stderr
    assert "files    2,500 (python 2,500)" in rerun.stdout
    live = IndexStore(root, index_dir)
    fresh = IndexStore(root, tmp_path / "fresh")
    try:
        Indexer(root, fresh, IndexConfig(workers=0)).reconcile()
        with live.snapshot() as live_view, fresh.snapshot() as fresh_view:
            live_dump, fresh_dump = dump(live_view), dump(fresh_view)
        assert live_dump.nodes == fresh_dump.nodes
        assert live_dump.edges == fresh_dump.edges
        assert live_dump.refs == fresh_dump.refs
        assert live_dump.scores.keys() == fresh_dump.scores.keys()
    finally:
        live.close()
        fresh.close()


def test_context_prints_a_cited_pack(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE)
    result = run(
        "context", "how is the order total priced", "--root", str(root), "--index-dir", str(tmp_path / "i")
    )
    assert result.returncode == 0, result.stderr
    assert "# Context for: how is the order total priced" in result.stdout
    assert "app/models.py:4-5" in result.stdout or "app/pricing.py:1-2" in result.stdout
    assert "o200k_base tokens" in result.stderr


def test_a_token_scale_states_the_budget_in_another_models_tokens(tmp_path: Path) -> None:
    """--budget 120 at --token-scale 1.5: a pack of at most 80 o200k_base tokens, and the summary line
    says both budgets."""
    root = write_tree(tmp_path / "ws", SAMPLE)
    where = ("--root", str(root), "--index-dir", str(tmp_path / "i"))
    task = ("context", "how is the order total priced", *where, "--budget", "120")
    scaled = run(*task, "--token-scale", "1.5", "--format", "json")
    plain = run(*task, "--budget", "80", "--format", "json")
    shown = run(*task, "--token-scale", "1.5")

    assert scaled.returncode == plain.returncode == shown.returncode == 0, scaled.stderr + shown.stderr
    pack = json.loads(scaled.stdout)
    assert (pack["budgetTokens"], pack["metadata"]["tokenScale"]) == (80, 1.5)
    assert pack["text"] == json.loads(plain.stdout)["text"] and pack["tokensUsed"] <= 80
    assert f"{pack['tokensUsed']}/80 o200k_base tokens (a budget of 120 at 1.5 per token)" in shown.stderr


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    """`smartctx context … | head -1`: the pipe closes before the pack is written."""
    root = write_tree(tmp_path / "ws", SAMPLE)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "smartctx", "context", "order total", "--root", str(root), "--quiet"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "output closed" in result.stderr


def test_context_json_from_stdin(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "smartctx",
            "context",
            "-",
            "--root",
            str(root),
            "--format",
            "json",
            "--budget",
            "500",
        ],
        input="price of an order",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    pack = json.loads(result.stdout)
    assert pack["budgetTokens"] == 500 and pack["tokensUsed"] <= 500
    assert {"search", "expand", "score", "pack"} <= set(pack["metadata"]["timingsMs"])
    assert all(
        item["citation"] == f"{item['filePath']}:{item['startLine']}-{item['endLine']}"
        for item in pack["bodies"]
    )


def test_a_task_over_the_cap_from_stdin_is_answered_without_its_middle(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE)
    task = "price of an order\n" + "DEBUG poll ok\n" * 300_000 + "then Order.total failed"
    result = subprocess.run(
        [sys.executable, "-m", "smartctx", "context", "-", "--root", str(root), "--format", "json"],
        input=task,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    pack = json.loads(result.stdout)
    assert len(task) > 4_000_000 and len(result.stdout) < 100_000
    assert pack["taskDescription"].startswith("price of an order")
    assert "task-truncated" in [warning["code"] for warning in pack["metadata"]["warnings"]]
    assert pack["bodies"][0]["id"] == "app/models.py::Order.total"


def test_open_and_recent_files_steer_the_pack(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE)
    base = ("context", "order total price", "--root", str(root), "--format", "json", "--quiet")
    plain = run(*base, "--index-dir", str(tmp_path / "i"))
    focused = run(
        *base,
        "--index-dir",
        str(tmp_path / "i"),
        "--open",
        "app/pricing.py",
        "--recent",
        str(root / "app/models.py"),
    )

    assert plain.returncode == 0 and focused.returncode == 0, plain.stderr + focused.stderr
    parts = {body["id"]: body["scoreParts"] for body in json.loads(focused.stdout)["bodies"]}
    assert "focusFile" in parts["app/pricing.py::price"]
    assert "focusFile" in parts["app/models.py::Order.total"]
    assert not any(
        part.startswith("focus") for body in json.loads(plain.stdout)["bodies"] for part in body["scoreParts"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("context", "x", "--open", "no/such/file.py"), "--open no/such/file.py: no such file"),
        (
            ("context", "x", "--recent", "/etc/passwd"),
            "--recent /etc/passwd: not inside the workspace folder",
        ),
    ],
)
def test_focus_files_outside_the_workspace_are_refused(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE)
    result = run(*args, "--root", str(root), "--index-dir", str(tmp_path / "i"))
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("context", "  "), "the task is empty"),
        (("context", "x", "--hop-depth", "9"), "hopDepth must be a whole number from 0 to 3"),
        (("context", "x", "--budget", "abc"), "not a whole number"),
        (("context", "x", "--token-scale", "0"), "--token-scale: must be a number greater than 0"),
        (("context", "x", "--token-scale", "20"), "tokenScale must be a number from 0.1 to 10"),
    ],
)
def test_context_bad_input(args: tuple[str, ...], message: str) -> None:
    result = run(*args)
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr


def test_serve_rejects_a_tcp_address_without_a_port() -> None:
    result = run("serve", "--tcp", "localhost")

    assert result.returncode == 2
    assert "expected HOST:PORT like 127.0.0.1:2087, got 'localhost'" in result.stderr
