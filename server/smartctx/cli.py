"""The ``smartctx`` command: index a workspace and report on it from a terminal.

Every failure a user can cause (a missing path, an unreadable index folder) ends in one line on
stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

from tqdm import tqdm

from smartctx.core.context import TOKENIZERS, ContextOptions, ContextRequest, InvalidRequestError
from smartctx.core.redact import RedactingFormatter, redact, redact_tree
from smartctx.core.tokens import TokenCounter
from smartctx.history.changes import GitHistory
from smartctx.indexing.indexer import IndexConfig, Indexer, IndexReport
from smartctx.indexing.scanner import ScanConfig
from smartctx.indexing.sources import WorkspaceSources
from smartctx.lsp.framing import DEFAULT_MAX_BODY_BYTES
from smartctx.output.pack_json import pack_to_wire
from smartctx.retrieval.pipeline import build_context
from smartctx.store.database import INDEX_FILE_NAME, IndexUnavailableError
from smartctx.store.index_store import IndexStore, default_index_dir

EXIT_OK = 0
EXIT_FAILURE = 1


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
    except (UserError, IndexUnavailableError) as error:
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
    index.set_defaults(handler=_index_command)

    context = commands.add_parser(
        "context", help="the code that matters for a task, cited, in a token budget"
    )
    context.add_argument("task", help="the task in plain words (quote it), or - to read it from stdin")
    context.add_argument("--root", default=".", help="workspace folder (default: the current folder)")
    context.add_argument(
        "--index-dir", type=Path, help="where the index lives (default: the user cache folder)"
    )
    context.add_argument(
        "--budget", type=_positive_int, help="token budget for the whole pack (default 8000)"
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
    context.add_argument("--no-blobs", action="store_true", help="signatures only, no full bodies")
    context.add_argument(
        "--include-prs", action="store_true", help="add the recent changes (PR or commit) behind each body"
    )
    context.add_argument("--prs-per-node", type=_positive_int, help="changes per body (default 3)")
    context.add_argument(
        "--pr-cutoff", metavar="DATE", help="leave out changes after this ISO 8601 date or date-time"
    )
    context.add_argument("--include-impact", action="store_true", help="add what depends on the top body")
    context.add_argument("--impact-depth", type=_positive_int, help="impact hops (default 1, max 5)")
    context.add_argument(
        "--tokenizer", choices=TOKENIZERS, help="tokenizer to count with (default o200k_base)"
    )
    context.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output format")
    context.add_argument("--quiet", action="store_true", help="no progress bar while indexing")
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
    mcp.set_defaults(handler=_mcp_command)
    return parser


def _add_workspace_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=".", help="workspace folder (default: the current folder)")
    parser.add_argument(
        "--index-dir", type=Path, help="where the index lives (default: the user cache folder, keyed by path)"
    )


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
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
    """Bring the index up to date, with a progress bar on a terminal."""
    if store.rebuilt_reason:
        print(f"smartctx: warning: rebuilding the index: {store.rebuilt_reason}", file=sys.stderr)
    indexer = Indexer(root, store, config)
    with tqdm(
        desc="parsing", unit=" files", disable=True if quiet else None, file=sys.stderr, leave=False
    ) as bar:

        def progress(done: int, total: int) -> None:
            if bar.total != total:
                bar.reset(total=total)
            bar.update(done - bar.n)

        return indexer.reconcile(progress)


def _index_command(args: argparse.Namespace) -> int:
    root = _workspace(args.path)
    store = IndexStore(root, args.index_dir)
    try:
        config = IndexConfig(scan=ScanConfig(max_file_bytes=args.max_file_bytes), workers=args.workers)
        report = _reconcile(root, store, config, args.quiet)
        print(_summary(root, store, report))
    finally:
        store.close()
    return EXIT_OK


def _context_command(args: argparse.Namespace) -> int:
    task = sys.stdin.read() if args.task == "-" else args.task
    if not task.strip():
        raise UserError("the task is empty; describe what you want to do (or pass - to read it from stdin)")
    try:
        options = ContextOptions.from_values(
            {
                "budget_tokens": args.budget,
                "max_bodies": args.max_bodies,
                "max_summaries": args.max_summaries,
                "candidate_limit": args.candidate_limit,
                "ranked_cap": args.ranked_cap,
                "hop_depth": args.hop_depth,
                "hop_frontier_cap": args.hop_frontier_cap,
                "include_blobs": False if args.no_blobs else None,
                "include_prs": True if args.include_prs else None,
                "prs_per_node": args.prs_per_node,
                "pr_cutoff": args.pr_cutoff,
                "include_impact": True if args.include_impact else None,
                "impact_depth": args.impact_depth,
                "tokenizer": args.tokenizer,
            }
        )
    except InvalidRequestError as error:
        raise UserError(str(error)) from None
    root = _workspace(args.root)
    store = IndexStore(root, args.index_dir)
    try:
        _reconcile(root, store, IndexConfig(), quiet=args.quiet)
        counter = TokenCounter(options.tokenizer)
        with store.snapshot() as snapshot:
            pack = build_context(
                ContextRequest(task, options),
                snapshot,
                counter,
                WorkspaceSources(root),
                history=GitHistory(root) if options.include_prs else None,
            )
    finally:
        store.close()
    if args.format == "json":
        print(json.dumps(redact_tree(pack_to_wire(pack)), indent=2, ensure_ascii=False))
    else:
        print(redact(pack.text)[0], end="")
        trimmed = " (trimmed to fit)" if pack.trimmed else ""
        print(
            f"smartctx: {len(pack.bodies)} bodies, {len(pack.summaries)} summaries,"
            f" {pack.tokens_used:,}/{pack.budget_tokens:,} {pack.tokenizer} tokens{trimmed}",
            file=sys.stderr,
        )
    return EXIT_OK


def _summary(root: Path, store: IndexStore, report: IndexReport) -> str:
    with store.snapshot() as snapshot:
        stats = snapshot.stats()
    languages = ", ".join(f"{language} {count:,}" for language, count in stats.files_by_language.items())
    skipped = ", ".join(f"{reason} {count:,}" for reason, count in sorted(report.skipped.items())) or "none"
    lines = [
        f"indexed {root} in {report.seconds:.1f} s",
        f"  files    {stats.files:,} ({languages or 'none'})",
        f"  changes  {report.files_parsed:,} parsed, {report.files_unchanged:,} unchanged,"
        f" {report.files_deleted:,} removed",
        f"  symbols  {stats.nodes:,}   edges {stats.edges:,}   references {stats.references:,}"
        f" ({stats.unresolved_references:,} unresolved)",
        f"  skipped  {skipped}",
        f"  index    {store.path} ({store.size_bytes() / 1e6:.1f} MB)",
    ]
    if stats.files_with_errors:
        lines.insert(
            2, f"  note     {stats.files_with_errors:,} files had syntax errors; what parsed is indexed"
        )
    return "\n".join(lines)


def _status_command(args: argparse.Namespace) -> int:
    root = _workspace(args.path)
    index_dir = args.index_dir if args.index_dir is not None else default_index_dir(root)
    if not (index_dir / INDEX_FILE_NAME).exists():
        raise UserError(f"{root} has no index yet; run: smartctx index {args.path}")
    store = IndexStore(root, args.index_dir)
    try:
        if store.rebuilt_reason:
            raise UserError(
                f"the index was unusable and has been reset ({store.rebuilt_reason}); run: smartctx index"
            )
        with store.snapshot() as snapshot:
            stats = snapshot.stats()
            last = snapshot.meta("last_indexed") or "never completed"
        languages = ", ".join(f"{language} {count:,}" for language, count in stats.files_by_language.items())
        print(f"{root}")
        print(f"  files    {stats.files:,} ({languages or 'none'})")
        print(f"  symbols  {stats.nodes:,}   edges {stats.edges:,}")
        print(f"  updated  {last}")
        pending = stats.pending_references or stats.scores_dirty
        print(f"  state    {'work pending: run smartctx index' if pending else 'ready'}")
        print(f"  index    {store.path} ({store.size_bytes() / 1e6:.1f} MB)")
    finally:
        store.close()
    return EXIT_OK


def _serve_command(args: argparse.Namespace) -> int:
    # Imported here: the other commands never pay for loading pygls.
    from smartctx.lsp.server import serve

    return serve(tcp=args.tcp, max_message_bytes=args.max_message_bytes)


def _mcp_command(args: argparse.Namespace) -> int:
    roots = [_workspace(path) for path in args.root]
    # Imported here: the other commands never pay for loading the MCP SDK.
    from smartctx.mcp.server import serve

    return serve(roots, args.index_dir)


if __name__ == "__main__":
    sys.exit(main())
