"""Indexing speed and size, side by side with the raw limit, on real repositories.

For each repository: the raw limit (walk + tree-sitter parse + tags query on one core, nothing
written), a cold `smartctx index` (fresh index folder, its own process; peak_rss_mb is the indexer
process, total_rss_mb the peak of it plus its parser workers, sampled every 50 ms), a
no-op re-run, one-file updates (a saved edit applied through the same path the language server
uses, until the change is queryable; graph scores are then recomputed once, off the save path,
and timed as scores_ms), and typing in open buffers of the largest files, parsed incrementally and,
side by side, afresh (buffer_*). CPU seconds of the raw pass and of the cold index (indexer and
workers) are written to the JSON, since they move far less than wall time on a shared machine.
Prints one table and writes JSON.

    .venv/bin/python -m bench.indexing.index_perf /path/to/django /path/to/ts-repo /path/to/c-repo
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import child_process
from bench.datasets import OUT_DIR
from bench.indexing.probes import with_probe
from bench.procfs import PeakRssSampler
from bench.stats import median_and_p95, percentile
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.scanner import ScanConfig, classify_content, scan
from smartctx.parsing.extract import SourceParser
from smartctx.parsing.languages import language_for_path
from smartctx.retrieval.file_kinds import is_test_path
from smartctx.store.index_store import IndexStore

UPDATE_SAMPLES = 40
# Typing in buffers: the largest files, a run of one-character edits in each.
BUFFER_FILES = 10
BUFFER_EDITS = 5
# A line comment opener in each language smartctx parses (test_bench_probes.py checks them all).
COMMENT_BY_LANGUAGE = {
    **{language: b"  # " for language in ("python", "ruby", "bash")},
    "lua": b" -- ",
    **{
        language: b" // "
        for language in (
            "c",
            "cpp",
            "csharp",
            "go",
            "java",
            "javascript",
            "kotlin",
            "php",
            "rust",
            "scala",
            "tsx",
            "typescript",
        )
    },
}


def raw_limit(root: Path) -> dict[str, Any]:
    """Walk, read, parse and run the tags query on every file, in this process, writing nothing."""
    started = time.perf_counter()
    cpu_started = time.process_time()
    scanned = scan(root, ScanConfig(), lambda path: language_for_path(path) is not None)
    parser = SourceParser()
    lines = files = 0
    for file in scanned.files:
        language = language_for_path(file.path)
        data = (root / file.path).read_bytes()
        if language is None or classify_content(data, file.path) is not None:
            continue
        parser.parse(data, language)
        lines += data.count(b"\n")
        files += 1
    return {
        "seconds": time.perf_counter() - started,
        "cpu_s": time.process_time() - cpu_started,
        "files": files,
        "lines": lines,
    }


def child_index(root: Path, index_dir: Path) -> dict[str, Any]:
    """Run one `smartctx index` in this process (called in a child) and report time and memory."""
    sampler = PeakRssSampler()
    sampler.start()
    own_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    store = IndexStore(root, index_dir)
    report = Indexer(root, store, IndexConfig()).reconcile()
    seconds = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    store.close()
    sampler.done.set()
    sampler.join()
    return {
        "seconds": seconds,
        "files_parsed": report.files_parsed,
        "files_total": report.files_total,
        "stages": report.stage_seconds,
        # CPU seconds of the indexer and of its (finished) parser workers: on a shared machine
        # these move far less than wall time.
        "cpu": {
            "indexer": own.ru_utime + own.ru_stime - own_before.ru_utime - own_before.ru_stime,
            "workers": workers.ru_utime + workers.ru_stime,
        },
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "total_rss_mb": sampler.peak_total_mb,
    }


def index_in_child(root: Path, index_dir: Path) -> dict[str, Any]:
    measured: dict[str, Any] = child_process.result(__file__, "--child", str(root), str(index_dir))
    return measured


def edited_files(index_path: Path) -> list[str]:
    """Files a person edits, in path order: parsed without errors (a probe appended to a broken
    file may not parse as a definition), not tests or test fixtures."""
    connection = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        clean = [path for (path,) in connection.execute("SELECT path FROM files WHERE has_errors = 0")]
    finally:
        connection.close()
    return sorted(path for path in clean if not is_test_path(path) and "fixtures/" not in path)


def one_file_updates(root: Path, index_dir: Path) -> dict[str, Any]:
    """Append a definition (bench/indexing/probes.py) to one file at a time, in whatever language, and time
    the update until the definition is in the index. CPU milliseconds are kept beside wall time:
    on a shared machine they move far less."""
    store = IndexStore(root, index_dir)
    indexer = Indexer(root, store, IndexConfig(workers=0))
    candidates = edited_files(store.path)
    step = max(1, len(candidates) // UPDATE_SAMPLES)
    chosen = candidates[::step][:UPDATE_SAMPLES]
    originals = {path: (root / path).read_bytes() for path in chosen}
    timings: list[float] = []
    cpu: list[float] = []
    try:
        for number, path in enumerate(chosen):
            marker = f"bench_marker_{number}"
            language = language_for_path(path) or ""
            (root / path).write_bytes(with_probe(language, originals[path], marker))
            started = time.perf_counter()
            cpu_started = time.process_time()
            indexer.update_paths([path], recompute_scores=False)
            cpu.append((time.process_time() - cpu_started) * 1000)
            elapsed = time.perf_counter() - started
            with store.snapshot() as snapshot:
                assert snapshot.nodes_named(marker), f"{marker} not queryable after the update of {path}"
            timings.append(elapsed * 1000)
    finally:
        for path, data in originals.items():
            (root / path).write_bytes(data)
        indexer.update_paths(list(originals), recompute_scores=False)
        started = time.perf_counter()
        store.writer.recompute_scores()
        scores_ms = (time.perf_counter() - started) * 1000
        store.close()
    return {
        "samples": len(timings),
        "p50_ms": statistics.median(timings),
        "p95_ms": percentile(timings, 0.95),
        "cpu_p50_ms": statistics.median(cpu),
        "cpu_p95_ms": percentile(cpu, 0.95),
        "scores_ms": scores_ms,
        "languages": sorted({language_for_path(path) or "" for path in chosen}),
    }


def buffer_edits(root: Path, index_dir: Path) -> dict[str, Any]:
    """Typing in an open buffer of each of the largest files: a comment at the end of a middle line
    grows by one character per update, applied through ``update_paths`` with the buffer (the path
    an editor's unsaved text takes). The same edits run twice, side by side: parsed incrementally
    from the buffer's previous tree (as the indexer does), and parsed afresh (its tree forgotten)."""
    store = IndexStore(root, index_dir)
    indexer = Indexer(root, store, IndexConfig(workers=0))
    with store.snapshot() as snapshot:
        paths = [p for p in snapshot.file_paths() if language_for_path(p) in COMMENT_BY_LANGUAGE]
    largest = sorted(paths, key=lambda p: (root / p).stat().st_size, reverse=True)[:BUFFER_FILES]
    timings: dict[str, list[float]] = {"incremental": [], "fresh": []}
    try:
        for path in largest:
            original = (root / path).read_bytes()
            lines = original.split(b"\n")
            middle = len(lines) // 2
            marker = COMMENT_BY_LANGUAGE[language_for_path(path) or ""]
            texts = [
                b"\n".join([*lines[:middle], lines[middle] + marker + b"e" * length, *lines[middle + 1 :]])
                for length in range(1, BUFFER_EDITS + 1)
            ]
            for mode in ("incremental", "fresh"):
                indexer.update_paths([], buffers={path: original}, recompute_scores=False)
                for text in texts:
                    if mode == "fresh":
                        indexer._parser.forget(path)
                    started = time.perf_counter()
                    indexer.update_paths([], buffers={path: text}, recompute_scores=False)
                    timings[mode].append((time.perf_counter() - started) * 1000)
            indexer.update_paths([path], recompute_scores=False)
    finally:
        store.close()
    return {
        mode: dict(zip(("p50_ms", "p95_ms"), median_and_p95(values), strict=True))
        for mode, values in timings.items()
    }


def measure(root: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="smartctx-bench-") as temp:
        index_dir = Path(temp) / "index"
        raw = raw_limit(root)
        cold = index_in_child(root, index_dir)
        noop = index_in_child(root, index_dir)
        size_mb = sum(p.stat().st_size for p in index_dir.iterdir()) / 1e6
        updates = one_file_updates(root, index_dir)
        buffers = buffer_edits(root, index_dir)
        shutil.rmtree(index_dir)
    return {
        "repo": root.name,
        "files": raw["files"],
        "kloc": raw["lines"] / 1000,
        "raw_s": raw["seconds"],
        "cold_s": cold["seconds"],
        "cold_vs_raw": cold["seconds"] / raw["seconds"],
        "files_per_s": raw["files"] / cold["seconds"],
        "kloc_per_s": raw["lines"] / 1000 / cold["seconds"],
        "peak_rss_mb": cold["rss_mb"],
        "total_rss_mb": cold["total_rss_mb"],
        "noop_s": noop["seconds"],
        "update_p50_ms": updates["p50_ms"],
        "update_p95_ms": updates["p95_ms"],
        "update_cpu_p50_ms": updates["cpu_p50_ms"],
        "update_cpu_p95_ms": updates["cpu_p95_ms"],
        "update_languages": updates["languages"],
        "scores_ms": updates["scores_ms"],
        "index_mb": size_mb,
        "buffer_p50_ms": buffers["incremental"]["p50_ms"],
        "buffer_p95_ms": buffers["incremental"]["p95_ms"],
        "buffer_fresh_p50_ms": buffers["fresh"]["p50_ms"],
        "buffer_fresh_p95_ms": buffers["fresh"]["p95_ms"],
        "cold_stages_s": cold["stages"],
        "cold_cpu_s": cold["cpu"],
        "raw_cpu_s": raw["cpu_s"],
    }


COLUMNS = [
    ("repo", "{}"),
    ("files", "{:,}"),
    ("kloc", "{:.0f}"),
    ("raw_s", "{:.2f}"),
    ("cold_s", "{:.2f}"),
    ("cold_vs_raw", "{:.2f}x"),
    ("files_per_s", "{:,.0f}"),
    ("kloc_per_s", "{:.0f}"),
    ("peak_rss_mb", "{:.0f}"),
    ("total_rss_mb", "{:.0f}"),
    ("noop_s", "{:.2f}"),
    ("update_p50_ms", "{:.1f}"),
    ("update_p95_ms", "{:.1f}"),
    ("update_cpu_p50_ms", "{:.1f}"),
    ("update_cpu_p95_ms", "{:.1f}"),
    ("scores_ms", "{:.0f}"),
    ("index_mb", "{:.1f}"),
    ("buffer_p50_ms", "{:.1f}"),
    ("buffer_p95_ms", "{:.1f}"),
    ("buffer_fresh_p50_ms", "{:.1f}"),
    ("buffer_fresh_p95_ms", "{:.1f}"),
]


def table(rows: list[dict[str, Any]]) -> str:
    header = "| " + " | ".join(name for name, _ in COLUMNS) + " |"
    rule = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = ["| " + " | ".join(fmt.format(row[name]) for name, fmt in COLUMNS) + " |" for row in rows]
    return "\n".join([header, rule, *body])


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child_index(Path(sys.argv[2]), Path(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, default=OUT_DIR / "index_perf.json")
    args = parser.parse_args()
    rows = [measure(repo.resolve()) for repo in args.repos]
    print(table(rows))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=2))
    print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
