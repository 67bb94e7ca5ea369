"""The languages smartctx can parse, and which files belong to each.

Everything that differs between languages lives here or in ``queries/<name>-tags.scm``; the
extraction code in ``extract.py`` is the same for all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from types import MappingProxyType


@dataclass(frozen=True)
class LanguageSpec:
    """One language: its name in the index, its file extensions, and where its grammar lives.

    ``grammar_module`` and ``grammar_entry`` name the grammar wheel's module and the function in it
    that returns the ``TSLanguage`` pointer; they are loader details for ``extract.py``.
    ``import_separator`` joins an import's source path to each name imported from it
    (``from a.b import c`` → ``a.b.c``, ``use std::io::{Read}`` → ``std::io::Read``).
    """

    name: str
    extensions: tuple[str, ...]
    grammar_module: str = field(repr=False)
    grammar_entry: str = field(default="language", repr=False)
    import_separator: str = field(default=".", repr=False)


_SPECS = (
    LanguageSpec("python", (".py", ".pyi", ".pyw"), "tree_sitter_python"),
    LanguageSpec("javascript", (".js", ".mjs", ".cjs", ".jsx"), "tree_sitter_javascript"),
    LanguageSpec("typescript", (".ts", ".mts", ".cts"), "tree_sitter_typescript", "language_typescript"),
    LanguageSpec("tsx", (".tsx",), "tree_sitter_typescript", "language_tsx"),
    LanguageSpec("go", (".go",), "tree_sitter_go"),
    LanguageSpec("rust", (".rs",), "tree_sitter_rust", import_separator="::"),
    LanguageSpec("java", (".java",), "tree_sitter_java"),
    LanguageSpec("c", (".c", ".h"), "tree_sitter_c"),
    LanguageSpec(
        "cpp", (".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"), "tree_sitter_cpp"
    ),
    LanguageSpec("csharp", (".cs",), "tree_sitter_c_sharp"),
    LanguageSpec("ruby", (".rb", ".rake", ".gemspec"), "tree_sitter_ruby"),
    LanguageSpec("php", (".php", ".phtml"), "tree_sitter_php", "language_php", import_separator="\\"),
    LanguageSpec("kotlin", (".kt", ".kts"), "tree_sitter_kotlin"),
    LanguageSpec("scala", (".scala", ".sc"), "tree_sitter_scala"),
    LanguageSpec("bash", (".sh", ".bash"), "tree_sitter_bash"),
    LanguageSpec("lua", (".lua",), "tree_sitter_lua"),
)

LANGUAGES: Mapping[str, LanguageSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})

_LANGUAGE_BY_EXTENSION: Mapping[str, str] = MappingProxyType(
    {extension: spec.name for spec in _SPECS for extension in spec.extensions}
)


def language_for_path(path: str) -> str | None:
    """The language of ``path`` judged by its extension (case-insensitive), or ``None``."""
    return _LANGUAGE_BY_EXTENSION.get(PurePath(path).suffix.lower())


def is_source(path: str) -> bool:
    """Whether the index parses ``path``: its extension names a supported language."""
    return language_for_path(path) is not None
