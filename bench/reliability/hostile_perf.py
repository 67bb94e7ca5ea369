"""Indexing cost of hostile files: nested definitions and calls, long lines, a file at the size cap,
many tiny files, and whether the index shrinks when a big file goes.

Each case is generated in a fresh folder and indexed by `Indexer.reconcile` in a child process
(parsing in that process, workers=0, so one number is the whole cost). extra_mb is the child's peak
resident memory minus its resident memory just before indexing; index_mb is the index folder after
the run (the SQLite file with its WAL). The last case indexes the nested and size-cap files, deletes
them, reconciles again and reports the index size before and after. Prints one table and writes JSON.

    .venv/bin/python -m bench.reliability.hostile_perf
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import child_process
from bench.datasets import OUT_DIR
from bench.procfs import rss_mb
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.scanner import ScanConfig
from smartctx.store.index_store import IndexStore

TINY_FILES = 5_000
SINGLE_LINE_BYTES = 1_000_000


def nested_functions(root: Path, count: int) -> None:
    opening = "".join(f"function f{level}() {{\n" for level in range(count))
    closing = "}\n" * count
    (root / "nested.js").write_text(f"{opening}deepCall();\n{closing}")


def nested_calls(root: Path, count: int) -> None:
    """``count`` calls each the argument of the previous one, one bracket per line."""
    (root / "calls.js").write_text("f(\n" * count + "1" + ")\n" * count)


def single_line(root: Path) -> None:
    statement = "var a = b + c; "
    (root / "one_line.js").write_text(statement * (SINGLE_LINE_BYTES // len(statement)) + "\n")


def at_size_cap(root: Path) -> None:
    """Ordinary Python functions up to the size cap."""
    cap = ScanConfig().max_file_bytes
    parts: list[str] = []
    size = number = 0
    while True:
        part = f"def handler_{number}(request, retries=3):\n    '''Handle one request.'''\n"
        part += f"    return process(request, handler_{number // 2}, retries)\n\n\n"
        if size + len(part) > cap:
            break
        parts.append(part)
        size += len(part)
        number += 1
    (root / "big.py").write_text("".join(parts))


def tiny_files(root: Path) -> None:
    for number in range(TINY_FILES):
        folder = root / f"pkg{number // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{number}.py").write_text(f"def f{number}():\n    return g{number - 1}()\n")


CASES: dict[str, Callable[[Path], None]] = {
    "nested-5000": lambda root: nested_functions(root, 5_000),
    "nested-10000": lambda root: nested_functions(root, 10_000),
    "nested-calls-50000": lambda root: nested_calls(root, 50_000),
    "one-line-1mb": single_line,
    "at-size-cap": at_size_cap,
    "tiny-files-5000": tiny_files,
}


def _folder_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.iterdir()) / 1e6


def child_index(root: Path, index_dir: Path) -> dict[str, Any]:
    """One reconcile in this process (called in a child): time, extra memory, index size, report."""
    store = IndexStore(root, index_dir)
    before_mb = rss_mb()
    started = time.perf_counter()
    report = Indexer(root, store, IndexConfig(workers=0)).reconcile()
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    store.close()
    with sqlite3.connect(store.path) as connection:
        (longest,) = connection.execute(
            "SELECT coalesce(max(length(qualified_name)), 0) FROM nodes"
        ).fetchone()
    return {
        "seconds": seconds,
        "extra_mb": peak_mb - before_mb,
        "index_mb": _folder_mb(index_dir),
        "files_parsed": report.files_parsed,
        "skipped": dict(report.skipped),
        "longest_qualified_name": longest,
    }


def index_in_child(root: Path, index_dir: Path) -> dict[str, Any]:
    measured: dict[str, Any] = child_process.result(__file__, "--child", str(root), str(index_dir))
    return measured


def measure(name: str, generate: Callable[[Path], None]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as index_dir:
        root = Path(workspace)
        generate(root)
        input_mb = sum(path.stat().st_size for path in root.rglob("*") if path.is_file()) / 1e6
        return {"case": name, "input_mb": input_mb, **index_in_child(root, Path(index_dir))}


def measure_shrink() -> dict[str, Any]:
    """Index big files, delete them, reconcile: the index should give the space back."""
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as index_dir:
        root = Path(workspace)
        nested_functions(root, 10_000)
        at_size_cap(root)
        (root / "keep.py").write_text("def kept():\n    return 1\n")
        with_files = index_in_child(root, Path(index_dir))
        (root / "nested.js").unlink()
        (root / "big.py").unlink()
        without = index_in_child(root, Path(index_dir))
        return {
            "case": "delete-big-files",
            "index_mb_before": with_files["index_mb"],
            "index_mb_after": without["index_mb"],
            "seconds": without["seconds"],
        }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| case | input MB | seconds | extra MB | index MB | parsed | skipped | longest qualified name |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        skipped = ", ".join(f"{reason} {count}" for reason, count in row["skipped"].items()) or "-"
        lines.append(
            f"| {row['case']} | {row['input_mb']:.2f} | {row['seconds']:.2f} | {row['extra_mb']:.0f} | "
            f"{row['index_mb']:.1f} | {row['files_parsed']} | {skipped} | {row['longest_qualified_name']} |"
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child_index(Path(sys.argv[2]), Path(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", nargs="*", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--json", type=Path, default=OUT_DIR / "hostile_perf.json")
    args = parser.parse_args()
    rows = [measure(name, CASES[name]) for name in args.cases]
    print(table(rows))
    shrink = measure_shrink()
    print(
        f"\ndelete-big-files: index {shrink['index_mb_before']:.1f} MB -> {shrink['index_mb_after']:.1f} MB "
        f"({shrink['seconds']:.2f} s reconcile)"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"date": time.strftime("%Y-%m-%d"), "rows": rows, "shrink": shrink}, indent=2)
    )
    print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
