"""The resolution pass: the edges of every reference still to resolve, in one transaction.

Which references are pending is itself stored (``files.refs_pending``, ``dirty_names``,
``REFS_RESOLVED_BELOW_KEY``, written by the batch that made them so), so a pass interrupted at any
instant is simply run again. The pass loads those references ``FILES_PER_STEP`` files at a time,
with the definitions their keys name, answers them with the pure rules of resolution.py, and stores
the edges: each step's imports first, then every other reference through what its file's imports
now point at. A file's answers depend on its own imports and on the definitions alone, so a first
index's millions of references are never all held at once.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

from smartctx.core.model import RefKind, SymbolKind
from smartctx.store.batch import REFS_RESOLVED_BELOW_KEY
from smartctx.store.resolution import (
    Candidate,
    CandidatePools,
    ImportAnswers,
    ReferenceRow,
    import_edges,
    name_edges,
    name_uses,
)

# A pass resolves the references of this many files at a time, holding one step's references and
# edges rather than all of a first index's (the 104k-file monorepo's 8.1M peaked at 5.8 GiB).
FILES_PER_STEP = 2_000
# The definitions of a key with at least this many are indexed by scope once for every step.
POOLS_KEPT_FROM = 64
# A resolution reads the paths of up to this many files one by one, and of more all at once: a save
# needs one or two of babel's 12,474 paths, whose whole table took a quarter of its resolution.
PATHS_READ_ONE_BY_ONE = 200


@dataclass(frozen=True)
class ResolutionReport:
    references: int
    edges: int


@dataclass
class _Resolution:
    """What a pass keeps from one step to the next: the files' paths, what their imports pointed at
    before, the definitions of every key asked for so far (and the pools of those with many), the
    import questions answered, and what it has resolved."""

    paths: dict[int, str]
    imports_before: Mapping[int, set[tuple[int, int]]]
    candidates: dict[str, list[Candidate]] = field(default_factory=dict)
    keys_loaded: set[str] = field(default_factory=set)
    import_answers: ImportAnswers = field(default_factory=dict)
    references: int = 0
    edges: int = 0
    pools: CandidatePools = field(init=False)

    def __post_init__(self) -> None:
        self.pools = CandidatePools(self.candidates)


class ResolutionPass:
    """Resolves the pending references on the writer's read-write connection."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    def run(self) -> ResolutionReport:
        """Recompute the edges of every reference that is new or whose key's definitions changed."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            report = self._resolve()
            self._db.execute("DELETE FROM dirty_names")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return report

    def _resolve(self) -> ResolutionReport:
        # The temporary tables are small and the index tables large; CROSS JOIN makes SQLite loop
        # over the small side first, which its planner does not know to do without statistics.
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS todo(ref_id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM todo")
        db.execute(
            "INSERT INTO todo SELECT r.id FROM files f CROSS JOIN refs r ON r.file_id = f.id"
            " WHERE f.refs_pending = 1"
            " UNION SELECT id FROM refs WHERE key IN (SELECT name FROM dirty_names)"
        )
        mark = db.execute("SELECT value FROM meta WHERE key = ?", (REFS_RESOLVED_BELOW_KEY,)).fetchone()
        if mark is not None:
            db.execute("INSERT OR IGNORE INTO todo SELECT id FROM refs WHERE id >= ?", (int(mark[0]),))
        imports_before = self._import_edges_to_redo()
        db.execute("DELETE FROM edges WHERE ref_id IN (SELECT ref_id FROM todo)")
        files = [
            file_id
            for (file_id,) in db.execute(
                "SELECT DISTINCT r.file_id FROM todo t CROSS JOIN refs r ON r.id = t.ref_id"
                " ORDER BY r.file_id"
            )
        ]
        resolution = _Resolution(self._paths_of(set(files)), imports_before)
        for start in range(0, len(files), FILES_PER_STEP):
            self._resolve_files(files[start : start + FILES_PER_STEP], resolution)
            resolution.pools.keep_largest(POOLS_KEPT_FROM)
        db.execute("UPDATE files SET refs_pending = 0 WHERE refs_pending = 1")
        db.execute("DELETE FROM meta WHERE key = ?", (REFS_RESOLVED_BELOW_KEY,))
        if resolution.references:
            db.execute("UPDATE meta SET value = '1' WHERE key = 'scores_dirty'")
        return ResolutionReport(references=resolution.references, edges=resolution.edges)

    def _resolve_files(self, file_ids: Sequence[int], resolution: _Resolution) -> None:
        """Resolve the pending references of these files: their imports first, then every other
        reference through what its file's imports now point at. A file's answers depend on its own
        imports and on the definitions alone, so files are resolved a step at a time."""
        db = self._db
        _fill_temp_table(db, "step_files", "file_id INTEGER", file_ids)
        # One row per reference, grouped so that each distinct name use in a file is resolved once.
        pending: list[ReferenceRow] = db.execute(
            "SELECT r.file_id, r.kind, r.name, r.key, r.id, r.source_id FROM step_files s"
            " CROSS JOIN refs r ON r.file_id = s.file_id CROSS JOIN todo t ON t.ref_id = r.id"
        ).fetchall()
        candidates = resolution.candidates
        self._load_candidates({row[3] for row in pending}, resolution)
        paths = resolution.paths
        import_kind = RefKind.IMPORT.value
        edges = import_edges(
            [row for row in pending if row[1] == import_kind], paths, candidates, resolution.import_answers
        )
        db.executemany(
            "INSERT INTO edges(src_id, dst_id, kind, confidence, ref_id) VALUES (?, ?, ?, ?, ?)", edges
        )
        resolution.edges += len(edges)
        # The other references of a file resolve through what its imports point at, so a file whose
        # imports now point elsewhere has them all resolved again, although neither they nor their
        # names changed.
        imports_after: dict[int, set[tuple[int, int]]] = defaultdict(set)
        files_of_refs = {row[4]: row[0] for row in pending if row[1] == import_kind}
        for _, dst_id, _, _, ref_id in edges:
            imports_after[files_of_refs[ref_id]].add((ref_id, dst_id))
        before = resolution.imports_before
        redirected = {
            file_id for file_id in file_ids if before.get(file_id, set()) != imports_after.get(file_id, set())
        }
        added = self._add_references_of(redirected)
        self._load_candidates({row[3] for row in added}, resolution)
        names = [row for row in pending if row[1] != import_kind] + added
        names.sort(key=itemgetter(0, 1, 2, 4))
        uses = name_uses(names, paths, candidates)
        imported_targets, imported_files = self._imports_of({use.file_id for use, _ in uses})
        source_names = self._qualified_names({row[5] for row in names})
        edges = name_edges(uses, resolution.pools, imported_targets, imported_files, source_names)
        db.executemany(
            "INSERT INTO edges(src_id, dst_id, kind, confidence, ref_id) VALUES (?, ?, ?, ?, ?)", edges
        )
        resolution.references += len(pending) + len(added)
        resolution.edges += len(edges)

    def _paths_of(self, file_ids: set[int]) -> dict[int, str]:
        """These files' paths by id; the whole table's when they are many (a first index)."""
        if len(file_ids) > PATHS_READ_ONE_BY_ONE:
            return dict(self._db.execute("SELECT id, path FROM files"))
        return {
            file_id: path
            for file_id in file_ids
            for (path,) in self._db.execute("SELECT path FROM files WHERE id = ?", (file_id,))
        }

    def _import_edges_to_redo(self) -> dict[int, set[tuple[int, int]]]:
        """Per file, the (reference, target) pairs of its imports that are about to be resolved again."""
        found: dict[int, set[tuple[int, int]]] = defaultdict(set)
        for file_id, ref_id, dst_id in self._db.execute(
            "SELECT r.file_id, r.id, e.dst_id FROM todo t CROSS JOIN refs r ON r.id = t.ref_id"
            " CROSS JOIN edges e ON e.ref_id = r.id WHERE r.kind = 'imports'"
        ):
            found[file_id].add((ref_id, dst_id))
        return found

    def _add_references_of(self, file_ids: set[int]) -> list[ReferenceRow]:
        """Put the references of these files (other than imports) that are not yet to be resolved
        into ``todo`` and drop their edges."""
        if not file_ids:
            return []
        db = self._db
        _fill_temp_table(db, "redirected", "file_id INTEGER", file_ids)
        added: list[ReferenceRow] = db.execute(
            "SELECT r.file_id, r.kind, r.name, r.key, r.id, r.source_id FROM redirected d"
            " CROSS JOIN refs r ON r.file_id = d.file_id"
            " WHERE r.kind != 'imports' AND r.id NOT IN (SELECT ref_id FROM todo)"
        ).fetchall()
        db.executemany("INSERT INTO todo(ref_id) VALUES (?)", [(row[4],) for row in added])
        db.executemany("DELETE FROM edges WHERE ref_id = ?", [(row[4],) for row in added])
        return added

    def _qualified_names(self, node_ids: set[int]) -> dict[int, str]:
        """Qualified names of these definitions (those the references to resolve sit in)."""
        db = self._db
        _fill_temp_table(db, "sources", "node_id INTEGER", node_ids)
        return dict(
            db.execute("SELECT n.id, n.qualified_name FROM sources s CROSS JOIN nodes n ON n.id = s.node_id")
        )

    def _load_candidates(self, keys: set[str], resolution: _Resolution) -> None:
        """Load the definitions of the keys not asked for before into ``resolution.candidates``."""
        wanted = keys - resolution.keys_loaded
        resolution.keys_loaded |= wanted
        resolution.candidates.update(self._candidates(wanted))

    def _candidates(self, keys: set[str]) -> dict[str, list[Candidate]]:
        db = self._db
        _fill_temp_table(db, "wanted", "name TEXT", keys)
        by_key: dict[str, list[Candidate]] = defaultdict(list)
        for node_id, file_id, kind, name, qualified_name, parent_id, path in db.execute(
            "SELECT n.id, n.file_id, n.kind, n.name, n.qualified_name, n.parent_id, f.path"
            " FROM wanted w CROSS JOIN nodes n ON n.name = w.name CROSS JOIN files f ON f.id = n.file_id"
        ):
            by_key[name].append(
                Candidate(node_id, file_id, SymbolKind(kind), qualified_name, parent_id, path)
            )
        return by_key

    def _imports_of(self, file_ids: set[int]) -> tuple[dict[int, dict[str, list[int]]], dict[int, set[int]]]:
        """Per file: what each import key resolved to, and the files those imports point into."""
        db = self._db
        _fill_temp_table(db, "importers", "file_id INTEGER", file_ids)
        targets: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        files: dict[int, set[int]] = defaultdict(set)
        for file_id, key, dst_id, dst_file in db.execute(
            "SELECT r.file_id, r.key, e.dst_id, n.file_id FROM importers i"
            " CROSS JOIN refs r ON r.file_id = i.file_id AND r.kind = 'imports'"
            " CROSS JOIN edges e ON e.ref_id = r.id CROSS JOIN nodes n ON n.id = e.dst_id"
        ):
            targets[file_id][key].append(dst_id)
            files[file_id].add(dst_file)
        return targets, files


def _fill_temp_table(db: sqlite3.Connection, name: str, column: str, values: Iterable[int | str]) -> None:
    """Make the temporary table ``name`` of one primary-key column hold exactly these values.

    The pass joins the index's tables against such small tables (CROSS JOIN, small side first)
    rather than binding thousands of parameters into one ``IN`` list."""
    db.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name}({column} PRIMARY KEY)")
    db.execute(f"DELETE FROM {name}")
    db.executemany(f"INSERT INTO {name} VALUES (?)", [(value,) for value in values])
