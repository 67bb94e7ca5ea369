"""Does smartctx's parser see the code of the commit dev set's repositories?

For every source file of a repository at its pinned head (``commit_tasks.is_source_path``), the
grammar's own syntax tree is compared with the symbols smartctx's tags queries extract:

- **recall**: of the syntax nodes that define a function or method (C ``function_definition``, Go
  ``method_declaration``, Ruby ``singleton_method``, …) and of those that define a named type (class,
  struct, enum, interface, trait, module), the share that became a symbol of that name spanning the
  node;
- **lines**: the share of non-blank lines inside a function or method symbol and inside any symbol;
  each line outside every function is named by the kind of symbol around it (``file`` for none) and
  the syntax node written there, so a construct the queries miss (a C macro, a Ruby ``included do``
  block) shows up by name;
- files the grammar could not parse cleanly (an ``ERROR`` node somewhere).

It reads blobs straight from the fetched copies, so nothing is checked out.
"""

from __future__ import annotations

import importlib
import subprocess
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from bench.quality.commit_tasks import DevRepo, is_source_path
from bench.quality.swebench import format_table
from smartctx.core.model import Symbol, SymbolKind
from smartctx.parsing.extract import SourceParser
from smartctx.parsing.languages import LANGUAGES, language_for_path

# Syntax nodes that define a function or method, per grammar.
FUNCTION_NODES: dict[str, tuple[str, ...]] = {
    "c": ("function_definition",),
    "go": ("function_declaration", "method_declaration"),
    "rust": ("function_item",),
    "typescript": ("function_declaration", "generator_function_declaration", "method_definition"),
    "tsx": ("function_declaration", "generator_function_declaration", "method_definition"),
    "javascript": ("function_declaration", "generator_function_declaration", "method_definition"),
    "java": ("method_declaration", "constructor_declaration"),
    "ruby": ("method", "singleton_method"),
    "bash": ("function_definition",),
}
# Syntax nodes that define a named type (or a Ruby module), per grammar; C's only with a body.
TYPE_NODES: dict[str, tuple[str, ...]] = {
    "c": ("struct_specifier", "enum_specifier", "union_specifier"),
    "go": ("type_spec",),
    "rust": ("struct_item", "enum_item", "trait_item", "union_item"),
    "typescript": (
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "enum_declaration",
    ),
    "tsx": ("class_declaration", "abstract_class_declaration", "interface_declaration", "enum_declaration"),
    "javascript": ("class_declaration",),
    "java": (
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    ),
    "ruby": ("class", "module"),
}
FUNCTION_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD})
# Examples of missed definitions kept per repository, to show what the queries do not match.
MISS_EXAMPLES = 8
TOP_OUTSIDE_NODES = 8


@dataclass
class Coverage:
    """One repository's figures (see the module docstring)."""

    repo: str
    files: int = 0
    files_with_errors: int = 0
    lines: int = 0
    lines_in_functions: int = 0
    lines_in_symbols: int = 0
    functions: int = 0
    functions_found: int = 0
    types: int = 0
    types_found: int = 0
    languages: Counter[str] = field(default_factory=Counter)
    outside: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "files": self.files,
            "files_with_errors": self.files_with_errors,
            "languages": dict(self.languages),
            "lines": self.lines,
            "lines_in_functions": self.lines_in_functions,
            "lines_in_symbols": self.lines_in_symbols,
            "functions": self.functions,
            "functions_found": self.functions_found,
            "types": self.types,
            "types_found": self.types_found,
            "lines_outside_by_top_node": dict(self.outside.most_common()),
            "missed_examples": self.misses,
        }


class _Grammars:
    """A tree-sitter parser and a definition-node query per language, built on first use."""

    def __init__(self) -> None:
        self._parsers: dict[str, tuple[Parser, Query | None]] = {}

    def get(self, language: str) -> tuple[Parser, Query | None]:
        if language not in self._parsers:
            spec = LANGUAGES[language]
            grammar = Language(getattr(importlib.import_module(spec.grammar_module), spec.grammar_entry)())
            kinds = [*FUNCTION_NODES.get(language, ()), *TYPE_NODES.get(language, ())]
            query = Query(grammar, " ".join(f"({kind}) @{kind}" for kind in kinds)) if kinds else None
            self._parsers[language] = (Parser(grammar), query)
        return self._parsers[language]


def _blobs(git_dir: Path, commit: str) -> Iterator[tuple[str, bytes]]:
    """``(path, content)`` of every source file in ``commit``."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wanted = []
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and mode != "120000" and is_source_path(path):
            wanted.append((path, sha))
    batch = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert batch.stdin is not None and batch.stdout is not None
    batch.stdin.write("".join(f"{sha}\n" for _, sha in wanted).encode())
    batch.stdin.close()
    for path, _ in wanted:
        header = batch.stdout.readline().split()
        size = int(header[2])
        content = batch.stdout.read(size)
        batch.stdout.read(1)
        yield path, content
    batch.wait()


def _definition_name(node: Node) -> str | None:
    """The name a definition node declares, or None for an anonymous one."""
    if node.type == "function_definition" and node.child_by_field_name("declarator") is not None:
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.child_by_field_name("declarator") is not None:
            declarator = declarator.child_by_field_name("declarator")
        name = declarator
    else:
        name = node.child_by_field_name("name")
    if name is None or name.text is None:
        return None
    # A Ruby `class Foo::Bar` or a C++-style qualified name: the symbol carries the last part.
    return name.text.decode(errors="replace").split("::")[-1].split(".")[-1]


def _found(node: Node, name: str, symbols: Sequence[Symbol]) -> bool:
    start, end = node.start_point[0] + 1, node.end_point[0] + 1
    return any(
        symbol.name == name and symbol.span.start_line <= start and end <= symbol.span.end_line
        for symbol in symbols
    )


def _holder(symbols: Sequence[Symbol], line: int) -> str:
    """The kind of the innermost symbol around ``line`` ("file" when none)."""
    around = [s for s in symbols if s.span.start_line <= line <= s.span.end_line]
    if not around:
        return "file"
    return min(around, key=lambda s: s.span.end_line - s.span.start_line).kind.value


def _statement(root: Node, line: int, text: bytes) -> str:
    """The type of the outermost syntax node that starts at ``line``'s first character (the
    statement or declaration written there), or of the node the line continues."""
    column = len(text) - len(text.lstrip())
    node = root.descendant_for_point_range((line - 1, column), (line - 1, column))
    if node is None:
        return "?"
    while node.parent is not None and node.parent.start_point == node.start_point and node.parent != root:
        node = node.parent
    return node.type


def file_coverage(
    path: str, source: bytes, parser: SourceParser, grammars: _Grammars, coverage: Coverage
) -> None:
    """Add one file's figures to ``coverage``."""
    language = language_for_path(path)
    if language is None:
        return
    symbols = parser.parse(source, language).symbols
    ts_parser, query = grammars.get(language)
    root = ts_parser.parse(source).root_node
    coverage.files += 1
    coverage.languages[language] += 1
    coverage.files_with_errors += int(root.has_error)
    lines = source.split(b"\n")
    in_function, in_symbol = set(), set()
    for symbol in symbols:
        span = range(symbol.span.start_line, symbol.span.end_line + 1)
        if symbol.kind is not SymbolKind.MODULE:
            in_symbol.update(span)
        if symbol.kind in FUNCTION_KINDS:
            in_function.update(span)
    blank = {number for number, text in enumerate(lines, 1) if not text.strip()}
    counted = set(range(1, len(lines) + 1)) - blank
    coverage.lines += len(counted)
    coverage.lines_in_functions += len(counted & in_function)
    coverage.lines_in_symbols += len(counted & in_symbol)
    for line in sorted(counted - in_function):
        coverage.outside[f"{_holder(symbols, line)} > {_statement(root, line, lines[line - 1])}"] += 1
    if query is None:
        return
    for kind, nodes in QueryCursor(query).captures(root).items():
        is_function = kind in FUNCTION_NODES.get(language, ())
        for node in nodes:
            if not is_function and node.child_by_field_name("body") is None and language == "c":
                continue
            name = _definition_name(node)
            if name is None:
                continue
            found = _found(node, name, symbols)
            if is_function:
                coverage.functions += 1
                coverage.functions_found += int(found)
            else:
                coverage.types += 1
                coverage.types_found += int(found)
            if not found and len(coverage.misses) < MISS_EXAMPLES:
                coverage.misses.append(f"{path}:{node.start_point[0] + 1} {node.type} {name}")


def repo_coverage(repo: DevRepo, git_dir: Path) -> Coverage:
    """The figures of ``repo`` at its pinned head."""
    coverage = Coverage(repo.name)
    parser, grammars = SourceParser(), _Grammars()
    for path, source in _blobs(git_dir, repo.head):
        file_coverage(path, source, parser, grammars, coverage)
    return coverage


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def print_coverage(reports: Sequence[Coverage]) -> None:
    print(
        format_table(
            [
                "repo",
                "files",
                "parse errors",
                "functions found",
                "types found",
                "lines in functions",
                "lines in symbols",
            ],
            [
                [
                    report.repo,
                    f"{report.files:,}",
                    _share(report.files_with_errors, report.files),
                    f"{_share(report.functions_found, report.functions)} of {report.functions:,}",
                    f"{_share(report.types_found, report.types)} of {report.types:,}",
                    _share(report.lines_in_functions, report.lines),
                    _share(report.lines_in_symbols, report.lines),
                ]
                for report in reports
            ],
        )
    )
    for report in reports:
        outside = report.lines - report.lines_in_functions
        top = ", ".join(
            f"{node} {_share(count, outside)}"
            for node, count in report.outside.most_common(TOP_OUTSIDE_NODES)
        )
        print(f"\n{report.repo}: lines outside functions, by holder > syntax node: {top}")
        for miss in report.misses:
            print(f"  missed: {miss}")
