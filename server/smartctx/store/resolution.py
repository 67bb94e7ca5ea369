"""Name resolution: which definition a parsed reference points at, by scope heuristics.

Pure functions over plain values; the writer loads the candidates and stores the answers. A
reference's answer depends only on its own file's imports and on the definitions that carry its
key, which is what lets the writer re-resolve just the references whose key changed
(architecture.md, *The index*).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby
from operator import itemgetter

from smartctx.core.model import RefKind, SymbolKind

# Confidence of an edge by the scope that resolved it, highest first (architecture.md, *The index*).
SAME_FILE_CONFIDENCE = 1.0
IMPORTED_NAME_CONFIDENCE = 0.9
IMPORTED_MODULE_CONFIDENCE = 0.8
SAME_FOLDER_CONFIDENCE = 0.6
UNIQUE_GLOBAL_CONFIDENCE = 0.5
RELATIVE_IMPORT_CONFIDENCE = 1.0
ABSOLUTE_IMPORT_CONFIDENCE = 0.9

# A name with more definitions than this in its best scope is too ambiguous to draw edges for.
MAX_TARGETS_PER_REFERENCE = 3

# File stems that stand for their folder as a module.
_PACKAGE_STEMS = frozenset({"__init__", "index", "mod", "lib", "main"})
_IMPORT_SEPARATORS = re.compile(r"::|[./\\:]")
_SOURCE_SUFFIX = re.compile(r"\.(py|pyi|js|jsx|mjs|cjs|ts|tsx|h|hh|hpp|hxx|rb|php|rs|go|java|cs|c|cc|cpp)$")
_RUST_PREFIXES = frozenset({"crate", "self", "super"})

# A reference as the resolvers take it: (file id, kind, name, key, reference id, source id).
ReferenceRow = tuple[int, str, str, str, int, int]
# An edge as they give it: (source id, target id, kind, confidence, reference id).
EdgeValues = tuple[int, int, str, float, int]

# Enum lookups by value through a dict: calling the Enum class costs several times more, and
# resolution converts every pending reference.
_REF_KINDS = {kind.value: kind for kind in RefKind}

_CLASS_LIKE = frozenset(
    {
        SymbolKind.CLASS,
        SymbolKind.STRUCT,
        SymbolKind.INTERFACE,
        SymbolKind.TRAIT,
        SymbolKind.TYPE,
        SymbolKind.ENUM,
    }
)
_CALLABLE = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CLASS, SymbolKind.STRUCT})


@dataclass(frozen=True, slots=True)
class Candidate:
    """A definition that a reference with the same key might mean."""

    node_id: int
    file_id: int
    kind: SymbolKind
    qualified_name: str
    parent_id: int | None
    path: str


# Import questions (name, scope) answered: the definitions that match and the confidence.
ImportAnswers = dict[tuple[str, str], tuple[list[Candidate], float]]


@dataclass(frozen=True, slots=True)
class NameUse:
    """One distinct name used in one file with one kind: every reference sharing these resolves the
    same way, except for the preference for the enclosing class (see :class:`Resolution`)."""

    file_id: int
    path: str
    kind: RefKind
    name: str
    key: str


@dataclass(frozen=True, slots=True)
class Target:
    node_id: int
    confidence: float


@lru_cache(maxsize=65536)
def module_components(path: str) -> tuple[str, ...]:
    """A file's module path as components: ``django/db/__init__.py`` -> django, db."""
    stem_path = path.rsplit(".", 1)[0] if "." in posixpath.basename(path) else path
    return _module_parts(stem_path)


def _module_parts(stem_path: str) -> tuple[str, ...]:
    parts = tuple(part for part in stem_path.split("/") if part)
    if len(parts) > 1 and parts[-1] in _PACKAGE_STEMS:
        return parts[:-1]
    return parts


def module_name(path: str) -> str:
    """The dotted name of a file's module node, e.g. ``django.db.models.base``."""
    return ".".join(module_components(path))


def reference_key(kind: RefKind, name: str) -> str:
    """The name a reference is looked up by: the last component of an import path."""
    if kind is not RefKind.IMPORT:
        return name
    components = import_components(name)
    return components[-1] if components else name


def import_components(name: str) -> tuple[str, ...]:
    """An import path as components, without quotes, leading dots or a source-file suffix."""
    text = _SOURCE_SUFFIX.sub("", name.strip("\"'<> "))
    return tuple(part for part in _IMPORT_SEPARATORS.split(text) if part and part not in _RUST_PREFIXES)


def _relative_import_base(importer_path: str, name: str) -> tuple[str, ...] | None:
    """Resolve a relative import (``./x``, ``../x``, Python ``..x``) to workspace path components;
    None when the import is not relative."""
    folder = posixpath.dirname(importer_path)
    if name.startswith(("./", "../")):
        joined = posixpath.normpath(posixpath.join(folder, _SOURCE_SUFFIX.sub("", name)))
        # A path that climbs out of the workspace cannot name a file in it.
        if joined == "." or joined.startswith(".."):
            return ()
        return _module_parts(joined)
    if name.startswith(".") and not name.startswith(".."):
        depth = 1
    elif name.startswith(".."):
        depth = len(name) - len(name.lstrip("."))
    else:
        return None
    base = folder
    for _ in range(depth - 1):
        base = posixpath.dirname(base)
    rest = [part for part in name.lstrip(".").split(".") if part]
    return tuple(part for part in base.split("/") if part) + tuple(rest)


def resolve_import(ref: NameUse, candidates: Sequence[Candidate]) -> list[Target]:
    """Targets of an import: the module file, or the definition imported from it."""
    return targets_outside(*import_matches(ref.name, import_scope(ref), candidates), ref.file_id)


def import_scope(ref: NameUse) -> str:
    """What an import's meaning depends on besides its name: the importing folder for a relative
    import, nothing for an absolute one (so one answer serves every file that imports it)."""
    return posixpath.dirname(ref.path) if ref.name.startswith(".") else ""


def import_matches(name: str, scope: str, candidates: Sequence[Candidate]) -> tuple[list[Candidate], float]:
    """Every candidate an import path can mean, and the confidence of a match, before leaving out
    the importing file itself (``scope`` as given by :func:`import_scope`)."""
    relative = _relative_import_base(f"{scope}/_" if scope else "_", name)
    wanted = relative if relative is not None else import_components(name)
    if not wanted:
        return [], 0.0
    exact = relative is not None
    confidence = RELATIVE_IMPORT_CONFIDENCE if exact else ABSOLUTE_IMPORT_CONFIDENCE
    matches: list[Candidate] = []
    for candidate in candidates:
        components = module_components(candidate.path)
        if candidate.kind is not SymbolKind.MODULE:
            if candidate.parent_id is not None and "." in candidate.qualified_name:
                continue
            components = (*components, candidate.qualified_name)
        if components == wanted or (not exact and components[-len(wanted) :] == wanted):
            matches.append(candidate)
    return matches, confidence


def targets_outside(matches: Sequence[Candidate], confidence: float, file_id: int) -> list[Target]:
    """Targets from import matches, leaving out the importing file."""
    return _targets([c for c in matches if c.file_id != file_id], confidence)


@dataclass(frozen=True)
class _View:
    """Candidates of one kind filter, indexed by the scopes that :func:`resolve_name` tries."""

    usable: tuple[Candidate, ...]
    by_id: Mapping[int, Candidate]
    by_file: Mapping[int, tuple[Candidate, ...]]
    by_folder: Mapping[str, tuple[Candidate, ...]]


class CandidatePool:
    """The definitions that carry one key; lookups by scope cost O(1) instead of a scan per reference,
    which matters for names like ``get`` with hundreds of definitions and thousands of uses."""

    def __init__(self, candidates: Sequence[Candidate]) -> None:
        self.candidates = tuple(candidates)
        self._views: dict[frozenset[SymbolKind] | None, _View] = {}

    def view(self, allowed: frozenset[SymbolKind] | None) -> _View:
        view = self._views.get(allowed)
        if view is None:
            usable = tuple(
                c
                for c in self.candidates
                if c.kind is not SymbolKind.MODULE and (allowed is None or c.kind in allowed)
            )
            by_file: dict[int, list[Candidate]] = {}
            by_folder: dict[str, list[Candidate]] = {}
            for candidate in usable:
                by_file.setdefault(candidate.file_id, []).append(candidate)
                by_folder.setdefault(posixpath.dirname(candidate.path), []).append(candidate)
            view = _View(
                usable,
                {c.node_id: c for c in usable},
                {key: tuple(value) for key, value in by_file.items()},
                {key: tuple(value) for key, value in by_folder.items()},
            )
            self._views[allowed] = view
        return view


class CandidatePools:
    """The pool of each key of ``candidates``, built the first time it is asked for and kept: a
    resolution that runs in steps (team/finish.py) keeps one across them, so that a name like
    ``__init__`` with tens of thousands of definitions is not indexed again at every step (on the
    104k-file monorepo that was a fifth of the finish's time)."""

    def __init__(self, candidates: Mapping[str, Sequence[Candidate]]) -> None:
        self._candidates = candidates
        self._pools: dict[str, CandidatePool] = {}

    def get(self, key: str) -> CandidatePool:
        pool = self._pools.get(key)
        if pool is None:
            pool = CandidatePool(self._candidates.get(key, ()))
            self._pools[key] = pool
        return pool

    def keep_largest(self, min_candidates: int) -> None:
        """Forget the pools of keys with fewer than ``min_candidates`` definitions, which cost
        little to build again and are most of the memory."""
        self._pools = {
            key: pool for key, pool in self._pools.items() if len(pool.candidates) >= min_candidates
        }


@dataclass(frozen=True)
class Resolution:
    """What a name use resolves to. When definitions in the use's own file match, which of them
    is meant depends on where in the file the use sits: ``for_source`` answers per enclosing
    definition."""

    targets: tuple[Target, ...] = ()
    same_file: tuple[Candidate, ...] = ()

    def for_source(self, source_qualified_name: str) -> list[Target]:
        if not self.same_file:
            return list(self.targets)
        return _targets(_prefer_enclosing_scope(source_qualified_name, self.same_file), SAME_FILE_CONFIDENCE)


def resolve_name(
    use: NameUse,
    pool: CandidatePool,
    imported_targets: Mapping[str, Sequence[int]],
    imported_files: Iterable[int],
) -> Resolution:
    """What a call, reference or base class means, by the first scope that names it.

    ``imported_targets`` maps the key of each import of the use's file to what it resolved to;
    ``imported_files`` are the files those imports point into.
    """
    allowed = _CLASS_LIKE if use.kind is RefKind.INHERIT else _CALLABLE if use.kind is RefKind.CALL else None
    view = pool.view(allowed)
    if not view.usable:
        return Resolution()
    same_file = view.by_file.get(use.file_id)
    if same_file:
        return Resolution(same_file=same_file)
    named = [view.by_id[node_id] for node_id in imported_targets.get(use.name, ()) if node_id in view.by_id]
    if named:
        return Resolution(tuple(_targets(named, IMPORTED_NAME_CONFIDENCE)))
    in_imported = [c for file_id in imported_files for c in view.by_file.get(file_id, ())]
    if in_imported:
        return Resolution(tuple(_targets(in_imported, IMPORTED_MODULE_CONFIDENCE)))
    same_folder = view.by_folder.get(posixpath.dirname(use.path))
    if same_folder:
        return Resolution(tuple(_targets(same_folder, SAME_FOLDER_CONFIDENCE)))
    if len(view.usable) == 1:
        return Resolution(tuple(_targets(view.usable, UNIQUE_GLOBAL_CONFIDENCE)))
    return Resolution()


def _prefer_enclosing_scope(source_qualified_name: str, same_file: Sequence[Candidate]) -> list[Candidate]:
    """Within one file, prefer definitions that share the reference's enclosing class (``self.x()``)."""
    scope = source_qualified_name.rpartition(".")[0]
    while scope:
        inside = [c for c in same_file if c.qualified_name.rpartition(".")[0] == scope]
        if inside:
            return inside
        scope = scope.rpartition(".")[0]
    top_level = [c for c in same_file if "." not in c.qualified_name]
    return top_level or list(same_file)


def _targets(matches: Sequence[Candidate], confidence: float) -> list[Target]:
    if not matches or len(matches) > MAX_TARGETS_PER_REFERENCE:
        return []
    share = confidence / len(matches)
    return [Target(c.node_id, share) for c in sorted(matches, key=lambda c: c.node_id)]


def name_uses(
    rows: Sequence[ReferenceRow], paths: Mapping[int, str], candidates: Mapping[str, Sequence[Candidate]]
) -> list[tuple[NameUse, list[ReferenceRow]]]:
    """Reference rows, sorted by their first three fields, as distinct name uses with their rows. A
    reference whose key no definition carries cannot resolve: it is not even looked at."""
    return [
        (NameUse(file_id, paths[file_id], _REF_KINDS[kind], name, key), list(group))
        for (file_id, kind, name, key), group in groupby(rows, key=itemgetter(0, 1, 2, 3))
        if key in candidates
    ]


def import_edges(
    rows: Sequence[ReferenceRow],
    paths: Mapping[int, str],
    candidates: Mapping[str, Sequence[Candidate]],
    answers: ImportAnswers | None = None,
) -> list[EdgeValues]:
    """The edges of import references. An absolute import means the same in every file, so each
    question is answered once, in ``answers`` if given (a resolution in steps keeps them across
    its steps), else within this call."""
    edges: list[EdgeValues] = []
    import_answers: ImportAnswers = {} if answers is None else answers
    for use, refs in name_uses(sorted(rows, key=itemgetter(0, 1, 2, 4)), paths, candidates):
        question = (use.name, import_scope(use))
        matched = import_answers.get(question)
        if matched is None:
            matched = import_matches(*question, candidates.get(use.key, ()))
            import_answers[question] = matched
        targets = targets_outside(*matched, use.file_id)
        edges.extend(
            (source_id, t.node_id, use.kind.value, t.confidence, ref_id)
            for _, _, _, _, ref_id, source_id in refs
            for t in targets
        )
    return edges


def name_edges(
    uses: Sequence[tuple[NameUse, list[ReferenceRow]]],
    pools: CandidatePools,
    imported_targets: Mapping[int, Mapping[str, Sequence[int]]],
    imported_files: Mapping[int, Iterable[int]],
    source_names: Mapping[int, str],
) -> list[EdgeValues]:
    """The edges of calls, references and base classes (:func:`name_uses`), through what each
    file's imports point at: per file, the targets of each import key and the files they lie in.
    ``pools`` holds the definitions of each key, ``source_names`` the qualified name of each
    definition the references sit in."""
    edges: list[EdgeValues] = []
    for use, refs in uses:
        resolution = resolve_name(
            use,
            pools.get(use.key),
            imported_targets.get(use.file_id, {}),
            imported_files.get(use.file_id, ()),
        )
        by_source: dict[int, list[Target]] = {}
        for _, _, _, _, ref_id, source_id in refs:
            answer = by_source.get(source_id)
            if answer is None:
                answer = resolution.for_source(source_names[source_id])
                by_source[source_id] = answer
            edges.extend(
                (source_id, t.node_id, use.kind.value, t.confidence, ref_id)
                for t in answer
                if t.node_id != source_id
            )
    return edges
