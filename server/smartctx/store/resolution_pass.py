"""The resolution pass: the edges of every reference still to resolve, in one transaction.

Which references are pending is itself stored (``files.refs_pending``, ``dirty_names``,
``REFS_RESOLVED_BELOW_KEY``, written by the batch that made them so), so a pass interrupted at any
instant is simply run again. The pass loads those references and the definitions their keys name,
answers them with the pure rules of resolution.py, and stores the edges: imports first, then every
other reference through what its file's imports now point at.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from operator import itemgetter

from smartctx.core.model import RefKind, SymbolKind
from smartctx.store.batch import REFS_RESOLVED_BELOW_KEY
from smartctx.store.resolution import Candidate, CandidatePools, import_edges, name_edges, name_uses

# A resolution reads the paths of up to this many files one by one, and of more all at once: a save
# needs one or two of babel's 12,474 paths, whose whole table took a quarter of its resolution.
PATHS_READ_ONE_BY_ONE = 200


@dataclass(frozen=True)
class ResolutionReport:
    references: int
    edges: int


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
        # One row per reference, grouped so that each distinct name use in a file is resolved once.
        pending = db.execute(
            "SELECT r.file_id, r.kind, r.name, r.key, r.id, r.source_id FROM todo t"
            " CROSS JOIN refs r ON r.id = t.ref_id"
        ).fetchall()
        imports_before = self._import_edges_to_redo()
        db.execute("DELETE FROM edges WHERE ref_id IN (SELECT ref_id FROM todo)")
        paths = self._paths_of({row[0] for row in pending})
        candidates = self._candidates({row[3] for row in pending})
        import_kind = RefKind.IMPORT.value
        edges = import_edges([row for row in pending if row[1] == import_kind], paths, candidates)
        db.executemany(
            "INSERT INTO edges(src_id, dst_id, kind, confidence, ref_id) VALUES (?, ?, ?, ?, ?)", edges
        )
        resolved = len(edges)
        # The other references of a file resolve through what its imports point at, so a file whose
        # imports now point elsewhere has them all resolved again, although neither they nor their
        # names changed.
        imports_after: dict[int, set[tuple[int, int]]] = defaultdict(set)
        files_of_refs = {row[4]: row[0] for row in pending if row[1] == import_kind}
        for _, dst_id, _, _, ref_id in edges:
            imports_after[files_of_refs[ref_id]].add((ref_id, dst_id))
        redirected = {
            file_id
            for file_id in imports_before.keys() | imports_after.keys()
            if imports_before.get(file_id, set()) != imports_after.get(file_id, set())
        }
        added = self._add_references_of(redirected, candidates)
        paths.update(self._paths_of({row[0] for row in added} - paths.keys()))
        names = [row for row in pending if row[1] != import_kind] + added
        names.sort(key=itemgetter(0, 1, 2, 4))
        uses = name_uses(names, paths, candidates)
        imported_targets, imported_files = self._imports_of({use.file_id for use, _ in uses})
        pools = CandidatePools(candidates)
        edges = name_edges(uses, pools, imported_targets, imported_files, self._source_names())
        db.executemany(
            "INSERT INTO edges(src_id, dst_id, kind, confidence, ref_id) VALUES (?, ?, ?, ?, ?)", edges
        )
        db.execute("UPDATE files SET refs_pending = 0 WHERE refs_pending = 1")
        db.execute("DELETE FROM meta WHERE key = ?", (REFS_RESOLVED_BELOW_KEY,))
        if pending:
            db.execute("UPDATE meta SET value = '1' WHERE key = 'scores_dirty'")
        return ResolutionReport(references=len(pending) + len(added), edges=resolved + len(edges))

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

    def _add_references_of(
        self, file_ids: set[int], candidates: dict[str, list[Candidate]]
    ) -> list[tuple[int, str, str, str, int, int]]:
        """Put the references of these files (other than imports) that are not yet to be resolved
        into ``todo``, drop their edges, and load their definitions into ``candidates``."""
        if not file_ids:
            return []
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS redirected(file_id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM redirected")
        db.executemany("INSERT INTO redirected(file_id) VALUES (?)", [(file_id,) for file_id in file_ids])
        added: list[tuple[int, str, str, str, int, int]] = db.execute(
            "SELECT r.file_id, r.kind, r.name, r.key, r.id, r.source_id FROM redirected d"
            " CROSS JOIN refs r ON r.file_id = d.file_id"
            " WHERE r.kind != 'imports' AND r.id NOT IN (SELECT ref_id FROM todo)"
        ).fetchall()
        db.executemany("INSERT INTO todo(ref_id) VALUES (?)", [(row[4],) for row in added])
        db.executemany("DELETE FROM edges WHERE ref_id = ?", [(row[4],) for row in added])
        candidates.update(self._candidates({row[3] for row in added} - candidates.keys()))
        return added

    def _source_names(self) -> dict[int, str]:
        """Qualified names of the definitions that the references to resolve sit in."""
        return dict(
            self._db.execute(
                "SELECT DISTINCT n.id, n.qualified_name FROM todo t CROSS JOIN refs r ON r.id = t.ref_id"
                " CROSS JOIN nodes n ON n.id = r.source_id"
            )
        )

    def _candidates(self, keys: set[str]) -> dict[str, list[Candidate]]:
        db = self._db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted(name TEXT PRIMARY KEY)")
        db.execute("DELETE FROM wanted")
        db.executemany("INSERT INTO wanted(name) VALUES (?)", [(key,) for key in keys])
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
        db.execute("CREATE TEMP TABLE IF NOT EXISTS importers(file_id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM importers")
        db.executemany("INSERT INTO importers(file_id) VALUES (?)", [(file_id,) for file_id in file_ids])
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
