"""A pack from a published base with a local overlay against the same pack from a local index of the
branch, side by side (issue 26: base + overlay p95 at most twice the local index's).

One run, on a throw-away PostgreSQL (tests/postgres_server.py): a copy of ROOT (a git checkout) and
its index (a copy of ``--index-dir``, brought up to date) are published as one commit, and the base's
packs are compared with the local index's on the unchanged tree (round one only: which packs the
publish's redaction alone changes). Then, for each ``--changed K``, the copy gets a branch made from
the base: a widely used function renamed in its file and at its uses (about half of the K files), a
function added to a fifth of them, a function body edited in the rest, two new files that call base
definitions and the renamed one, and one file deleted (:func:`make_branch`, seeded), all in the
Python package ``--package`` (django's by default; in a monorepo of ``indexing/monorepo.py`` one
repository's, e.g. ``networkx+networkx/networkx``). Measured:

* **the overlay's build**, ``--build-rounds`` times: the changed and added files indexed alone
  (``Indexer.update_paths(…, reconcile_from=None)``, as ``smartctx context --base`` does) and
  ``read_overlay``; then once under tracemalloc (the memory the overlay keeps, and its peak) and once
  with each SQL query of ``read_overlay`` timed; and, to compare, bringing a copy of the base's
  index up to date with the branch (one reconcile), the local index the packs are compared with;
* **queries**: every SWE-bench Lite problem statement of ``--repo`` (or, with ``--commit-tasks``, the
  commit tasks of the tree's repositories, taking turns; ``--tasks N``: the first N), ``--rounds``
  times each way,
  interleaved: over the local index of the branch (one snapshot pool) and over ``MergedReader``
  (a ``BaseSnapshot`` hiding what the overlay hides, one ``CommitFacts``, the overlay read once, as
  a server would keep it), wall and thread-CPU p50/p95, their ratios, and the stages;
* **packs**: the same items in the same order with the same text (exact, scores aside), and the
  same items with the same text in any order (equal but for PageRank, which an overlay estimates);
  for the packs that differ, which items and whether the base alone (redaction) already differed;
  against the reconciled local index and, for the K of ``--fresh-for`` (every K by default), a
  fresh index of the branch;
* **memory** (``--memory-tasks N``): the first N tasks answered by each reader in a process of its
  own (``answer_alone.py``; the merged one builds its overlay there), each process's peak RSS.

    PYTHONPATH=server .venv/bin/python -m bench.latency.overlay_perf /work/benchrepos/qp-django \\
        --index-dir /work/benchrepos/qp-index --changed 10 100
    PYTHONPATH=server .venv/bin/python -m bench.latency.overlay_perf /work/benchrepos/mono/tree \
        --index-dir /work/benchrepos/mono/index --commit-tasks /work/benchrepos/train-out/train_tasks.jsonl \
        --package networkx+networkx/networkx --tasks 80 --changed 10 100 --fresh-for 10 --memory-tasks 40
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import gc
import io
import json
import pstats
import random
import re
import shutil
import statistics
import tempfile
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import child_process
from bench.datasets import OUT_DIR, SWE_LITE, task_statements
from bench.latency import answer_alone
from bench.latency.base_perf import _wire, _without_scores, published
from bench.latency.pg_search import uptime
from bench.repository import git, indexed_store
from bench.stats import median_and_p95, percentile
from smartctx.core.context import ContextOptions, ContextPack, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.indexing.indexer import IndexConfig, Indexer
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.store.database import INDEX_FILE_NAME
from smartctx.store.index_store import IndexStore
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import SnapshotPool
from smartctx.team import overlay as overlay_module
from smartctx.team.base import PublishedCommit
from smartctx.team.base_snapshot import BaseSnapshot, CommitFacts
from smartctx.team.database import READ_APPLICATION, connect, parse_url
from smartctx.team.merged import MergedReader, PreparedOverlay
from smartctx.team.overlay import Overlay, read_overlay

# The lists of a pack whose items are compared by id (a file map's by path).
ITEM_LISTS = ("bodies", "summaries", "fileMap")
# The package a branch changes unless told: django's, at the top of the tree.
DEFAULT_PACKAGE = "django"
# The name a rename gives: the old one with this ending.
RENAMED_SUFFIX = "_on_branch"
# Packs of each kind of difference printed with their items.
SHOWN_DIFFERENCES = 4


@dataclass(frozen=True)
class BranchSite:
    """Where a branch is made: a Python package of the tree (``django``, or in a monorepo of
    ``indexing/monorepo.py`` one repository's, ``networkx+networkx/networkx``) and the folder its
    modules are imported from (the package's parent: ``""``, ``networkx+networkx``)."""

    import_root: str
    package: str

    @classmethod
    def of(cls, package_path: str) -> BranchSite:
        parent, _, package = package_path.strip("/").rpartition("/")
        return cls(parent, package)

    def in_tree(self, path: str) -> str:
        """A path relative to the import root, as the tree (and ``BaseChoice``) names it."""
        return f"{self.import_root}/{path}" if self.import_root else path

    def added_files(self, folder: Path) -> tuple[str, str]:
        """The helpers module and its test that a branch adds, relative to the import root ``folder``:
        beside the package's utilities and their tests where it has them (django's), else in the
        package and a ``tests`` folder beside it."""
        package = self.package
        helpers_folder = f"{package}/utils" if (folder / package / "utils").is_dir() else package
        tests_folder = "tests/utils_tests" if (folder / "tests" / "utils_tests").is_dir() else "tests"
        return f"{helpers_folder}/branch_helpers.py", f"{tests_folder}/test_branch_helpers.py"


@dataclass
class Branch:
    """What make_branch changed: the files as ``BaseChoice`` names them, and how."""

    renamed: str
    renamed_files: list[str]
    added_functions: list[str]
    edited_bodies: list[str]
    added: list[str]
    deleted: list[str]

    @property
    def changed(self) -> list[str]:
        """Files whose content is not the base's, or that the base lacks (``BaseChoice.changed``)."""
        return sorted({*self.renamed_files, *self.added_functions, *self.edited_bodies, *self.added})

    @property
    def edited(self) -> int:
        return len({*self.renamed_files, *self.added_functions, *self.edited_bodies})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="a git checkout (copied: never changed)")
    parser.add_argument("--index-dir", type=Path, help="an index of root to copy (else one is built)")
    parser.add_argument(
        "--changed", type=int, nargs="+", default=[10], help="existing files each branch changes"
    )
    parser.add_argument(
        "--repo", default="django/django", help="whose SWE-bench Lite statements are the tasks"
    )
    parser.add_argument("--data", type=Path, default=SWE_LITE)
    parser.add_argument(
        "--commit-tasks",
        type=Path,
        help="the tasks of this commit-task JSONL whose repositories are folders of root, in turns",
    )
    parser.add_argument(
        "--package",
        default=DEFAULT_PACKAGE,
        help="the Python package, relative to root, that the branches change (its parent is its import root)",
    )
    parser.add_argument(
        "--fresh-for",
        type=int,
        nargs="*",
        help="the K whose packs are also compared with a fresh index of the branch (default: every"
        " --changed; none when given empty): a cold index of the whole tree, a quarter of an hour on the"
        " monorepo",
    )
    parser.add_argument(
        "--memory-tasks",
        type=int,
        default=0,
        help="answer this many tasks in a process of its own from each reader, for its peak memory",
    )
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--build-rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument(
        "--sql-profile", type=int, default=20, help="tasks whose SQL is timed, merged against the base alone"
    )
    parser.add_argument("--tasks", type=int, help="only the first N tasks (a quick look)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()), help="where the copies go")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "overlay_perf.json")
    args = parser.parse_args()
    root = args.root.resolve()
    tasks = task_statements(root, args.repo, args.data, args.commit_tasks)[: args.tasks]
    load_before = uptime()
    results: dict[str, Any] = {}
    args.work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="smartctx-overlay-perf-", dir=args.work) as temp:
        tree = Path(temp) / "tree"
        shutil.copytree(root, tree, symlinks=True)
        base_sha = git(tree, "rev-parse", "HEAD").strip()
        base_index = Path(temp) / "base-index"
        with published(tree, base_index, args.index_dir) as (server, commit):
            baseline = base_differences(tree, base_index / INDEX_FILE_NAME, server.url(), commit, tasks, args)
            print(f"the base alone against the local index: {len(baseline)} of {len(tasks)} packs differ")
            results["base_differs"] = sorted(baseline)
            for count in args.changed:
                git(tree, "checkout", "-q", "-f", base_sha)
                git(tree, "clean", "-fdq")
                branch = make_branch(tree, BranchSite.of(args.package), count, args.seed)
                git(tree, "checkout", "-q", "-b", f"overlay-{count}")
                git(tree, "add", "-A")
                git(
                    tree, "-c", "user.name=bench", "-c", "user.email=bench@invalid", "commit", "-qm", "branch"
                )
                print(
                    f"\nK={count}: {branch.edited} files edited ({len(branch.renamed_files)} with"
                    f" {branch.renamed} renamed, {len(branch.added_functions)} with a function added,"
                    f" {len(branch.edited_bodies)} with a body edited), {len(branch.added)} added,"
                    f" {len(branch.deleted)} deleted ({branch.deleted[0]})"
                )
                results[str(count)] = run_branch(
                    tree, base_index, Path(temp) / f"local-{count}", server.url(), commit, branch,
                    tasks, args, fresh=args.fresh_for is None or count in args.fresh_for,
                )  # fmt: skip
                results[str(count)]["differ_in_base"] = sorted(baseline)
                report(results[str(count)], count, baseline)
    print(f"load: before {load_before}; after {uptime()}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "repo": args.repo,
                "load_before": load_before,
                "load_after": uptime(),
                "results": results,
            },
            indent=1,
        )
    )
    print(f"written: {args.json}")


# The branch


def make_branch(tree: Path, site: BranchSite, count: int, seed: int) -> Branch:
    """Change ``count`` existing source files of ``site``'s package in ``tree`` (about half by
    renaming one widely used function, a fifth by adding a function, the rest by editing a
    function's body), add two files and delete one, all under the site's import root (one
    repository of a monorepo). Every file changed still parses."""
    chooser = random.Random(seed * 1000 + count)
    folder = tree / site.import_root
    sources = sorted(
        str(path.relative_to(folder))
        for path in folder.glob(f"{site.package}/**/*.py")
        if not any(part in ("locale", "migrations") for part in path.parts)
    )
    texts = {path: (folder / path).read_text() for path in sources}
    everything = {
        str(path.relative_to(folder)): path.read_text(errors="replace") for path in folder.rglob("*.py")
    }
    renamed, renamed_files = _rename_target(everything, site.package, max(2, count // 2))
    for path in renamed_files:
        text = (folder / path).read_text()
        (folder / path).write_text(re.sub(rf"\b{renamed}\b", renamed + RENAMED_SUFFIX, text))
    rest = [path for path in sources if path not in renamed_files and texts[path].strip()]
    chooser.shuffle(rest)
    # A module no other file names (an obsolete one): deleting a module every file imports is a
    # refactoring of its own.
    deleted = [next(path for path in rest if _unnamed(path, everything))]
    rest.remove(deleted[0])
    (folder / deleted[0]).unlink()
    added_functions: list[str] = []
    edited_bodies: list[str] = []
    want_added = max(1, count // 5)
    want_edited = count - len(renamed_files) - want_added
    for path in rest:
        if len(added_functions) < want_added:
            text = _with_function(texts[path], len(added_functions))
            added_functions.append(path)
        elif len(edited_bodies) < want_edited:
            edited = _with_body_edited(texts[path])
            if edited is None:
                continue
            text = edited
            edited_bodies.append(path)
        else:
            break
        (folder / path).write_text(text)
    added = site.added_files(folder)
    helpers, test = added
    (folder / helpers).write_text(
        _HELPERS.format(renamed=renamed + RENAMED_SUFFIX, module=_module(renamed_files[0]))
    )
    # django's own test case where the branch is django's (its recorded branches), else unittest's.
    case_module, case = ("django.test", "SimpleTestCase")
    if site.package != "django":
        case_module, case = "unittest", "TestCase"
    (folder / test).parent.mkdir(parents=True, exist_ok=True)
    (folder / test).write_text(
        _HELPERS_TEST.format(case_module=case_module, case=case, helpers=_module(helpers))
    )
    for path in [*renamed_files, *added_functions, *edited_bodies, *added]:
        ast.parse((folder / path).read_text(), path)
    return Branch(
        renamed,
        [site.in_tree(path) for path in renamed_files],
        [site.in_tree(path) for path in added_functions],
        [site.in_tree(path) for path in edited_bodies],
        [site.in_tree(path) for path in added],
        [site.in_tree(path) for path in deleted],
    )


def _unnamed(path: str, everything: dict[str, str]) -> bool:
    module = _module(path)
    return not path.endswith("__init__.py") and not any(
        module in text for other, text in everything.items() if other != path
    )


def _module(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _rename_target(everything: dict[str, str], package: str, files: int) -> tuple[str, list[str]]:
    """A top-level function of ``package`` defined once among ``everything``'s files whose name (a
    whole word) is in about ``files`` files, its own first: the name and those files."""
    defined: Counter[str] = Counter()
    where: dict[str, str] = {}
    for path, text in everything.items():
        for name in re.findall(r"^\s*def (\w+)\(", text, re.MULTILINE):
            defined[name] += 1
        if path.startswith(f"{package}/"):
            for name in re.findall(r"^def ([a-z]\w*_\w+)\(", text, re.MULTILINE):
                where.setdefault(name, path)
    candidates = sorted(name for name in where if defined[name] == 1 and len(name) >= 10)
    holding: dict[str, list[str]] = defaultdict(list)
    wanted = set(candidates)
    for path, text in sorted(everything.items()):
        for name in wanted.intersection(re.findall(r"\w+", text)):
            holding[name].append(path)
    name = min(candidates, key=lambda name: (abs(len(holding[name]) - files), name))
    own = where[name]
    return name, [own, *sorted(path for path in holding[name] if path != own)]


def _with_function(text: str, number: int) -> str:
    """The file with a new top-level function at its end that calls one of its own functions."""
    tree = ast.parse(text)
    functions = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    call = f"{functions[0]}(*args, **kwargs)" if functions else "dict(*args, **kwargs)"
    return (
        text.rstrip("\n")
        + f"\n\n\ndef branch_helper_{number}(*args, **kwargs):\n"
        + '    """Added on the branch: what the callers of this module now share."""\n'
        + f"    result = {call}\n    return result\n"
    )


def _with_body_edited(text: str) -> str | None:
    """The file with the first one-line ``return EXPR`` of a function split into an assignment, a
    check and the return, or None when no function has one."""
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for statement in ast.walk(node):
            if (
                isinstance(statement, ast.Return)
                and statement.value is not None
                and statement.lineno == statement.end_lineno
            ):
                line = lines[statement.lineno - 1]
                indent = line[: len(line) - len(line.lstrip())]
                expression = ast.get_source_segment(text, statement.value)
                if expression is None or line.strip() != f"return {expression}":
                    continue
                lines[statement.lineno - 1] = (
                    f"{indent}result = {expression}\n"
                    f"{indent}if result is None:\n{indent}    return result\n"
                    f"{indent}return result\n"
                )
                edited = "".join(lines)
                ast.parse(edited)
                return edited
    return None


_HELPERS = '''"""Helpers the branch adds: one place for what several modules repeat."""

from {module} import {renamed}


def branch_shared(*args, **kwargs):
    """Call the renamed function, the way its callers do."""
    return {renamed}(*args, **kwargs)


def branch_collect(values):
    """Collect the values the branch's callers pass, in order, without repeats."""
    seen = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen
'''

_HELPERS_TEST = """from {case_module} import {case}
from {helpers} import branch_collect


class BranchCollectTests({case}):
    def test_collect_keeps_order(self):
        self.assertEqual(branch_collect([3, 1, 3, 2]), [3, 1, 2])
"""


# Building the overlay


def build_overlay(
    tree: Path, url: str, commit_id: int, branch: Branch, folder: Path
) -> tuple[float, float, Overlay]:
    """Index the branch's files alone into ``folder`` and read the overlay: the seconds of each."""
    connection = connect(parse_url(url, READ_APPLICATION))
    try:
        began = time.perf_counter()
        with closing(IndexStore(tree, folder)) as store:
            Indexer(tree, store, IndexConfig()).update_paths(branch.changed, reconcile_from=None)
            indexed = time.perf_counter()
            overlay = read_overlay(connection, commit_id, store.path, [*branch.changed, *branch.deleted])
            read = time.perf_counter()
        return indexed - began, read - indexed, overlay
    finally:
        connection.close()


@contextmanager
def timed_queries() -> Iterator[dict[str, list[float]]]:
    """Every SQL query of read_overlay timed, by its first words."""
    times: dict[str, list[float]] = defaultdict(list)
    original = overlay_module._BaseRows._rows

    def rows(self: Any, query: str, *parameters: Any) -> list[tuple[Any, ...]]:
        began = time.perf_counter()
        try:
            return original(self, query, *parameters)
        finally:
            times[" ".join(query.split())[:90]].append((time.perf_counter() - began) * 1000)

    overlay_module._BaseRows._rows = rows
    try:
        yield times
    finally:
        overlay_module._BaseRows._rows = original


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def run_branch(
    tree: Path,
    base_index: Path,
    local_index: Path,
    url: str,
    commit: PublishedCommit,
    branch: Branch,
    tasks: list[str],
    args: argparse.Namespace,
    *,
    fresh: bool,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="overlay-", dir=local_index.parent) as folder:
        builds = []
        for number in range(args.build_rounds):
            index_s, read_s, overlay = build_overlay(
                tree, url, commit.commit_id, branch, Path(folder) / f"build-{number}"
            )
            builds.append({"index_s": index_s, "read_s": read_s})
            print(f"  overlay build {number}: index {index_s:.2f} s, read_overlay {read_s:.2f} s")
        del overlay
        gc.collect()
        rss_before = _rss_mb()
        tracemalloc.start()
        _, _, overlay = build_overlay(tree, url, commit.commit_id, branch, Path(folder) / "memory")
        gc.collect()
        kept, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        memory = {"kept_mb": kept / 2**20, "peak_mb": peak / 2**20, "rss_delta_mb": _rss_mb() - rss_before}
        print(
            f"  overlay memory: kept {memory['kept_mb']:.1f} MB, peak {memory['peak_mb']:.1f} MB"
            f" (tracemalloc); RSS +{memory['rss_delta_mb']:.1f} MB"
        )
        with timed_queries() as times:
            profile = cProfile.Profile()
            profile.enable()
            build_overlay(tree, url, commit.commit_id, branch, Path(folder) / "profiled")
            profile.disable()
        queries = sorted(
            ({"query": query, "calls": len(ms), "ms": sum(ms)} for query, ms in times.items()),
            key=lambda row: -float(row["ms"]),
        )
        listing = io.StringIO()
        pstats.Stats(profile, stream=listing).sort_stats("cumulative").print_stats(25)
        shape = {
            "files": len(overlay.files),
            "nodes": len(overlay.nodes),
            "edges": len(overlay.edges),
            "replaced_refs": len(overlay.replaced_refs),
            "shadowed_nodes": len(overlay.shadowed_nodes),
        }
    shutil.copytree(base_index, local_index)
    began = time.perf_counter()
    indexed_store(tree, local_index).close()
    reconcile_s = time.perf_counter() - began
    print(f"  overlay: {shape}; the local index brought up to date with the branch in {reconcile_s:.1f} s")
    rows, packs = measure(tree, local_index / INDEX_FILE_NAME, url, commit, overlay, tasks, args)
    processes = (
        processes_memory(tree, local_index / INDEX_FILE_NAME, url, commit, branch, tasks, args)
        if args.memory_tasks
        else {}
    )
    shutil.rmtree(local_index)
    against_fresh: dict[str, list[dict[str, Any]]] = {}
    if fresh:
        # A fresh index of the branch: what a reconciled index answers but for tantivy's statistics,
        # which count the documents a reconcile deleted until their segments merge.
        fresh_index = local_index.with_name(local_index.name + "-fresh")
        indexed_store(tree, fresh_index).close()
        fresh_ones = fresh_packs(tree, fresh_index / INDEX_FILE_NAME, tasks, args)
        shutil.rmtree(fresh_index)
        against_fresh = {
            name: [
                compare(pack, fresh_pack, overlay)
                for pack, fresh_pack in zip(packs[name], fresh_ones, strict=True)
            ]
            for name in ("merged", "local")
        }
    statements = sql_profile(tree, url, commit, overlay, tasks[: args.sql_profile], args)
    return {
        "branch": {
            "renamed": branch.renamed,
            "renamed_files": branch.renamed_files,
            "added_functions": branch.added_functions,
            "edited_bodies": branch.edited_bodies,
            "added": branch.added,
            "deleted": branch.deleted,
        },
        "builds": builds,
        "memory": memory,
        "overlay": shape,
        "read_overlay_queries": queries,
        "read_overlay_profile": listing.getvalue(),
        "local_reconcile_s": reconcile_s,
        "sql_profile": statements,
        "against_fresh": against_fresh,
        "processes": processes,
        "rows": rows,
    }


def processes_memory(
    tree: Path,
    index_path: Path,
    url: str,
    commit: PublishedCommit,
    branch: Branch,
    tasks: list[str],
    args: argparse.Namespace,
) -> dict[str, dict[str, Any]]:
    """The first ``--memory-tasks`` tasks answered in a process of its own by each reader (the local
    index; the base with the branch's overlay, built in that process): each process's resident
    memory after its imports, its peak and at the end. Here both readers share one process, whose
    memory says nothing of either alone."""
    found: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="answer-alone-") as folder:
        for kind in ("local", "merged"):
            spec: answer_alone.Spec = {
                "kind": kind,
                "tree": str(tree),
                "tasks": tasks[: args.memory_tasks],
                "budget": args.budget,
                "index": str(index_path),
                "url": url,
                "commit_id": commit.commit_id,
                "sha": commit.sha,
                "completed_at": commit.completed_at.isoformat(),
                "changed": branch.changed,
                "deleted": branch.deleted,
            }
            path = Path(folder) / f"{kind}.json"
            path.write_text(json.dumps(spec))
            found[kind] = child_process.result(answer_alone.__file__, str(path))
            print(
                f"  a process answering {len(spec['tasks'])} tasks from the {kind} reader alone: RSS"
                f" {found[kind]['start_mb']:.0f} MB after imports, peak {found[kind]['peak_mb']:.0f} MB,"
                f" {found[kind]['end_mb']:.0f} MB at the end ({found[kind]['seconds']:.1f} s)"
            )
    return found


# Queries and packs


def timed(
    task: str, open_reader: Callable[[], Any], options: ContextOptions, counter: TokenCounter, sources: Any
) -> tuple[float, float, ContextPack]:
    began, began_cpu = time.perf_counter(), time.thread_time()
    with open_reader() as reader:
        pack = build_context(ContextRequest(task, options), reader, counter, sources)
    return (time.perf_counter() - began) * 1000, (time.thread_time() - began_cpu) * 1000, pack


def base_differences(
    tree: Path,
    index_path: Path,
    url: str,
    commit: PublishedCommit,
    tasks: list[str],
    args: argparse.Namespace,
) -> set[int]:
    """The tasks whose pack from the base alone differs from the local index's (same tree)."""
    connection = connect(parse_url(url, READ_APPLICATION))
    counter, sources = TokenCounter(), WorkspaceSources(tree)
    options = ContextOptions(budget_tokens=args.budget)
    facts = CommitFacts()
    differ = set()
    with closing(SnapshotPool()) as pool:
        for number, task in enumerate(tasks):
            local = timed(task, lambda: pool.snapshot(index_path), options, counter, sources)[2]
            base = timed(task, lambda: BaseSnapshot(connection, commit, facts), options, counter, sources)[2]
            if _without_scores(_wire(local)) != _without_scores(_wire(base)):
                differ.add(number)
    connection.close()
    return differ


def measure(
    tree: Path,
    index_path: Path,
    url: str,
    commit: PublishedCommit,
    overlay: Overlay,
    tasks: list[str],
    args: argparse.Namespace,
) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    connection = connect(parse_url(url, READ_APPLICATION))
    counter = TokenCounter()
    sources = WorkspaceSources(tree)
    options = ContextOptions(budget_tokens=args.budget)
    pool = SnapshotPool()
    facts = CommitFacts()
    hidden = overlay.hides()
    prepared = PreparedOverlay(overlay)

    def local() -> IndexReader:
        return pool.snapshot(index_path)

    def merged() -> IndexReader:
        return MergedReader(BaseSnapshot(connection, commit, facts, hidden=hidden), prepared)

    rows: list[dict[str, Any]] = []
    packs: dict[str, list[Any]] = {"merged": [], "local": []}
    timed(tasks[0], local, options, counter, sources)
    timed(tasks[0], merged, options, counter, sources)
    for round_number in range(args.rounds):
        for task_number, task in enumerate(tasks):
            order = (
                (("local", local), ("merged", merged))
                if task_number % 2 == round_number % 2
                else (("merged", merged), ("local", local))
            )
            runs = {name: timed(task, opener, options, counter, sources) for name, opener in order}
            row: dict[str, Any] = {"round": round_number, "task": task_number}
            for name, (wall_ms, cpu_ms, pack) in runs.items():
                row.update(
                    {f"{name}_ms": wall_ms, f"{name}_cpu_ms": cpu_ms, f"{name}_stages_ms": pack.timings_ms}
                )
            if round_number == 0:
                for name in packs:
                    packs[name].append(_wire(runs[name][2]))
                row.update(compare(packs["merged"][-1], packs["local"][-1], overlay))
            rows.append(row)
    connection.close()
    pool.close()
    return rows, packs


def fresh_packs(tree: Path, index_path: Path, tasks: list[str], args: argparse.Namespace) -> list[Any]:
    counter, sources = TokenCounter(), WorkspaceSources(tree)
    options = ContextOptions(budget_tokens=args.budget)
    with closing(SnapshotPool()) as pool:
        return [
            _wire(timed(task, lambda: pool.snapshot(index_path), options, counter, sources)[2])
            for task in tasks
        ]


def sql_profile(
    tree: Path,
    url: str,
    commit: PublishedCommit,
    overlay: Overlay,
    tasks: list[str],
    args: argparse.Namespace,
) -> dict[str, list[dict[str, Any]]]:
    """Every statement the pipeline sends, timed by its first words, over these tasks: from the
    merged reader, and from the base alone (the same commit, nothing hidden)."""
    connection = connect(parse_url(url, READ_APPLICATION))
    counter, sources = TokenCounter(), WorkspaceSources(tree)
    options = ContextOptions(budget_tokens=args.budget)
    facts = CommitFacts()
    hidden = overlay.hides()
    prepared = PreparedOverlay(overlay)
    openers: dict[str, Callable[[], IndexReader]] = {
        "merged": lambda: MergedReader(BaseSnapshot(connection, commit, facts, hidden=hidden), prepared),
        "base": lambda: BaseSnapshot(connection, commit, facts),
    }
    profiles: dict[str, list[dict[str, Any]]] = {}
    original = type(connection).execute
    for name, opener in openers.items():
        times: dict[str, list[float]] = defaultdict(list)

        def execute(
            self: Any, query: Any, *parameters: Any, _times: dict[str, list[float]] = times, **named: Any
        ) -> Any:
            began = time.perf_counter()
            try:
                return original(self, query, *parameters, **named)
            finally:
                text = query.as_string(self) if hasattr(query, "as_string") else str(query)
                _times[" ".join(text.split())[:100]].append((time.perf_counter() - began) * 1000)

        timed(tasks[0], opener, options, counter, sources)
        type(connection).execute = execute
        try:
            for task in tasks:
                timed(task, opener, options, counter, sources)
        finally:
            type(connection).execute = original
        profiles[name] = sorted(
            (
                {"query": query, "calls": len(ms), "ms_per_task": sum(ms) / len(tasks)}
                for query, ms in times.items()
            ),
            key=lambda row: -float(row["ms_per_task"]),
        )
    connection.close()
    return profiles


def _key(item: dict[str, Any]) -> str:
    return str(item.get("id", item["filePath"]))


def compare(merged: Any, local: Any, overlay: Overlay) -> dict[str, Any]:
    """Exact: the same items in the same order with the same text (scores aside). Equal but for
    PageRank: the same items with the same text, in any order. And, when not exact, what differs."""
    plain_merged, plain_local = _without_scores(merged), _without_scores(local)
    exact = plain_merged == plain_local
    unordered = all(
        sorted(plain_merged[field], key=_key) == sorted(plain_local[field], key=_key) for field in ITEM_LISTS
    ) and _rest(plain_merged) == _rest(plain_local)
    found: dict[str, Any] = {"exact": exact, "unordered": unordered}
    if exact:
        return found
    local_files = set(overlay.files) | overlay.shadowed_paths
    differences: dict[str, Any] = {}
    for field in ITEM_LISTS:
        mine = {_key(item): item for item in plain_merged[field]}
        theirs = {_key(item): item for item in plain_local[field]}
        only_merged = [key for key in mine if key not in theirs]
        only_local = [key for key in theirs if key not in mine]
        text = [key for key in mine if key in theirs and mine[key] != theirs[key]]
        moved = [key for key in mine if key in theirs] != [key for key in theirs if key in mine]
        if only_merged or only_local or text or moved:
            differences[field] = {
                "only_merged": only_merged,
                "only_local": only_local,
                "other_text": text,
                "order": moved,
                "in_overlay_files": sorted(
                    {key.split("::")[0] for key in [*only_merged, *only_local, *text]} & local_files
                ),
            }
    if _rest(plain_merged) != _rest(plain_local):
        differences["rest"] = [
            key for key in _rest(plain_merged) if _rest(plain_merged)[key] != _rest(plain_local).get(key)
        ]
    found["differences"] = differences
    return found


def _rest(pack: dict[str, Any]) -> dict[str, Any]:
    rest = {key: value for key, value in pack.items() if key not in (*ITEM_LISTS, "text", "subgraph")}
    metadata = dict(rest["metadata"])
    metadata["warnings"] = sorted(metadata["warnings"], key=repr)
    rest["metadata"] = metadata
    return rest


def report(result: dict[str, Any], count: int, base_differs: set[int]) -> None:
    rows = result["rows"]
    builds = result["builds"]
    index_s = statistics.median(build["index_s"] for build in builds)
    read_s = statistics.median(build["read_s"] for build in builds)
    memory = result["memory"]
    print(
        f"\nK={count}: overlay built in {index_s + read_s:.2f} s median of {len(builds)}"
        f" (indexing {index_s:.2f} s + read_overlay {read_s:.2f} s); kept {memory['kept_mb']:.1f} MB,"
        f" peak {memory['peak_mb']:.1f} MB; the local index's reconcile {result['local_reconcile_s']:.1f} s"
    )
    print("read_overlay's queries, slowest first (one build):")
    for query in result["read_overlay_queries"][:6]:
        print(f"  {query['ms']:8.1f} ms  {query['calls']:3d} calls  {query['query']}")
    for name, statements in result["sql_profile"].items():
        total = sum(row["ms_per_task"] for row in statements)
        print(f"SQL from the {name} reader, {total:.1f} ms a task, slowest first:")
        for row in statements[:6]:
            print(f"  {row['ms_per_task']:7.1f} ms  {row['calls']:4d} calls  {row['query']}")
    table = [
        "| measure | local p50 | local p95 | merged p50 | merged p95 | merged÷local p50 | merged÷local p95 |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, suffix in (("wall, ms", "_ms"), ("thread CPU, ms", "_cpu_ms")):
        local_p50, local_p95 = median_and_p95([row["local" + suffix] for row in rows])
        merged_p50, merged_p95 = median_and_p95([row["merged" + suffix] for row in rows])
        table.append(
            f"| {label} | {local_p50:.1f} | {local_p95:.1f} | {merged_p50:.1f} | {merged_p95:.1f}"
            f" | {merged_p50 / local_p50:.2f} | {merged_p95 / local_p95:.2f} |"
        )
    for stage in rows[0]["local_stages_ms"]:
        local_values = [row["local_stages_ms"].get(stage, 0.0) for row in rows]
        merged_values = [row["merged_stages_ms"].get(stage, 0.0) for row in rows]
        table.append(
            f"| · {stage} | {statistics.median(local_values):.1f} | {percentile(local_values, 0.95):.1f}"
            f" | {statistics.median(merged_values):.1f} | {percentile(merged_values, 0.95):.1f} | | |"
        )
    print("\n".join(table))
    compared = [row for row in rows if "exact" in row]
    exact = sum(row["exact"] for row in compared)
    unordered = sum(row["unordered"] for row in compared)
    differing = [row for row in compared if not row["unordered"]]
    also_base = sum(row["task"] in base_differs for row in differing)
    print(
        f"\npacks against the local index of the branch, {len(compared)} tasks: exact (items, order,"
        f" text) {exact}; the same items and text in any order {unordered}; of the {len(differing)}"
        f" others, {also_base} differ from the base alone too (redaction)"
    )
    for kind, process in result["processes"].items():
        print(
            f"a process of its own answering {process['tasks']} tasks from the {kind} reader: peak RSS"
            f" {process['peak_mb']:.0f} MB ({process['start_mb']:.0f} MB after its imports)"
        )
    for name, found in result["against_fresh"].items():
        same = sum(row["exact"] for row in found)
        unordered_fresh = sum(row["unordered"] for row in found)
        also = sum(not row["unordered"] and number in base_differs for number, row in enumerate(found))
        print(
            f"{name} against a fresh index of the branch: exact {same}; the same items and text in any"
            f" order {unordered_fresh}; of the {len(found) - unordered_fresh} others, {also} differ from"
            " the base alone too (redaction)"
        )
    shown = 0
    for row in compared:
        if row["exact"] or shown >= SHOWN_DIFFERENCES * 2:
            continue
        shown += 1
        base_note = " (the base alone differs too)" if row["task"] in base_differs else ""
        kind = "order only" if row["unordered"] else "items"
        print(f"  task {row['task']}, {kind}{base_note}: {json.dumps(row['differences'])[:600]}")


if __name__ == "__main__":
    main()
