"""The ``smartctx`` command: index a workspace and report on it from a terminal.

Every failure a user can cause (a missing path, an unreadable index folder) ends in one line on
stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

from tqdm import tqdm

from smartctx.indexing.indexer import IndexConfig, Indexer, IndexReport
from smartctx.indexing.scanner import ScanConfig
from smartctx.store.database import INDEX_FILE_NAME, IndexUnavailableError
from smartctx.store.index_store import IndexStore, default_index_dir

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class UserError(Exception):
    """A problem the user can fix; its message is printed as the one line of output."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _argument_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="smartctx: %(message)s", stream=sys.stderr)
    try:
        result: int = args.handler(args)
    except UserError as error:
        print(f"smartctx: error: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except IndexUnavailableError as error:
        print(f"smartctx: error: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("smartctx: interrupted; the index keeps every batch that was committed", file=sys.stderr)
        return 130
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

    status = commands.add_parser("status", help="what the index of a workspace holds")
    _add_workspace_arguments(status)
    status.set_defaults(handler=_status_command)
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


def _workspace(path_text: str) -> Path:
    path = Path(path_text).expanduser()
    if not path.exists():
        raise UserError(f"no such folder: {path_text}")
    if not path.is_dir():
        raise UserError(f"not a folder: {path_text}")
    return path.resolve()


def _index_command(args: argparse.Namespace) -> int:
    root = _workspace(args.path)
    store = IndexStore(root, args.index_dir)
    try:
        if store.rebuilt_reason:
            print(f"smartctx: warning: rebuilding the index: {store.rebuilt_reason}", file=sys.stderr)
        config = IndexConfig(scan=ScanConfig(max_file_bytes=args.max_file_bytes), workers=args.workers)
        indexer = Indexer(root, store, config)
        with tqdm(
            desc="parsing", unit=" files", disable=True if args.quiet else None, file=sys.stderr, leave=False
        ) as bar:

            def progress(done: int, total: int) -> None:
                if bar.total != total:
                    bar.reset(total=total)
                bar.update(done - bar.n)

            report = indexer.reconcile(progress)
        store.writer.set_meta([("last_indexed", time.strftime("%Y-%m-%dT%H:%M:%S%z"))])
        print(_summary(root, store, report))
    finally:
        store.close()
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


if __name__ == "__main__":
    sys.exit(main())
