"""Stage 1: find the candidates, lexically and by exact mention.

Three kinds of evidence come out of the task text: BM25 over the symbol index (with whole-file
evidence summed from the same hits), symbols the task names verbatim, and definitions that enclose
a stack frame or sit in a file the task names, by its path or as a dotted module path.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from smartctx.core.model import SymbolKind
from smartctx.retrieval.file_kinds import is_test_path
from smartctx.retrieval.query import Frame, ParsedTask
from smartctx.retrieval.similar_commits import similar_commit_files
from smartctx.retrieval.terms import query_terms
from smartctx.store.reader import IndexReader
from smartctx.store.snapshot import NodeRow

# Symbol hits read: the candidates, plus a reserve from which the best files add their own.
SYMBOL_HITS = 600
# Files ranked by whole-file BM25; their score is the "file" signal of every definition in them.
FILE_HITS = 200
FILES_SEEDING_CANDIDATES = 10
CANDIDATES_PER_TOP_FILE = 5
# The first few of those files give more: the fix is often in the best-matching file, in a definition
# that matches the task only weakly, and with five a file it was no candidate at all (issue #23 item 2:
# function Acc@10 on SWE-bench Lite 44.3 -> 45.0 %, on the commit dev set 36.4 -> 36.8 %, file Acc@1
# unchanged on both, query CPU unchanged at p50; bench/HISTORY.md). Widening all ten files as far
# measured worse: their extra definitions crowd other files' summaries out of the pack.
FILES_WIDENED = 3
CANDIDATES_PER_WIDENED_FILE = 20
# A name with more definitions than this (``get``, ``save``) says nothing about which one is meant.
MAX_DEFINITIONS_PER_NAMED = 12
# A class named like an exception (``PolynomialError``, ``TimeoutException``, ``DeprecationWarning``)
# that the task names says what was raised, not where: in none of the 44 tasks that name one (SWE-bench
# Lite, the traceback, training and dev sets) was it the code changed, yet it was among the first five
# definitions 7 times. It stays a candidate by its words, without a named symbol's credit.
_RAISED_CLASS_NAME = re.compile(r"(?:Error|Exception|Warning)$")
# How many matching indexed files a path named in the task may stand for.
MAX_FILES_PER_MENTION = 3
# The files a dotted module path may name (``django.db.migrations.serializer``,
# ``org.apache.commons.lang3.StringUtils``): the path's components as folders, then one of these.
MODULE_FILE_ENDINGS = (".py", "/__init__.py", ".java", ".kt", ".scala")


@dataclass(frozen=True)
class SearchResult:
    lexical: dict[int, float]
    file_evidence: dict[str, float]
    # Symbols the task names verbatim, by name or by a dotted path (``QuerySet.bulk_create``);
    # ``named_exactly`` holds the dotted-path matches, the most specific mentions.
    named: frozenset[int]
    named_exactly: frozenset[int]
    framed: frozenset[int]
    mentioned_files: frozenset[str]
    nodes: dict[int, NodeRow]
    # Names the task uses that no definition bears but one folded into an ancestor does (nested too
    # deep to be indexed on its own): (name, line, the node whose text holds it).
    folded: tuple[tuple[str, int, NodeRow], ...] = ()
    # Files the task names as a dotted module path (an import, a qualified name).
    named_modules: frozenset[str] = frozenset()
    # Each file's place (1 = best) in the whole-file search: the scores of the first few files are
    # often close, and their order still says which matched best.
    file_places: dict[str, int] = field(default_factory=dict)
    # The files past commits whose messages resemble the task changed (similar_commits.py), each with
    # its signal in (0, 1].
    similar_commits: dict[str, float] = field(default_factory=dict)
    # The definition at the innermost frame of the project's own code (not a test's) the task
    # quotes: where a traceback's failure happens, the likeliest place of its fix.
    innermost_framed: frozenset[int] = frozenset()
    # Whether test files take part: the task asks for tests, or names a test file the workspace
    # holds (query.py's ``asks_for_tests`` and ``test_paths``).
    tests_wanted: bool = False
    # The words searched for (``terms.query_terms``), which a long body is shown near (long_bodies.py).
    words: frozenset[str] = frozenset()


def search(snapshot: IndexReader, task: ParsedTask, candidate_limit: int) -> SearchResult:
    terms = query_terms(snapshot, task)
    hits = snapshot.search(terms.weights, max(SYMBOL_HITS, candidate_limit))
    file_evidence = dict(snapshot.search_files(terms.file_weights, FILE_HITS))
    # The best-matching files also contribute their best-matching definitions as candidates, so a
    # file that ranks high as a whole is never represented by nothing. Test files match a bug
    # report's words as well as the code does (they reproduce it); unless the task is about tests,
    # they do not take these places.
    tests_wanted = task.asks_for_tests or any(
        _names_workspace_test(snapshot, path) for path in task.test_paths
    )
    seeding = [path for path in file_evidence if tests_wanted or not is_test_path(path)]
    best_first = sorted(seeding, key=lambda path: (-file_evidence[path], path))
    top_files = set(best_first[:FILES_SEEDING_CANDIDATES])
    widened = set(best_first[:FILES_WIDENED])
    places = {path: place for place, path in enumerate(file_evidence, start=1)}
    # Only the reserve's files are looked at: the first ``candidate_limit`` hits are taken whatever
    # their file.
    paths = snapshot.paths_of(hit.node_id for hit in hits[candidate_limit:])
    chosen: list[int] = [hit.node_id for hit in hits[:candidate_limit]]
    per_file: dict[str, int] = defaultdict(int)
    for hit in hits[candidate_limit:]:
        path = paths.get(hit.node_id)
        quota = CANDIDATES_PER_WIDENED_FILE if path in widened else CANDIDATES_PER_TOP_FILE
        if path in top_files and per_file[path] < quota:
            per_file[path] += 1
            chosen.append(hit.node_id)
    bm25 = {hit.node_id: hit.bm25 for hit in hits}
    nodes = {node.id: node for node in snapshot.nodes(chosen)}
    lexical = {
        node_id: bm25[node_id]
        for node_id in chosen
        if node_id in nodes and nodes[node_id].kind is not SymbolKind.MODULE
    }

    named: set[int] = set()
    dotted_matches: set[int] = set()
    # Only the names with few definitions are loaded: the others name nothing in particular.
    plain = [identifier for identifier in task.identifiers if identifier.lower() not in terms.common_words]
    counts = snapshot.definition_counts(plain)
    few = [name for name, count in counts.items() if count <= MAX_DEFINITIONS_PER_NAMED]
    by_name = snapshot.nodes_with_names(few)
    for identifier in plain:
        definitions = [n for n in by_name.get(identifier, []) if n.kind is not SymbolKind.MODULE]
        if 0 < len(definitions) <= MAX_DEFINITIONS_PER_NAMED:
            named.update(n.id for n in definitions)
            nodes.update((n.id, n) for n in definitions)
    for owner, _, name in (dotted.rpartition(".") for dotted in task.dotted_names):
        suffix = f"{owner.rpartition('.')[2]}.{name}"
        definitions = [
            n for n in snapshot.nodes_named_within(name, suffix) if n.qualified_name.endswith(suffix)
        ]
        if 0 < len(definitions) <= MAX_DEFINITIONS_PER_NAMED:
            named.update(n.id for n in definitions)
            dotted_matches.update(n.id for n in definitions)
            nodes.update((n.id, n) for n in definitions)

    # A name no definition bears may be one folded into its ancestor: that ancestor is what the task
    # names, as if by its own name.
    folded = tuple(snapshot.folded_named(name for name in plain if name not in counts))
    for _, _, holder in folded:
        nodes[holder.id] = holder
        if holder.kind is not SymbolKind.MODULE:
            named.add(holder.id)

    mentioned: set[str] = set()
    for path in task.file_paths:
        mentioned.update(_indexed_paths(snapshot, path))
    framed: set[int] = set()
    innermost: set[int] = set()
    for frame in task.frames:
        for path in _indexed_paths(snapshot, frame.path):
            mentioned.add(path)
            node = _frame_node(snapshot, path, frame)
            if node is not None and node.kind is not SymbolKind.MODULE:
                framed.add(node.id)
                nodes[node.id] = node
                if not innermost and not is_test_path(path):
                    innermost.add(node.id)
    modules = {path for dotted in task.dotted_names for path in _module_paths(snapshot, dotted)}
    named -= {node_id for node_id in named if _is_raised(nodes[node_id])}
    return SearchResult(
        lexical,
        file_evidence,
        frozenset(named),
        frozenset(dotted_matches & named),
        frozenset(framed),
        frozenset(mentioned),
        nodes,
        folded,
        frozenset(modules),
        places,
        similar_commit_files(snapshot, task.words),
        frozenset(innermost),
        tests_wanted,
        frozenset(terms.weights),
    )


def _frame_node(snapshot: IndexReader, path: str, frame: Frame) -> NodeRow | None:
    """The definition a frame stands for: the one its line falls in, unless the frame names its
    function and that one is called otherwise. The line is then from another version of the file
    (the reporter's): the frame is the function of its name nearest the line."""
    node = snapshot.innermost_node_at(path, frame.line)
    name = frame.function
    if not name or name.startswith("<") or (node is not None and node.name == name):
        return node
    named = snapshot.definitions_named(path, name)
    return min(named, key=lambda found: (abs(found.start_line - frame.line), found.id), default=node)


def _module_paths(snapshot: IndexReader, dotted: str) -> list[str]:
    """The indexed files a dotted name names as a module: its longest prefix of at least two
    components that is a module file's path (``a.b.c.D`` is ``a/b/c.py`` or ``a/b/c/__init__.py``
    when there is no ``a/b/c/D.py``)."""
    parts = dotted.split(".")
    for length in range(len(parts), 1, -1):
        base = "/".join(parts[:length])
        for ending in MODULE_FILE_ENDINGS:
            matches = snapshot.paths_ending_with(base + ending)
            if matches:
                return matches if len(matches) <= MAX_FILES_PER_MENTION else []
    return []


def _indexed_paths(snapshot: IndexReader, path: str) -> list[str]:
    """Indexed files a path from the task stands for: the longest suffix of it that matches, down to
    its last folder and file. A file of that name in another folder is not it: the reporter's
    ``/home/me/demo/main.py`` is no ``main.py`` of the workspace (a bare ``main.py`` is)."""
    parts = [part for part in path.split("/") if part and part not in {".", ".."}]
    for start in range(max(1, len(parts) - 1)):
        matches = snapshot.paths_ending_with("/".join(parts[start:]))
        if matches:
            return matches if len(matches) <= MAX_FILES_PER_MENTION else []
    return []


def _names_workspace_test(snapshot: IndexReader, path: str) -> bool:
    """Whether a test file the task names is one of the workspace's (``_indexed_paths``: a diff's
    ``a/`` or another checkout's root left out, but not the folder the file is in)."""
    return any(is_test_path(found) for found in _indexed_paths(snapshot, path))


def _is_raised(node: NodeRow) -> bool:
    """Whether a definition is an exception class: what a task names when it says what was raised."""
    return node.kind is SymbolKind.CLASS and _RAISED_CLASS_NAME.search(node.name) is not None
