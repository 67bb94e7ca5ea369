"""The smartctx a user installs, tested as installed (issue 21): the wheel the .vsix carries,
``pip install``-ed into a fresh venv (not editable), run through the venv's ``smartctx`` command from a
folder outside the checkout: the command line on a real git repository, the language server over
stdio, the MCP server through the SDK's client; the index and the pack of a workspace in every
language, against the checkout's; and the README's commands as pasted (its first one in the
checkout, as it says).

scripts/test makes that venv and names its command in ``SMARTCTX_INSTALLED``; without it these tests
are skipped. By hand::

    python3 -m venv /tmp/v && /tmp/v/bin/pip install '.[team]' && SMARTCTX_INSTALLED=/tmp/v/bin/smartctx \\
        .venv/bin/python -m pytest tests/e2e/test_installed.py
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from raw_client import RawClient
from test_mcp import mcp_server

from gitrepos import Repo
from smartctx.lsp.protocol import CONTEXT_FOR_TASK, INDEX_STATUS

INSTALLED_VARIABLE = "SMARTCTX_INSTALLED"
REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
SHOP = REPO / "tests" / "fixtures" / "shop"
# One source file in each language smartctx parses (tests/unit/test_languages.py's fixtures).
LANGUAGES = REPO / "tests" / "fixtures" / "languages"
# A task the fixtures of most languages answer in part: the pack spans languages and files.
POLYGLOT_TASK = "save a record to the repository and load it again by its key"
# The lines of `smartctx index` that count what was indexed, each language's files by name.
INDEX_COUNTS = re.compile(r"^\s*(files|symbols)\s.*$", re.MULTILINE)
# The checkout's version: the installed server must report the same one everywhere.
VERSION = version("smartctx")
TASK = "charge_card raises PaymentDeclined"
# A squash commit's title: its pull request is named under the body it changed.
COMMIT_TITLE = "Decline a charge the gateway refuses"
PULL_REQUEST = 7
# A pack's Markdown heads each item "## 1. function `name` — path:start-end".
MARKDOWN_ITEM = re.compile(
    r"^## \d+\. \w+ `[^`]+` — (?P<path>\S+):(?P<start>\d+)-(?P<end>\d+)$", re.MULTILINE
)
# What the package under test reports about itself, printed by the installed interpreter from a
# script file: like the `smartctx` script, it puts its own folder on sys.path, never the current one.
PROBE = """
import json, sys, sysconfig
from importlib.metadata import distribution
import smartctx
print(json.dumps({
    "file": smartctx.__file__,
    "purelib": sysconfig.get_paths()["purelib"],
    "prefix": sys.prefix,
    "base_prefix": sys.base_prefix,
    "path": sys.path,
    "version": distribution("smartctx").version,
    "direct_url": distribution("smartctx").read_text("direct_url.json"),
}))
"""

# The MCP client speaks the 2025 handshake on purpose, as in test_mcp.py.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")


@dataclass(frozen=True)
class Installed:
    """The installed ``smartctx`` command and the environment every process of it runs with."""

    command: Path
    # Its own cache folder, and PATH with the install's bin folder first.
    env: dict[str, str]

    @property
    def python(self) -> Path:
        return self.command.parent / "python"

    def run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.command), *args],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            cwd=cwd,
            env={**os.environ, **self.env},
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if not os.environ.get(INSTALLED_VARIABLE):
        pytest.skip(f"{INSTALLED_VARIABLE} names no installed smartctx command (scripts/test sets it)")
    # pipx links its command into ~/.local/bin: the venv is where the link points.
    command = Path(os.environ[INSTALLED_VARIABLE]).resolve()
    assert command.is_file(), f"{INSTALLED_VARIABLE}={command} is not a file"
    # git comes from the system, as for a user; nothing else of the test machine's PATH is needed.
    git = shutil.which("git")
    assert git is not None
    path = os.pathsep.join([str(command.parent), str(Path(git).parent)])
    # One cache folder for the module, away from the user's: the secret prefilter compiles once.
    cache = tmp_path_factory.mktemp("installed-cache")
    return Installed(command, {"PATH": path, "SMARTCTX_CACHE_DIR": str(cache)})


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside the checkout, where the installed processes start."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    assert not folder.resolve().is_relative_to(REPO)
    return folder


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """The shop fixture as a git repository with one commit."""
    repo = Repo(tmp_path / "shop")
    shutil.copytree(SHOP, repo.root, dirs_exist_ok=True)
    repo.commit(f"{COMMIT_TITLE} (#{PULL_REQUEST})")
    return repo.root


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _file_lines(root: Path, path: str, start: int, end: int) -> str:
    lines = (root / path).read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(lines[start - 1 : end])


def _assert_cited_body(pack: dict[str, Any], root: Path) -> dict[str, Any]:
    """The pack's first body, checked to be the cited lines of its file as they are on disk."""
    assert pack["bodies"], pack
    body: dict[str, Any] = pack["bodies"][0]
    assert body["citation"] == f"{body['filePath']}:{body['startLine']}-{body['endLine']}"
    assert body["source"] == _file_lines(root, body["filePath"], body["startLine"], body["endLine"])
    assert body["citation"] in pack["text"]
    return body


def _assert_cited_markdown(markdown: str, root: Path) -> re.Match[str]:
    """The Markdown pack's first item, checked to quote the first cited line of its file."""
    item = MARKDOWN_ITEM.search(markdown)
    assert item is not None, markdown
    first_line = _file_lines(root, item["path"], int(item["start"]), int(item["start"]))
    assert first_line.strip() and first_line in markdown[item.end() :]
    return item


@pytest.mark.parametrize("start_in", ["elsewhere", "checkout"])
def test_the_package_that_runs_is_the_installed_wheel(
    installed: Installed, elsewhere: Path, start_in: str
) -> None:
    """Every test below is about the installed copy only if its interpreter imports that copy, from
    its own site-packages, with no part of the checkout on sys.path — wherever it starts."""
    script = elsewhere / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    probe = subprocess.run(
        [str(installed.python), str(script)],
        capture_output=True,
        text=True,
        check=True,
        cwd=elsewhere if start_in == "elsewhere" else REPO,
        env={**os.environ, **installed.env},
    )
    facts = json.loads(probe.stdout)
    site_packages = Path(facts["purelib"])

    assert facts["prefix"] != facts["base_prefix"], "not a virtual environment"
    assert site_packages.is_relative_to(facts["prefix"]) and installed.command.is_relative_to(facts["prefix"])
    assert Path(facts["file"]).is_relative_to(site_packages), facts["file"]
    assert not [entry for entry in facts["path"] if Path(entry).resolve().is_relative_to(REPO)]
    assert '"editable": true' not in (facts["direct_url"] or "")
    assert facts["version"] == VERSION


def test_the_command_line_reports_its_version_and_packs_a_git_repository(
    installed: Installed, elsewhere: Path, repository: Path, tmp_path: Path
) -> None:
    version_output = installed.run("--version", cwd=elsewhere)
    markdown = installed.run(
        *("context", TASK, "--root", str(repository), "--include-prs"),
        *("--index-dir", str(tmp_path / "index"), "--quiet"),
        cwd=elsewhere,
    )

    assert (version_output.returncode, version_output.stdout) == (0, f"smartctx {VERSION}\n")
    assert markdown.returncode == 0, markdown.stderr
    item = _assert_cited_markdown(markdown.stdout, repository)
    assert item["path"] == "shop/payments.py"
    # The change behind the body comes from git blame, run by the installed package.
    assert f'PR #{PULL_REQUEST} "{COMMIT_TITLE}"' in markdown.stdout


def test_the_installed_team_extra_publishes_a_commit_and_answers_from_it(
    installed: Installed, elsewhere: Path, repository: Path, tmp_path: Path, postgres_url: str
) -> None:
    """The team features as installed (``smartctx[team]``): the schema files the package carries,
    the PostgreSQL driver, a publish in two shards and a pack from the published base."""
    published = [
        installed.run(
            *("index", str(repository), "--quiet", "--publish", postgres_url),
            *("--repository", "example.invalid/shop", *step),
            cwd=elsewhere,
        )
        for step in (("--shard", "1/2"), ("--shard", "2/2"), ("--finish",))
    ]
    answer = installed.run(
        *("context", TASK, "--root", str(repository), "--format", "json"),
        *("--index-dir", str(tmp_path / "index"), "--base", postgres_url),
        *("--repository", "example.invalid/shop"),
        cwd=elsewhere,
    )

    assert [step.returncode for step in published] == [0, 0, 0], [step.stderr for step in published]
    assert answer.returncode == 0, answer.stderr
    assert "answered from base" in answer.stderr and "+ 0 local files" in answer.stderr
    body = _assert_cited_body(json.loads(answer.stdout), repository)
    assert body["filePath"] == "shop/payments.py"
    # A clean checkout of the published commit is answered without indexing anything locally.
    assert not list((tmp_path / "index").rglob("*.sqlite"))


@pytest.mark.asyncio
async def test_the_language_server_answers_context_for_task_over_stdio(
    installed: Installed, elsewhere: Path, repository: Path, tmp_path: Path
) -> None:
    client = await RawClient.start(command=(str(installed.command), "serve"), cwd=elsewhere)
    try:
        initialized = await client.initialize(repository, tmp_path / "index")
        await client.notification(INDEX_STATUS, lambda status: status["state"] == "ready")
        answer = await client.request("pack", CONTEXT_FOR_TASK, {"task": TASK})
        exit_code = await client.shutdown_and_exit()
    finally:
        await client.close()

    assert initialized["result"]["serverInfo"] == {"name": "smartctx", "version": VERSION}
    assert _assert_cited_body(answer["result"], repository)["filePath"] == "shop/payments.py"
    assert exit_code == 0


def _readme_section(heading: str) -> str:
    """README.md from ``heading`` to the next heading of its level or above."""
    text = README.read_text(encoding="utf-8")
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n")
    ends = [text.find(f"\n{'#' * depth} ", start + 1) for depth in range(1, len(level) + 1)]
    return text[start : min([end for end in ends if end != -1], default=len(text))]


def _code_blocks(section: str, language: str) -> Iterator[tuple[str, str]]:
    """Each ``language`` code block in ``section`` (indentation removed), with the bold name of the
    list item it belongs to ("" before any)."""
    for match in re.finditer(rf"^( *)```{language}\n(.*?)^\1```$", section, re.MULTILINE | re.DOTALL):
        names = re.findall(r"^- \*\*([^*]+)\*\*", section[: match.start()], re.MULTILINE)
        lines = match[2].splitlines()
        yield (names[-1] if names else ""), "\n".join(line.removeprefix(match[1]) for line in lines)


MCP_SECTION = "### The MCP server, for agents outside VS Code"
MCP_CONFIGS = {name: json.loads(block) for name, block in _code_blocks(_readme_section(MCP_SECTION), "json")}


def _server_entry(client_name: str) -> dict[str, Any]:
    """The one server a client's configuration registers."""
    config = MCP_CONFIGS[client_name]
    (entry,) = (config.get("mcpServers") or config["servers"]).values()
    assert isinstance(entry, dict)
    return entry


def _launches() -> dict[str, dict[str, Any]]:
    """Each distinct way the configurations start the server (command, arguments, environment), under
    the names of the clients that start it so: identical launches run once."""
    by_launch: dict[str, list[str]] = {}
    for name in sorted(MCP_CONFIGS):
        entry = _server_entry(name)
        launch = {"command": entry["command"], "args": entry["args"], "env": entry.get("env", {})}
        by_launch.setdefault(json.dumps(launch, sort_keys=True), []).append(name)
    return {", ".join(names): json.loads(launch) for launch, names in by_launch.items()}


MCP_LAUNCHES = _launches()


def test_the_readme_has_an_mcp_configuration_for_each_client_it_names() -> None:
    """The parametrised test below runs every configuration; this one fails if the README changes
    shape so that none is found."""
    assert sorted(MCP_CONFIGS) == ["Claude Code", "Cursor", "VS Code"]
    claude_commands = [
        block for name, block in _code_blocks(_readme_section(MCP_SECTION), "sh") if name == "Claude Code"
    ]
    (claude_command,) = claude_commands
    entry = _server_entry("Claude Code")
    # `claude mcp add … -- COMMAND ARGS…` writes the .mcp.json shown beside it.
    words = shlex.split(claude_command)
    assert words[words.index("--") + 1 :] == [entry["command"], *entry["args"]]


@pytest.mark.anyio
@pytest.mark.parametrize("clients", sorted(MCP_LAUNCHES))
async def test_each_mcp_configuration_in_the_readme_starts_the_installed_server(
    installed: Installed, elsewhere: Path, repository: Path, clients: str
) -> None:
    """Each configuration, run as its client runs it, through the MCP SDK's stdio client: the command
    it names found on PATH (the install's), its arguments, its environment."""
    for name in clients.split(", "):
        assert _server_entry(name).get("type", "stdio") == "stdio"
    entry = MCP_LAUNCHES[clients]
    assert shutil.which(entry["command"], path=installed.env["PATH"]) == str(installed.command)
    args = [argument.replace("${workspaceFolder}", str(repository)) for argument in entry["args"]]
    # Without --root the server serves the folder it starts in: the project's, where Claude Code
    # starts it.
    cwd = elsewhere if "--root" in args else repository

    async with mcp_server(
        *args, command=(entry["command"],), cwd=cwd, env={**entry["env"], **installed.env}
    ) as server:
        info = server.client.server_info
        status = await server.ready()
        result = await server.call("get_context_for_task", {"task": TASK})

    assert info is not None and (info.name, info.version) == ("smartctx", VERSION)
    assert isinstance(status.structured_content, dict)
    assert [folder["path"] for folder in status.structured_content["folders"]] == [str(repository)]
    assert not result.is_error and isinstance(result.structured_content, dict)
    body = _assert_cited_body(result.structured_content, repository)
    assert body["filePath"] == "shop/payments.py"
    assert body["citation"] in [
        block.name for block in result.content if isinstance(block, types.ResourceLink)
    ]


@pytest.fixture
def polyglot(tmp_path: Path) -> Path:
    """A workspace of one source file in every language smartctx parses."""
    root = tmp_path / "polyglot"
    for fixture in LANGUAGES.iterdir():
        for source in fixture.iterdir():
            if source.name != "expected.json":
                (root / fixture.name).mkdir(parents=True, exist_ok=True)
                shutil.copy(source, root / fixture.name / source.name)
    return root


def test_the_installed_wheel_indexes_and_packs_what_the_checkout_does(
    installed: Installed, elsewhere: Path, polyglot: Path, tmp_path: Path
) -> None:
    """What a user installs ranks as the tests' checkout does: a grammar, a tags query, the ranking
    model or a rule file left out of the wheel, or a dependency that resolves differently, shows
    as other counts in the index or another pack, which no error would report."""

    # The checkout's own command: the editable install of the environment running these tests.
    checkout = Installed(
        Path(sys.executable).parent / "smartctx", {"SMARTCTX_CACHE_DIR": str(tmp_path / "cache")}
    )
    counts: dict[str, list[str]] = {}
    packs: dict[str, dict[str, Any]] = {}
    for name, run in (("installed", installed.run), ("checkout", checkout.run)):
        index_dir = str(tmp_path / f"{name}-index")
        indexed = run("index", str(polyglot), "--index-dir", index_dir, cwd=elsewhere)
        packed = run(
            *("context", POLYGLOT_TASK, "--root", str(polyglot), "--index-dir", index_dir),
            *("--format", "json", "--quiet"),
            cwd=elsewhere,
        )
        assert (indexed.returncode, packed.returncode) == (0, 0), (name, indexed.stderr, packed.stderr)
        counts[name] = [match.group(0).strip() for match in INDEX_COUNTS.finditer(indexed.stdout)]
        pack = json.loads(packed.stdout)
        pack.pop("metadata")
        packs[name] = pack

    languages_indexed = ", ".join(sorted(f"{language.name} 1" for language in LANGUAGES.iterdir()))
    assert counts["checkout"][0].endswith(f"({languages_indexed})")
    assert counts["installed"] == counts["checkout"]
    # Each language's file is in a folder of the language's name.
    items = (*packs["checkout"]["bodies"], *packs["checkout"]["summaries"])
    languages = {item["filePath"].split("/")[0] for item in items}
    assert len(languages) >= 8, languages
    assert packs["installed"] == packs["checkout"]


def test_the_readmes_first_command_answers_as_pasted(installed: Installed) -> None:
    """The "Two commands" section: a plain install into .venv (what `pip install .` gives, as the
    installed wheel here), then its `smartctx context` on this repository, run as pasted."""
    _, block = next(_code_blocks(_readme_section("## Two commands"), "sh"))
    make_venv, install, context = (shlex.split(step) for step in block.split("&&"))

    assert make_venv == ["python3", "-m", "venv", ".venv"]
    assert install == [".venv/bin/pip", "install", "."]
    assert context[:2] == [".venv/bin/smartctx", "context"]
    answer = installed.run(*context[1:], cwd=REPO)
    assert answer.returncode == 0, answer.stderr
    _assert_cited_markdown(answer.stdout, REPO)
