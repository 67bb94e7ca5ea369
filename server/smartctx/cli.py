"""The ``smartctx`` command: index a workspace and report on it from a terminal.

Every failure a user can cause (a missing path, an unreadable index folder) ends in one line on
stderr and a non-zero exit code, never a traceback.

When another smartctx process (an editor's language server, an agent's MCP server) writes the
folder's index, ``index``, ``context`` and ``status`` never write it too (live/sharing.py): they read
what it has committed, after waiting up to ``--wait`` seconds for its first index if it is still at
it, and say so on stderr. If that process exits meanwhile, the command takes over and indexes.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack, closing
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from smartctx.core.context import (
    MAX_FOCUS_FILES,
    TOKENIZERS,
    ContextOptions,
    ContextPack,
    ContextRequest,
    Focus,
    InvalidRequestError,
    RecentEdit,
)
from smartctx.core.shards import Shard
from smartctx.core.tokens import TokenCounter
from smartctx.history.changes import GitHistory
from smartctx.indexing.indexer import (
    UNDECODABLE_NAMES_KEY,
    IndexConfig,
    Indexer,
    IndexReport,
    undecodable_names,
)
from smartctx.indexing.scanner import ScanConfig, is_decodable, printable_path
from smartctx.indexing.sources import WorkspaceSources
from smartctx.live.sharing import (
    FOLLOW_POLL_S,
    Wait,
    WriterLock,
    publish_status,
    read_status,
    this_process,
    wait_for_first_index,
)
from smartctx.live.status import StatusCounts, WriterInfo
from smartctx.lsp.framing import DEFAULT_MAX_BODY_BYTES
from smartctx.parsing.languages import is_source
from smartctx.retrieval.pipeline import build_context
from smartctx.secrets.log_format import RedactingFormatter
from smartctx.secrets.redaction import redact, redact_tree
from smartctx.store.database import INDEX_FILE_NAME, IndexUnavailableError, check_index
from smartctx.store.index_store import IndexStore, default_index_dir, index_size_bytes
from smartctx.store.reader import ReaderUnavailableError
from smartctx.store.snapshot import IndexSnapshot
from smartctx.team import PublishError
from smartctx.wire.convert import pack_to_wire
from smartctx.wire.options import CONTEXT_OPTIONS

if TYPE_CHECKING:
    from smartctx.team.publish import PublishReport
    from smartctx.team.publisher import Publisher

EXIT_OK = 0
EXIT_FAILURE = 1
# How long index and context wait, by default, for another process's first index of the folder.
DEFAULT_WAIT_S = 30.0
# Entries whose names are not UTF-8 that a summary names; it counts them all.
NAMES_SHOWN = 5


class UserError(Exception):
    """A problem the user can fix; its message is printed as the one line of output."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _argument_parser()
    args = parser.parse_args(argv)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(RedactingFormatter("smartctx: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[stderr])
    try:
        result: int = args.handler(args)
    except (UserError, IndexUnavailableError, PublishError) as error:
        print(redact(f"smartctx: error: {error}")[0], file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("smartctx: interrupted; the index keeps every batch that was committed", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (`| head`) left: say so once, and keep Python from failing again on exit
        # when it flushes the same broken stdout.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print("smartctx: output closed before the answer was written", file=sys.stderr)
        return EXIT_FAILURE
    return result


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="smartctx", description="The right code for a task, cited, in budget."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('smartctx')}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    index = commands.add_parser("index", help="index a workspace (only what changed since the last run)")
    _add_workspace_arguments(index)
    index.add_argument(
        "--max-file-bytes", type=_positive_int, default=ScanConfig().max_file_bytes, help="skip larger files"
    )
    index.add_argument(
        "--workers", type=_non_negative_int, help="parser processes (0: parse in this process)"
    )
    index.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_wait_argument(index)
    team = index.add_argument_group(
        "publishing for a team", "write the index of the checked-out commit into PostgreSQL (smartctx[team])"
    )
    team.add_argument(
        "--publish",
        metavar="URL",
        help="then publish the commit's index to this database: postgresql://USER@HOST:PORT/DATABASE",
    )
    team.add_argument(
        "--repository",
        metavar="NAME",
        help="the repository's name there (default: the origin remote's host/path)",
    )
    team.add_argument(
        "--keep",
        type=_positive_int,
        metavar="N",
        help="published commits of the repository to keep, newest first (default 5)",
    )
    team.add_argument(
        "--shard",
        type=_shard,
        metavar="I/N",
        help="index and publish only the I-th of N parts of the commit's files, beside N-1 other jobs;"
        " the commit is visible once --finish has run",
    )
    team.add_argument(
        "--finish",
        action="store_true",
        help="complete a commit whose N shards are published: resolve its references, compute its"
        " scores, make it visible (indexes nothing)",
    )
    index.set_defaults(handler=_index_command)

    context = commands.add_parser(
        "context", help="the code that matters for a task, cited, in a token budget"
    )
    context.add_argument("task", help="the task in plain words (quote it), or - to read it from stdin")
    context.add_argument("--root", default=".", help="workspace folder (default: the current folder)")
    context.add_argument(
        "--index-dir", type=Path, help="where the index lives (default: the user cache folder)"
    )
    # Each option's flag stores its value under the option's ContextOptions field (wire/options.py),
    # which _context_command reads; an option left out stays None, the default.
    context.add_argument(
        "--budget",
        type=_positive_int,
        dest="budget_tokens",
        metavar="BUDGET",
        help="token budget for the whole pack, counted exactly with --tokenizer (default 8000)",
    )
    context.add_argument(
        "--token-scale",
        type=_positive_number,
        metavar="RATIO",
        help=(
            "state --budget in the tokens of a model that counts otherwise: RATIO of its tokens per"
            " tokenizer token; the pack is made in budget / RATIO tokenizer tokens. For a model whose"
            " tokenizer is not public, 1.25 leaves a quarter of headroom (default 1)"
        ),
    )
    context.add_argument(
        "--max-bodies",
        type=_non_negative_int,
        help="full definitions to include (default: chosen from the budget, 5 at 4,000 tokens)",
    )
    context.add_argument(
        "--max-summaries",
        type=_non_negative_int,
        help="signatures to include (default: chosen from the budget, 25 at 4,000 tokens)",
    )
    context.add_argument(
        "--candidate-limit",
        type=_positive_int,
        help="search candidates (default: 100, or one per 80 tokens of a larger budget)",
    )
    context.add_argument(
        "--ranked-cap",
        type=_positive_int,
        help="ranked items considered (default: chosen from the budget, 50 at 4,000 tokens)",
    )
    context.add_argument(
        "--hop-depth", type=_non_negative_int, help="graph hops from the matches (default 1, max 3)"
    )
    context.add_argument("--hop-frontier-cap", type=_positive_int, help="nodes added per hop (default 200)")
    context.add_argument(
        "--no-blobs",
        action="store_false",
        dest="include_blobs",
        default=None,
        help="signatures only, no full bodies",
    )
    context.add_argument(
        "--include-prs",
        action="store_true",
        default=None,
        help="add the recent changes (PR or commit) behind each body",
    )
    context.add_argument("--prs-per-node", type=_positive_int, help="changes per body (default 3)")
    context.add_argument(
        "--pr-cutoff", metavar="DATE", help="leave out changes after this ISO 8601 date or date-time"
    )
    context.add_argument(
        "--include-impact", action="store_true", default=None, help="add what depends on the top body"
    )
    context.add_argument("--impact-depth", type=_positive_int, help="impact hops (default 1, max 5)")
    context.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        help="tiktoken encoding the budget is counted in (default o200k_base, GPT-4o's)",
    )
    context.add_argument(
        "--open",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="files open in your editor (the work is near them); the first is the active one",
    )
    context.add_argument(
        "--recent",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="files you edited lately; each counts from its modification time",
    )
    context.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output format")
    context.add_argument("--quiet", action="store_true", help="no progress bar while indexing")
    _add_wait_argument(context)
    base = context.add_argument_group("a team's base index (needs smartctx[team]; see the README, For teams)")
    base.add_argument(
        "--base",
        metavar="URL",
        help=(
            "answer from the index the team published to PostgreSQL at URL (postgresql://…) for the"
            " nearest published ancestor of HEAD, indexing only the files that differ from it; a base"
            " that cannot be reached is answered from the local index, saying why"
        ),
    )
    base.add_argument(
        "--repository",
        metavar="NAME",
        help="the name the base was published under (default: the origin remote's host/path)",
    )
    context.set_defaults(handler=_context_command)

    status = commands.add_parser("status", help="what the index of a workspace holds")
    _add_workspace_arguments(status)
    status.set_defaults(handler=_status_command)

    serve = commands.add_parser(
        "serve", help="run the language server over stdio (editors start this; logs go to stderr)"
    )
    serve.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        type=_host_and_port,
        help="for debugging: listen on HOST:PORT for one client instead of using stdio",
    )
    serve.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_BODY_BYTES,
        help="larger messages are skipped and answered with an error (default 64 MiB)",
    )
    serve.set_defaults(handler=_serve_command)

    mcp = commands.add_parser(
        "mcp", help="run the MCP server over stdio for agents (Claude Code, Cursor, …; logs go to stderr)"
    )
    mcp.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="PATH",
        help="a folder to serve (repeat for several; default: the client's roots, else the current folder)",
    )
    mcp.add_argument(
        "--index-dir",
        type=Path,
        help="the folder holding one index per served folder (default: the user cache folder)",
    )
    mcp_base = mcp.add_argument_group("a team's base index (needs smartctx[team]; see the README, For teams)")
    mcp_base.add_argument(
        "--base",
        metavar="URL",
        help=(
            "the team's published index in PostgreSQL (postgresql://…): a served folder is answered"
            " from the nearest published ancestor of its HEAD, with the files that differ from it laid"
            " over it, while its own first index runs"
        ),
    )
    mcp_base.add_argument(
        "--repository",
        metavar="NAME",
        help="the name the base was published under (default: the origin remote's host/path)",
    )
    mcp_base.add_argument(
        "--base-only",
        action="store_true",
        help=(
            "answer from the base for good: index only the files that differ from it, never a whole"
            " folder (for repositories too large to index here); a folder no base answers for is"
            " indexed whole"
        ),
    )
    mcp.set_defaults(handler=_mcp_command)
    return parser


def _add_workspace_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=".", help="workspace folder (default: the current folder)")
    parser.add_argument(
        "--index-dir", type=Path, help="where the index lives (default: the user cache folder, keyed by path)"
    )


def _add_wait_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait",
        type=float,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help="when another smartctx process is building this folder's first index, wait this long for"
        f" it before using what it has so far (default {DEFAULT_WAIT_S:.0f})",
    )


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def _shard(text: str) -> Shard:
    try:
        return Shard.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, got {text!r}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def _host_and_port(text: str) -> tuple[str, int]:
    host, separator, port_text = text.rpartition(":")
    if not separator or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT like 127.0.0.1:2087, got {text!r}")
    return host.strip("[]"), int(port_text)


def _workspace(path_text: str) -> Path:
    path = Path(path_text).expanduser()
    if not path.exists():
        raise UserError(f"no such folder: {path_text}")
    if not path.is_dir():
        raise UserError(f"not a folder: {path_text}")
    return path.resolve()


def _reconcile(root: Path, store: IndexStore, config: IndexConfig, quiet: bool) -> IndexReport:
    """Bring the index up to date, with a progress bar on a terminal; the progress is published for
    servers that start meanwhile and follow this process (live/sharing.py)."""
    if store.rebuilt_reason:
        print(f"smartctx: warning: rebuilding the index: {store.rebuilt_reason}", file=sys.stderr)
    indexer = Indexer(root, store, config)
    me = this_process()
    publish_status(store.index_dir, StatusCounts(True, 0, 0, 0), me)
    with tqdm(
        desc="parsing", unit=" files", disable=True if quiet else None, file=sys.stderr, leave=False
    ) as bar:
        published_s = time.monotonic()

        def progress(done: int, total: int) -> None:
            nonlocal published_s
            if bar.total != total:
                bar.reset(total=total)
            bar.update(done - bar.n)
            # Followers look this often; publishing more often would only rewrite the file.
            if time.monotonic() - published_s >= FOLLOW_POLL_S:
                published_s = time.monotonic()
                publish_status(store.index_dir, StatusCounts(True, done, total, total - done), me)

        report = indexer.reconcile(progress)
    done = report.files_parsed
    publish_status(store.index_dir, StatusCounts(False, done, done, 0, indexed_files=report.files_total), me)
    return report


def _index_dir(root: Path, given: Path | None) -> Path:
    return given.expanduser().absolute() if given is not None else default_index_dir(root)


def _try_claim(lock: WriterLock) -> bool:
    """Whether this process holds the lock to write the index now."""
    try:
        return lock.try_acquire()
    except OSError as error:
        raise UserError(f"cannot create index folder {lock.index_dir}: {error.strerror}") from None


def _claim(lock: WriterLock, root: Path, wait_s: float, quiet: bool) -> bool:
    """Whether this process may write the index: True once it holds the lock (now, or after the
    writer it waited for went away); False when another process writes it and it can be read."""
    if _try_claim(lock):
        return True
    with tqdm(
        desc="waiting for the first index",
        unit=" files",
        disable=True if quiet else None,
        file=sys.stderr,
        leave=False,
    ) as bar:
        waited: list[WriterInfo] = []

        def progress(counts: StatusCounts, writer: WriterInfo) -> None:
            if not waited:
                waited.append(writer)
                print(f"smartctx: waiting for {_named(writer)} to finish its first index", file=sys.stderr)
            if bar.total != counts.files_total:
                bar.reset(total=counts.files_total)
            bar.update(counts.files_done - bar.n)

        outcome = wait_for_first_index(lock, root, wait_s, progress)
    if outcome is Wait.TOOK_OVER:
        print("smartctx: the process that was indexing has exited; indexing here", file=sys.stderr)
        return True
    if not (lock.index_dir / INDEX_FILE_NAME).exists():
        raise UserError(
            f"{_writer_name(lock.index_dir)} is about to index {root} but has not created the index yet;"
            " try again in a moment (or with a longer --wait)"
        )
    problem = check_index(lock.index_dir / INDEX_FILE_NAME, root)
    if problem is not None:
        raise UserError(
            f"{_writer_name(lock.index_dir)} writes an index this smartctx cannot read: {problem}"
        )
    if outcome is Wait.TIMED_OUT:
        print(
            f"smartctx: {_writer_name(lock.index_dir)} is still at its first index; using what it has"
            " indexed so far (--wait gives it longer)",
            file=sys.stderr,
        )
    else:
        print(
            f"smartctx: {_writer_name(lock.index_dir)} keeps this index up to date; not indexing twice",
            file=sys.stderr,
        )
    return False


def _named(writer: WriterInfo) -> str:
    return f"{writer.command} (pid {writer.pid})"


def _writer_name(index_dir: Path) -> str:
    published = read_status(index_dir)
    return "another smartctx process" if published is None else _named(published[1])


def _writer_pending(index_dir: Path) -> int:
    """Files the writer still has to index, as it last published."""
    published = read_status(index_dir)
    if published is None:
        return 0
    counts, _ = published
    return counts.pending_files


def _index_command(args: argparse.Namespace) -> int:
    root = _workspace(args.path)
    if args.publish is None:
        if args.repository is not None or args.keep is not None or args.shard is not None or args.finish:
            raise UserError("--repository, --keep, --shard and --finish go with --publish URL")
        return _index(root, args, None)
    if args.shard is not None:
        if args.finish:
            raise UserError(
                "--shard I/N publishes one part of the commit and --finish completes it from its parts:"
                " give one of them"
            )
        if args.keep is not None:
            raise UserError("--keep goes with --finish, which prunes, when a commit is published in shards")
        if args.index_dir is not None:
            raise UserError(
                "--shard indexes its part in a temporary folder of its own: leave out --index-dir"
            )
    publisher = _open_publisher(root, args)
    try:
        if args.finish:
            print(_published_line(publisher.finish(version("smartctx")), publisher))
            return EXIT_OK
        if args.shard is not None:
            return _index_shard(root, args, publisher, args.shard)
        return _index(root, args, publisher)
    finally:
        publisher.close()


def _index_shard(root: Path, args: argparse.Namespace, publisher: Publisher, shard: Shard) -> int:
    """Index the files of ``shard`` alone, in a folder of its own that goes once they are published:
    the folder's own index stays the whole folder's."""
    with tempfile.TemporaryDirectory(prefix="smartctx-shard-") as folder:
        with closing(IndexStore(root, Path(folder))) as store:
            scan = ScanConfig(max_file_bytes=args.max_file_bytes, shard=shard)
            config = IndexConfig(scan=scan, workers=args.workers, resolve=False)
            _reconcile(root, store, config, args.quiet)
            index_path = store.path
        report = publisher.publish_shard(index_path, version("smartctx"), shard)
    target = (
        f"shard {shard} of commit {report.commit[:12]} of {report.repository} to {publisher.address.display}"
    )
    if report.already_written:
        print(f"published  {target} already; nothing written")
    else:
        rows = report.rows
        print(
            f"published  {target} in {report.seconds:.1f} s{_stages(report.stage_seconds)}:"
            f" {rows['files']:,} files,"
            f" {rows['nodes']:,} definitions, {rows['refs']:,} references,"
            f" {rows['symbol_lists']:,} search terms"
        )
    waiting = shard.count - report.shards_written
    then = f"{waiting} to go, then --finish" if waiting else "now run --finish"
    print(f"{report.shards_written} of {shard.count} shards written; {then}")
    return EXIT_OK


def _index(root: Path, args: argparse.Namespace, publisher: Publisher | None) -> int:
    """Index ``root`` (or report on the index another process keeps), then publish it if asked."""
    with WriterLock(_index_dir(root, args.index_dir)) as lock:
        if publisher is not None:
            if not _try_claim(lock):
                raise UserError(
                    f"--publish indexes the commit itself, but {_writer_name(lock.index_dir)} keeps this"
                    " folder's index (and may hold unsaved editor buffers): close it, or pass --index-dir"
                    " with a folder of its own"
                )
        elif not _claim(lock, root, args.wait, args.quiet):
            with IndexSnapshot(lock.index_dir / INDEX_FILE_NAME) as snapshot:
                print(_summary(root, snapshot, lock.index_dir, None))
            return EXIT_OK
        store = IndexStore(root, lock.index_dir)
        try:
            config = IndexConfig(scan=ScanConfig(max_file_bytes=args.max_file_bytes), workers=args.workers)
            report = _reconcile(root, store, config, args.quiet)
            with store.snapshot() as snapshot:
                print(_summary(root, snapshot, lock.index_dir, report))
            if publisher is not None:
                published = publisher.publish(lock.index_dir / INDEX_FILE_NAME, version("smartctx"))
                print(_published_line(published, publisher))
        finally:
            store.close()
    return EXIT_OK


def _open_publisher(root: Path, args: argparse.Namespace) -> Publisher:
    # Imported here: only --publish needs the PostgreSQL driver (smartctx[team]).
    try:
        from smartctx.team.publisher import Publisher
    except ModuleNotFoundError as error:
        if error.name is None or not error.name.startswith("psycopg"):
            raise
        raise UserError("--publish needs the PostgreSQL driver: pip install 'smartctx[team]'") from None
    return Publisher(root, args.publish, args.repository, args.keep)


def _published_line(report: PublishReport, publisher: Publisher) -> str:
    target = f"commit {report.commit[:12]} of {report.repository} to {publisher.address.display}"
    pruned = f"; removed {len(report.pruned):,} older" if report.pruned else ""
    if report.already_published:
        return f"published  {target} already; nothing written{pruned}"
    rows = report.rows
    return (
        f"published  {target} in {report.seconds:.1f} s{_stages(report.stage_seconds)}:"
        f" {rows['files']:,} files,"
        f" {rows['nodes']:,} definitions, {rows['edges']:,} edges,"
        f" {rows['symbol_lists']:,} search terms; keeping the newest"
        f" {publisher.keep}{pruned}"
    )


def _stages(stage_seconds: Mapping[str, float]) -> str:
    """`` (write 12.0 s, vacuum 3.1 s)``: where a publish's time went."""
    parts = [f"{stage} {seconds:.1f} s" for stage, seconds in stage_seconds.items()]
    return f" ({', '.join(parts)})" if parts else ""


def _context_command(args: argparse.Namespace) -> int:
    task = sys.stdin.read() if args.task == "-" else args.task
    if not task.strip():
        raise UserError("the task is empty; describe what you want to do (or pass - to read it from stdin)")
    try:
        # An option the command line has no flag for (tokenModel) stays unset.
        options = ContextOptions.from_values(
            {option.field: vars(args).get(option.field) for option in CONTEXT_OPTIONS}
        )
    except InvalidRequestError as error:
        raise UserError(str(error)) from None
    root = _workspace(args.root)
    focus = _focus(root, args.open, args.recent)
    request = ContextRequest(task, options.scaled(), focus)
    history = GitHistory(root) if options.include_prs else None
    if args.base is not None:
        pack = _context_from_base(root, args, request, history)
        if pack is not None:
            return _print_pack(pack, options, args.format)
    elif args.repository is not None:
        raise UserError("--repository goes with --base URL")
    with WriterLock(_index_dir(root, args.index_dir)) as lock:
        store: IndexStore | None = None
        pending = 0
        if _claim(lock, root, args.wait, args.quiet):
            store = IndexStore(root, lock.index_dir)
        try:
            if store is not None:
                _reconcile(root, store, IndexConfig(), quiet=args.quiet)
            else:
                pending = _writer_pending(lock.index_dir)
            with IndexSnapshot(lock.index_dir / INDEX_FILE_NAME) as snapshot:
                pack = build_context(
                    request,
                    snapshot,
                    TokenCounter(options.tokenizer),
                    WorkspaceSources(root),
                    history=history,
                    pending_files=pending,
                )
        finally:
            if store is not None:
                store.close()
    return _print_pack(pack, options, args.format)


def _context_from_base(
    root: Path, args: argparse.Namespace, request: ContextRequest, history: GitHistory | None
) -> ContextPack | None:
    """The pack from the team's base, or None (having said why on stderr) when the local index must
    answer."""
    # Imported here: only --base needs the PostgreSQL driver (smartctx[team]).
    try:
        from smartctx.team.reading import open_base
    except ModuleNotFoundError as error:
        if error.name is None or not error.name.startswith("psycopg"):
            raise
        raise UserError("--base needs the PostgreSQL driver: pip install 'smartctx[team]'") from None
    reading = open_base(root, args.base, args.repository, is_source)
    try:
        if not reading.answers or reading.choice is None:
            print(f"smartctx: {reading.fallback}", file=sys.stderr)
            return None
        with ExitStack() as stack:
            overlay_index = None
            if reading.choice.local_files:
                # The files that differ from the base, indexed alone: the base holds the rest.
                folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="smartctx-overlay-")))
                store = stack.enter_context(closing(IndexStore(root, folder)))
                Indexer(root, store, IndexConfig()).update_paths(reading.choice.changed, reconcile_from=None)
                overlay_index = store.path
            try:
                reader = reading.reader(overlay_index)
                stack.callback(reader.close)
                pack = build_context(
                    request,
                    reader,
                    TokenCounter(request.options.tokenizer),
                    WorkspaceSources(root),
                    history=history,
                )
            except ReaderUnavailableError as error:
                # The base failed while answering (its server went away, a damaged row).
                print(f"smartctx: {error}; answering from the local index", file=sys.stderr)
                return None
        print(f"smartctx: answered from {reading.choice.stamp()}", file=sys.stderr)
        return pack
    finally:
        reading.close()


def _print_pack(pack: ContextPack, options: ContextOptions, output_format: str) -> int:
    if output_format == "json":
        print(json.dumps(redact_tree(pack_to_wire(pack)), indent=2, ensure_ascii=False))
    else:
        print(redact(pack.text)[0], end="")
        trimmed = " (trimmed to fit)" if pack.trimmed else ""
        scaled = (
            f" (a budget of {options.budget_tokens:,} at {pack.token_scale:g} per token)"
            if pack.token_scale != 1
            else ""
        )
        print(
            f"smartctx: {len(pack.bodies)} bodies, {len(pack.summaries)} summaries,"
            f" {pack.tokens_used:,}/{pack.budget_tokens:,} {pack.tokenizer} tokens{scaled}{trimmed}",
            file=sys.stderr,
        )
    return EXIT_OK


def _focus(root: Path, opened: list[str], edited: list[str]) -> Focus:
    """``--open`` and ``--recent`` as a focus: the first open file is the active one, the others are
    visible; a recent edit is as old as the file's modification time says."""
    for option, files in (("--open", opened), ("--recent", edited)):
        if len(files) > MAX_FOCUS_FILES:
            raise UserError(f"{option} takes at most {MAX_FOCUS_FILES} files, got {len(files)}")
    open_paths = [_focus_path(root, text, "--open") for text in opened]
    now = time.time()
    edits = []
    for text in edited:
        path = _focus_path(root, text, "--recent")
        edits.append(RecentEdit(path, max(0.0, now - (root / path).stat().st_mtime)))
    return Focus(
        active_path=open_paths[0] if open_paths else None,
        visible_paths=tuple(open_paths[1:]),
        recent_edits=tuple(sorted(edits, key=lambda edit: edit.age_s)),
    )


def _focus_path(root: Path, text: str, option: str) -> str:
    """A file named on the command line, relative to the current folder (or else to ``--root``), as
    a workspace-relative POSIX path."""
    given = Path(text).expanduser()
    if not given.is_absolute():
        given = given if given.exists() else root / given
    path = given.resolve()
    if not path.is_relative_to(root):
        raise UserError(f"{option} {text}: not inside the workspace folder {root}")
    if not path.is_file():
        raise UserError(f"{option} {text}: no such file in {root}")
    relative = path.relative_to(root).as_posix()
    if not is_decodable(relative):
        raise UserError(
            f"{option} {printable_path(text)}: its name is not UTF-8, so it is not indexed"
            " (rename it to index it)"
        )
    return relative


def _summary(root: Path, snapshot: IndexSnapshot, index_dir: Path, report: IndexReport | None) -> str:
    """What the index holds; with ``report``, what this run did, else who keeps the index."""
    stats = snapshot.stats()
    languages = ", ".join(f"{language} {count:,}" for language, count in stats.files_by_language.items())
    files = f"  files    {stats.files:,} ({languages or 'none'})"
    symbols = (
        f"  symbols  {stats.nodes:,}   edges {stats.edges:,}   references {stats.references:,}"
        f" ({stats.unresolved_references:,} unresolved)"
    )
    index = f"  index    {index_dir / INDEX_FILE_NAME} ({index_size_bytes(index_dir) / 1e6:.1f} MB)"
    if report is None:
        lines = [f"{root}: indexed by {_writer_name(index_dir)}, which keeps it up to date", files, symbols]
    else:
        skipped = ", ".join(f"{reason} {count:,}" for reason, count in sorted(report.skipped.items()))
        lines = [
            f"indexed {root} in {report.seconds:.1f} s",
            files,
            f"  changes  {report.files_parsed:,} parsed, {report.files_unchanged:,} unchanged,"
            f" {report.files_deleted:,} removed",
            symbols,
            f"  skipped  {skipped or 'none'}",
        ]
    names = _undecodable_line(undecodable_names(snapshot.meta(UNDECODABLE_NAMES_KEY)))
    if names:
        lines.append(names)
    if stats.folded_definitions:
        lines.append(_folded_line(stats.folded_definitions))
    lines.append(index)
    if stats.files_with_errors:
        lines.insert(
            2, f"  note     {stats.files_with_errors:,} files had syntax errors; what parsed is indexed"
        )
    return "\n".join(lines)


def _undecodable_line(names: Sequence[str]) -> str | None:
    """The summary line for the entries not indexed because their names are not UTF-8."""
    if not names:
        return None
    shown = ", ".join(names[:NAMES_SHOWN]) + (", …" if len(names) > NAMES_SHOWN else "")
    return f"  names    {len(names):,} not UTF-8, so not indexed (rename them to index them): {shown}"


def _folded_line(count: int) -> str:
    """The summary line for the definitions folded into an ancestor (parsing/extract.py)."""
    return (
        f"  folded   {count:,} definitions nested too deep to index on their own,"
        " indexed as the text of the definitions around them"
    )


def _status_command(args: argparse.Namespace) -> int:
    root = _workspace(args.path)
    index_dir = _index_dir(root, args.index_dir)
    if not (index_dir / INDEX_FILE_NAME).exists():
        raise UserError(f"{root} has no index yet; run: smartctx index {args.path}")
    with WriterLock(index_dir) as lock:
        writing = lock.try_acquire()
        if writing:
            # Nobody writes it: opening it checks it and moves an unusable one aside.
            store = IndexStore(root, index_dir)
            store.close()
            if store.rebuilt_reason:
                raise UserError(
                    f"the index was unusable and has been reset ({store.rebuilt_reason}); run: smartctx index"
                )
        else:
            problem = check_index(index_dir / INDEX_FILE_NAME, root)
            if problem is not None:
                raise UserError(
                    f"{_writer_name(index_dir)} writes an index this smartctx cannot read: {problem}"
                )
        with IndexSnapshot(index_dir / INDEX_FILE_NAME) as snapshot:
            stats = snapshot.stats()
            last = snapshot.meta("last_indexed") or "never completed"
            names = _undecodable_line(undecodable_names(snapshot.meta(UNDECODABLE_NAMES_KEY)))
        languages = ", ".join(f"{language} {count:,}" for language, count in stats.files_by_language.items())
        print(f"{root}")
        print(f"  files    {stats.files:,} ({languages or 'none'})")
        print(f"  symbols  {stats.nodes:,}   edges {stats.edges:,}")
        print(f"  updated  {last}")
        if writing:
            pending = stats.pending_references or stats.scores_dirty
            print(f"  state    {'work pending: run smartctx index' if pending else 'ready'}")
        else:
            print(f"  state    kept up to date by {_writer_name(index_dir)}")
        if names:
            print(names)
        if stats.folded_definitions:
            print(_folded_line(stats.folded_definitions))
        print(f"  index    {index_dir / INDEX_FILE_NAME} ({index_size_bytes(index_dir) / 1e6:.1f} MB)")
    return EXIT_OK


def _serve_command(args: argparse.Namespace) -> int:
    # Imported here: the other commands never pay for loading pygls.
    from smartctx.lsp.main_loop import serve

    return serve(tcp=args.tcp, max_message_bytes=args.max_message_bytes)


def _mcp_command(args: argparse.Namespace) -> int:
    roots = [_workspace(path) for path in args.root]
    # Imported here: the other commands never pay for loading the MCP SDK.
    from smartctx.mcp.server import serve

    if args.base is None:
        if args.repository is not None or args.base_only:
            given = "--repository" if args.repository is not None else "--base-only"
            raise UserError(f"{given} goes with --base URL")
        return serve(roots, args.index_dir)
    # Imported here: only --base needs the PostgreSQL driver (smartctx[team]).
    try:
        from smartctx.team.reading import TeamBase
    except ModuleNotFoundError as error:
        if error.name is None or not error.name.startswith("psycopg"):
            raise
        raise UserError("--base needs the PostgreSQL driver: pip install 'smartctx[team]'") from None
    return serve(roots, args.index_dir, TeamBase(args.base, args.repository, is_source), args.base_only)


if __name__ == "__main__":
    sys.exit(main())
