"""Name resolution picks the definition a reader would, by scope: file, imports, folder, global."""

from __future__ import annotations

import pytest

from smartctx.core.model import RefKind, SymbolKind
from smartctx.store.resolution import (
    Candidate,
    CandidatePool,
    NameUse,
    import_components,
    module_name,
    reference_key,
    resolve_import,
    resolve_name,
)

FILES = {1: "pkg/app.py", 2: "pkg/core.py", 3: "other/core.py", 4: "pkg/__init__.py", 5: "web/src/view.ts"}


def candidate(
    node_id: int, file_id: int, qualified: str, kind: SymbolKind = SymbolKind.FUNCTION
) -> Candidate:
    parent = None if "." not in qualified and kind is not SymbolKind.MODULE else 100
    return Candidate(node_id, file_id, kind, qualified, parent, FILES[file_id])


def ref(name: str, kind: RefKind = RefKind.CALL, file_id: int = 1) -> NameUse:
    return NameUse(file_id, FILES[file_id], kind, name, reference_key(kind, name))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("django/db/models/base.py", "django.db.models.base"),
        ("django/db/__init__.py", "django.db"),
        ("src/index.ts", "src"),
        ("setup.py", "setup"),
        ("include/foo/bar.h", "include.foo.bar"),
    ],
)
def test_module_names(path: str, expected: str) -> None:
    assert module_name(path) == expected


@pytest.mark.parametrize(
    ("name", "components"),
    [
        ("django.db.models", ("django", "db", "models")),
        ("./widget.js", ("widget",)),
        ("crate::store::Writer", ("store", "Writer")),
        ("<sys/types.h>", ("sys", "types")),
        ("App\\Models\\User", ("App", "Models", "User")),
    ],
)
def test_import_components(name: str, components: tuple[str, ...]) -> None:
    assert import_components(name) == components


def resolve(
    use: NameUse,
    candidates: list[Candidate],
    imported: dict[str, list[int]] | None = None,
    imported_files: tuple[int, ...] = (),
    source: str = "main",
) -> list[tuple[int, float]]:
    resolution = resolve_name(use, CandidatePool(candidates), imported or {}, imported_files)
    return [(t.node_id, t.confidence) for t in resolution.for_source(source)]


def test_same_file_beats_everything() -> None:
    candidates = [candidate(10, 2, "alpha"), candidate(11, 1, "alpha")]
    assert resolve(ref("alpha"), candidates, imported_files=(2,)) == [(11, 1.0)]


def test_method_call_prefers_the_enclosing_class() -> None:
    candidates = [
        candidate(10, 1, "A.save", SymbolKind.METHOD),
        candidate(11, 1, "B.save", SymbolKind.METHOD),
    ]
    assert resolve(ref("save"), candidates, source="B.run") == [(11, 1.0)]
    assert resolve(ref("save"), candidates, source="A.run") == [(10, 1.0)]
    assert resolve(ref("save"), candidates, source="main") == [(10, 0.5), (11, 0.5)]


def test_imported_name_then_imported_module_then_folder_then_unique() -> None:
    in_core = candidate(10, 2, "alpha")
    elsewhere = candidate(11, 3, "alpha")
    both = [in_core, elsewhere]
    assert resolve(ref("alpha"), both, imported={"alpha": [11]}) == [(11, 0.9)]
    assert resolve(ref("alpha"), both, imported_files=(3,)) == [(11, 0.8)]
    assert resolve(ref("alpha"), both) == [(10, 0.6)]
    assert resolve(ref("alpha"), [elsewhere]) == [(11, 0.5)]


def test_ambiguous_global_name_stays_unresolved() -> None:
    assert resolve(ref("alpha"), [candidate(10, 3, "alpha"), candidate(11, 5, "alpha")]) == []


def test_base_classes_resolve_only_to_types() -> None:
    candidates = [candidate(10, 2, "Base", SymbolKind.FUNCTION), candidate(11, 3, "Base", SymbolKind.CLASS)]
    assert resolve(ref("Base", RefKind.INHERIT), candidates) == [(11, 0.5)]


def test_imports_resolve_to_modules_and_definitions() -> None:
    module = candidate(20, 2, "pkg.core", SymbolKind.MODULE)
    other_module = candidate(21, 3, "other.core", SymbolKind.MODULE)
    assert [t.node_id for t in resolve_import(ref("pkg.core", RefKind.IMPORT), [module, other_module])] == [
        20
    ]
    assert [t.node_id for t in resolve_import(ref(".core", RefKind.IMPORT), [module, other_module])] == [20]
    definition = candidate(22, 2, "alpha")
    assert [t.node_id for t in resolve_import(ref("pkg.core.alpha", RefKind.IMPORT), [definition])] == [22]
    external = resolve_import(ref("numpy.linalg", RefKind.IMPORT), [module])
    assert external == []


def test_relative_path_import_in_typescript() -> None:
    view = Candidate(30, 5, SymbolKind.MODULE, "web.src.view", None, "web/src/view.ts")
    importer = NameUse(9, "web/src/app.ts", RefKind.IMPORT, "./view", "view")
    assert [t.node_id for t in resolve_import(importer, [view])] == [30]
    escaping = NameUse(9, "web/src/app.ts", RefKind.IMPORT, "../../../view", "view")
    assert resolve_import(escaping, [view]) == []
