"""Bytes → symbols and references, for every language in ``languages.py``.

Language support is data: each language has one tree-sitter query, ``queries/<name>-tags.scm``,
written in one capture convention, and everything below is the same for all languages.

Capture convention
------------------
Every pattern carries exactly one *role* capture, on the node the pattern is about:

``@definition.<kind>``
    A definition; ``<kind>`` is a ``SymbolKind`` value (class, struct, interface, enum, trait,
    type, function, method, constant, module). The captured node gives the symbol's span and
    the start of its signature.
``@reference.call`` / ``@reference.inherit`` / ``@reference.import`` / ``@reference.type``
    A use of a name: a call, a base class or implemented interface, an import, or a type used in
    an annotation, a ``new`` expression or a declaration (stored as ``RefKind.REFERENCE``).

and these helper captures, which only mean something beside a role capture:

``@name`` (required)
    The identifier: the defined name, the called name (``save`` in ``a.b.save()``), the base
    class, or the imported path. One match may capture several ``@name`` nodes; each becomes a
    reference of its own.
``@doc`` (optional, definitions)
    The node holding the definition's documentation when it lives inside the definition (the
    Python docstring). Without it, the doc is the run of comments on the lines right above the
    definition.
``@scope`` (optional)
    The type a definition belongs to when it is written outside that type's body: a Go receiver,
    the type of a Rust ``impl``, the ``Foo`` of C++ ``void Foo::bar()``. It is inserted into the
    qualified name (``Foo.bar``) and becomes the parent. Beside a reference it names the
    definition the reference belongs to (``impl Display for Shelf`` inherits from ``Shelf``).
``@module`` (optional, imports)
    The path the ``@name`` is imported from (``a.b`` in ``from a.b import c``); the two are joined
    with the language's ``import_separator``. A path that the grammar writes as a row of sibling
    nodes (Scala's ``import a.b.c``) is captured as several ``@module`` nodes in one pattern and
    read as written from the first to the last.

Captures whose name starts with ``_`` only feed predicates and are ignored.

Rules applied in code rather than per language:

- A definition's parent is the innermost definition whose node contains it; qualified names are
  the parents' names joined with dots.
- Nothing deeper than ``MAX_QUERY_START_DEPTH`` levels in the syntax tree is matched, but for the
  definitions of a file where some were folded (below), which are looked for in windows of that
  depth all the way down, so that each folded one is named.
- A definition nested deeper than ``MAX_DEFINITION_DEPTH`` or whose qualified name would be longer
  than ``MAX_QUALIFIED_NAME_CHARS`` is folded into its innermost kept ancestor: it is no symbol of
  its own, its lines are that ancestor's text and its references are that ancestor's. The result
  names it (``ParseResult.folded``) with that ancestor, so the index can count it and say where it is.
- A ``function`` whose parent is class-like (class, struct, interface, enum, trait) is a ``method``.
- A definition wrapped by its decorators or template parameters (Python ``decorated_definition``,
  C++ ``template <…>``) or preceded by attribute or decorator siblings (Rust ``#[derive]``,
  TypeScript member decorators) has its span start at the first of them; annotations at its start
  (Java ``@Override``) are in the span but not in the signature.
- A signature is the definition's source up to its body (the first node found breadth-first that
  is a ``body`` field or a block-like node); constants, type aliases and bodiless prototypes
  use their first line.
- A namespace written without braces (C# ``namespace A.B;``, PHP ``namespace App;``) holds the
  rest of the file; a namespace named by a path (``App\\Billing``, ``a::b``) is dotted (``App.Billing``).
- References whose ``@name`` is the name of a definition are dropped (so a type query that
  matches every type identifier does not report a class as using itself), and a name captured
  both as a type and as a call, base or import is only the latter.
- A reference's ``source`` is the qualified name of the innermost definition around it.

Input is taken as UTF-8; invalid sequences are replaced before parsing (lines stay where they are).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from smartctx.core.files import lf_line_ends
from smartctx.core.model import FoldedDefinition, ParseResult, Reference, RefKind, Span, Symbol, SymbolKind
from smartctx.parsing.edits import edit_between
from smartctx.parsing.languages import LANGUAGES, LanguageSpec
from smartctx.parsing.summary import (
    doc_from_comments,
    doc_from_docstring,
    signature_from_first_line,
    signature_from_header,
)

QUERY_DIRECTORY = Path(__file__).parent / "queries"
TEXT_ENCODING = "utf-8"
MAX_UNCLOSED_BRACKETS = 2_000
"""Broken input with more unclosed brackets than this yields no symbols.

Tree-sitter's error recovery nests every unclosed bracket, and running a query over that nesting
costs time quadratic in their number (seconds for 20,000 of them); no real source file, however
broken, leaves thousands of brackets open. Files that parse cleanly are never cut off.
"""

MAX_DEFINITION_DEPTH = 24
"""Definitions nested deeper than this are folded into the ancestor at this depth.

Every symbol stores its qualified name, the whole chain of its ancestors, so a file of n nested
definitions costs n² in names, hashes and index (10,000 nested functions in 269 KB took 91 s,
1.8 GB of memory and 2.3 GB of index). Folding rather than dropping the file keeps the outer
definitions as symbols and the deep text searchable under the deepest kept one; real code is
rarely nested past a handful of levels.
"""
MAX_QUALIFIED_NAME_CHARS = 1_000
"""A definition whose qualified name would be longer than this is folded, like one nested too deep,
so that one absurdly long identifier cannot make every name below it as long."""

MAX_QUERY_START_DEPTH = 2_000
"""Query patterns start no deeper than this in the syntax tree.

Below some ten thousand levels tree-sitter's query cursor slows down sharply (50,000 nested calls,
150 KB, took 82 s to query and 0.26 s to parse); with this bound the same file takes 0.01 s.
Code this deep is generated or hostile; its text still belongs to the enclosing symbol, it only
yields no definitions or references of its own.
"""

# Documents whose last syntax tree is kept for incremental parsing: the buffers open in an editor.
# A tree takes a few times its source's size; the oldest is dropped first.
DOCUMENT_TREES = 16

_NAME = "name"
_DOC = "doc"
_SCOPE = "scope"
_MODULE = "module"
_HELPER_CAPTURE_PREFIX = "_"

_DEFINITION_KINDS = {f"definition.{kind.value}": kind for kind in SymbolKind}
_REFERENCE_KINDS = {
    "reference.call": RefKind.CALL,
    "reference.inherit": RefKind.INHERIT,
    "reference.import": RefKind.IMPORT,
    "reference.type": RefKind.REFERENCE,
}
_HELPER_CAPTURES = frozenset({_NAME, _DOC, _SCOPE, _MODULE})
_IMPORT = RefKind.IMPORT
_TYPE = RefKind.REFERENCE
_USE_POSITION = itemgetter(0)

_CLASS_LIKE_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE, SymbolKind.ENUM, SymbolKind.TRAIT}
)
_BODYLESS_KINDS = frozenset({SymbolKind.CONSTANT, SymbolKind.TYPE})

# Node types, across the grammars, that hold a definition's body when no ``body`` field does.
_BLOCK_TYPES = frozenset(
    {
        "block",
        "body_statement",
        "class_body",
        "compound_statement",
        "declaration_list",
        "enum_body",
        "enumerator_list",
        "field_declaration_list",
        "interface_body",
        "statement_block",
        "template_body",
        "enum_class_body",
        "function_body",
    }
)
# How deep below the definition node the body is looked for (Go: type_spec → struct_type → fields).
_MAX_BODY_DEPTH = 3
# Nodes that wrap a definition together with its decorators or template parameters.
_DECORATOR_WRAPPER_TYPES = frozenset({"decorated_definition", "template_declaration"})
# Sibling nodes written before a definition that belong to it.
_ATTRIBUTE_SIBLING_TYPES = frozenset({"attribute_item", "decorator"})
# Annotations and attributes written at the start of a definition, possibly inside its modifier list.
_ANNOTATION_TYPES = frozenset({"annotation", "marker_annotation", "attribute_list", "decorator"})
_MODIFIER_LIST_TYPES = frozenset({"modifiers"})
# Namespace declarations that, written without braces, hold the rest of the file.
_OPEN_ENDED_NAMESPACE_TYPES = frozenset({"file_scoped_namespace_declaration", "namespace_definition"})
_BRACKET_PAIRS = ((b"(", b")"), (b"[", b"]"), (b"{", b"}"))
_COMMENT_TYPE_MARKER = "comment"
_WHITESPACE_BYTES = frozenset(b" \t\r\n\f\v")
_BODY_FIELD = "body"
# Quotes and brackets around an import path (``"./widget"``, ``<stdio.h>``) are not part of it.
_IMPORT_PATH_DELIMITERS = "\"'`<>"
_SCOPE_SEPARATOR = re.compile(r"::|\\|->")

# A query file whose first line is "; inherits: <language>" extends that language's query.
_INHERITS_DIRECTIVE = re.compile(r"\A; inherits: ([\w-]+)\n")
_QUERY_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|;[^\n]*')
_QUERY_CAPTURE = re.compile(r"@([\w.]+)")


@dataclass(frozen=True, slots=True)
class _Role:
    """What a query pattern's matches are: definitions of one kind or references of one kind."""

    capture: str
    definition: SymbolKind | None
    reference: RefKind | None
    has_module: bool
    has_scope: bool


@dataclass(frozen=True)
class _Grammar:
    language: Language
    query: Query
    roles: tuple[_Role, ...]
    spec: LanguageSpec
    # Whether the grammar has decorator, template or attribute nodes that open a definition, and
    # namespaces that can hold the rest of a file: looking for them costs a tree walk per symbol.
    has_preludes: bool
    has_open_namespaces: bool


@dataclass(slots=True)
class _Definition:
    kind: SymbolKind
    node: Node
    name: str
    name_node: Node
    doc_node: Node | None
    scope: str | None
    pattern_index: int
    start_byte: int
    start_line: int
    end_byte: int
    last: Node
    qualified_name: str = ""
    parent: str | None = None
    folded: bool = False
    # For a folded definition: the innermost kept ancestor, whose text it is (None: the module).
    holder: _Definition | None = None


# A reference before it knows its enclosing definition: its name's start and end byte, line,
# kind, name, and @scope.
_Use = tuple[int, int, int, RefKind, str, str | None]


class SourceParser:
    """Holds one tree_sitter.Parser and compiled Query per language, built lazily and reused
    (compile a query once per process, never per file).

    Queries are shared by every ``SourceParser`` in the process; parsers are not thread-safe, so
    use one ``SourceParser`` per thread or process.
    """

    def __init__(self) -> None:
        self._parsers: dict[str, Parser] = {}
        # The last tree of each recently parsed document, least recently used first.
        self._documents: OrderedDict[str, tuple[str, bytes, Tree]] = OrderedDict()

    def parse(self, source: bytes, language: str, *, document: str | None = None) -> ParseResult:
        """Symbols and references of ``source``; never raises on malformed input.

        A ``document`` (an open editor buffer's path, say) is parsed incrementally: its previous
        tree is edited by the change between the two texts and parsed again, which reuses what the
        change did not touch (a one-character edit in a 2,700-line file: 2 ms instead of 11) and
        gives what a fresh parse would; text with syntax errors is parsed afresh, since recovery
        from them can differ. The trees of the last ``DOCUMENT_TREES`` documents are kept.

        Raises ``ValueError`` only when ``language`` is not a key of ``LANGUAGES``.
        """
        grammar = _grammar(language)
        parser = self._parsers.get(language)
        if parser is None:
            parser = self._parsers[language] = Parser(grammar.language)
        source = lf_line_ends(_valid_utf8(source))
        tree = self._parse_tree(parser, source, language, document)
        root = tree.root_node
        if root.has_error and _unclosed_brackets(source) > MAX_UNCLOSED_BRACKETS:
            return ParseResult(language=language, symbols=(), references=(), has_errors=True)
        cursor = QueryCursor(grammar.query)
        cursor.set_max_start_depth(MAX_QUERY_START_DEPTH)
        matches = cursor.matches(root)
        definitions, uses = _collect(matches, source, grammar)
        kept = _nest(definitions)
        if any(definition.folded for definition in definitions):
            deeper = _definitions_below_query_depth(root, source, grammar, definitions)
            if deeper:
                # Nested again with the deeper ones, from a clean slate: each is folded or kept by
                # the same rules, and the ones found first keep their verdicts.
                definitions = sorted([*definitions, *deeper], key=_definition_order)
                for definition in definitions:
                    definition.folded, definition.holder = False, None
                kept = _nest(definitions)
        if grammar.has_preludes:
            _include_preludes(kept)
        return ParseResult(
            language=language,
            symbols=tuple(_symbol(definition, source, root) for definition in kept),
            references=_attribute(uses, definitions, kept),
            has_errors=root.has_error,
            folded=tuple(
                FoldedDefinition(
                    definition.name,
                    definition.start_line,
                    definition.holder.qualified_name if definition.holder is not None else None,
                )
                for definition in definitions
                if definition.folded
            ),
        )

    def forget(self, document: str) -> None:
        """Drop a document's kept tree (its buffer closed, or it is read from disk again)."""
        self._documents.pop(document, None)

    def _parse_tree(self, parser: Parser, source: bytes, language: str, document: str | None) -> Tree:
        if document is None:
            return parser.parse(source)
        previous = self._documents.pop(document, None)
        if previous is None or previous[0] != language:
            tree = parser.parse(source)
        else:
            _, old_source, old_tree = previous
            edit = edit_between(old_source, source)
            if edit is not None:
                old_tree.edit(
                    start_byte=edit.start_byte,
                    old_end_byte=edit.old_end_byte,
                    new_end_byte=edit.new_end_byte,
                    start_point=edit.start_point,
                    old_end_point=edit.old_end_point,
                    new_end_point=edit.new_end_point,
                )
            tree = parser.parse(source, old_tree)
            # Error recovery depends on which old subtrees were reused, so a tree with errors can
            # differ from a fresh parse of the same text; only an error-free one is kept as it is.
            if tree.root_node.has_error:
                tree = parser.parse(source)
        self._documents[document] = (language, source, tree)
        if len(self._documents) > DOCUMENT_TREES:
            self._documents.popitem(last=False)
        return tree


def _unclosed_brackets(source: bytes) -> int:
    return sum(source.count(opening) - source.count(closing) for opening, closing in _BRACKET_PAIRS)


def _valid_utf8(source: bytes) -> bytes:
    """``source`` with invalid UTF-8 replaced by U+FFFD.

    The query's text predicates decode captured nodes strictly and would raise on a Latin-1 or
    binary file; replacing keeps every line where it was, which is all the index records.
    """
    try:
        source.decode(TEXT_ENCODING)
    except UnicodeDecodeError:
        return source.decode(TEXT_ENCODING, errors="replace").encode(TEXT_ENCODING)
    return source


@functools.cache
def _grammar(language: str) -> _Grammar:
    spec = LANGUAGES.get(language)
    if spec is None:
        raise ValueError(f"unsupported language {language!r}; supported: {', '.join(sorted(LANGUAGES))}")
    module = importlib.import_module(spec.grammar_module)
    grammar_language = Language(getattr(module, spec.grammar_entry)())
    query_text = _query_text(language)
    query = Query(grammar_language, query_text)
    return _Grammar(
        grammar_language,
        query,
        _pattern_roles(query, query_text, language),
        spec,
        has_preludes=_has_node_types(grammar_language, _DECORATOR_WRAPPER_TYPES | _ATTRIBUTE_SIBLING_TYPES),
        has_open_namespaces=_has_node_types(grammar_language, _OPEN_ENDED_NAMESPACE_TYPES),
    )


def _has_node_types(language: Language, node_types: frozenset[str]) -> bool:
    return any(language.id_for_node_kind(node_type, True) is not None for node_type in node_types)


def _query_text(language: str) -> str:
    """The language's query, after the patterns of the language its first line inherits from."""
    text = (QUERY_DIRECTORY / f"{language}-tags.scm").read_text(encoding=TEXT_ENCODING)
    inherits = _INHERITS_DIRECTIVE.match(text)
    return f"{_query_text(inherits.group(1))}\n{text}" if inherits else text


def _pattern_roles(query: Query, query_text: str, language: str) -> tuple[_Role, ...]:
    """Each pattern's role, failing fast when a pattern strays from the capture convention."""
    query_bytes = query_text.encode(TEXT_ENCODING)
    roles: list[_Role] = []
    for index in range(query.pattern_count):
        pattern = query_bytes[query.start_byte_for_pattern(index) : query.end_byte_for_pattern(index)]
        code = _QUERY_STRING_OR_COMMENT.sub("", pattern.decode(TEXT_ENCODING))
        captures = {
            name for name in _QUERY_CAPTURE.findall(code) if not name.startswith(_HELPER_CAPTURE_PREFIX)
        }
        role_captures = [name for name in captures if name in _DEFINITION_KINDS or name in _REFERENCE_KINDS]
        unknown = captures - set(role_captures) - _HELPER_CAPTURES
        if len(role_captures) != 1 or _NAME not in captures or unknown:
            raise ValueError(
                f"{language}-tags.scm pattern {index} needs one role capture and @name, "
                f"and no unknown captures; it has {sorted(captures)}"
            )
        capture = role_captures[0]
        roles.append(
            _Role(
                capture,
                _DEFINITION_KINDS.get(capture),
                _REFERENCE_KINDS.get(capture),
                has_module=_MODULE in captures,
                has_scope=_SCOPE in captures,
            )
        )
    return tuple(roles)


def _collect(
    matches: Sequence[tuple[int, dict[str, list[Node]]]], source: bytes, grammar: _Grammar
) -> tuple[list[_Definition], list[_Use]]:
    """Turns query matches into definitions (outer before inner, in source order) and uses."""
    # The inner loop runs once per captured reference, tens of thousands of times in a large file,
    # so it keeps to plain tuples, local names and the captures the pattern can have.
    definitions: dict[int, _Definition] = {}
    uses: list[_Use] = []
    roles = grammar.roles
    for pattern_index, captures in matches:
        role = roles[pattern_index]
        kind = role.reference
        if kind is None:
            _add_definition(definitions, role, captures, pattern_index, source, grammar)
            continue
        module_nodes = captures.get(_MODULE) if role.has_module else None
        scope = _scope(_first(captures.get(_SCOPE)), source) if role.has_scope else None
        for name_node in captures.get(_NAME, ()):
            start, end = name_node.start_byte, name_node.end_byte
            name = source[start:end].decode(TEXT_ENCODING, errors="replace")
            if kind is _IMPORT:
                name = _import_name(name, module_nodes, source, grammar.spec)
            uses.append((start, end, name_node.start_point.row + 1, kind, name, scope))
    return sorted(definitions.values(), key=_definition_order), uses


def _definitions_below_query_depth(
    root: Node, source: bytes, grammar: _Grammar, found: Sequence[_Definition]
) -> list[_Definition]:
    """The definitions deeper in the tree than one query reaches, not among ``found``: the query
    runs again from every node at a multiple of ``MAX_QUERY_START_DEPTH``, each run as cheap as
    the first, and only its definitions are taken (the references that deep stay unmatched)."""
    windows = _nodes_at_depth_multiples(root, MAX_QUERY_START_DEPTH)
    if not windows:
        return []
    known = {definition.name_node.start_byte for definition in found}
    deeper: dict[int, _Definition] = {}
    cursor = QueryCursor(grammar.query)
    cursor.set_max_start_depth(MAX_QUERY_START_DEPTH)
    for window in windows:
        for pattern_index, captures in cursor.matches(window):
            role = grammar.roles[pattern_index]
            if role.reference is None:
                _add_definition(deeper, role, captures, pattern_index, source, grammar)
    return [definition for start, definition in deeper.items() if start not in known]


def _nodes_at_depth_multiples(root: Node, step: int) -> list[Node]:
    """The nodes ``step``, ``2 * step``, … levels below ``root`` that have children, in tree order:
    one walk of the tree, with a cursor (recursion would overflow on a tree this deep)."""
    found: list[Node] = []
    cursor = root.walk()
    depth = 0
    while True:
        if depth and depth % step == 0 and cursor.node is not None and cursor.node.child_count:
            found.append(cursor.node)
        if cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found
            depth -= 1


def _definition_order(definition: _Definition) -> tuple[int, int, int]:
    """Source order, a container before what it contains."""
    return (definition.start_byte, -definition.end_byte, definition.name_node.start_byte)


def _add_definition(
    definitions: dict[int, _Definition],
    role: _Role,
    captures: dict[str, list[Node]],
    pattern_index: int,
    source: bytes,
    grammar: _Grammar,
) -> None:
    """Records a definition; when patterns disagree about one name, the earliest pattern wins."""
    name_nodes = captures.get(_NAME)
    kind = role.definition
    if not name_nodes or kind is None:
        return
    name_node = name_nodes[0]
    name = _text(source, name_node).strip()
    if kind is SymbolKind.MODULE:
        # A namespace named by a path (App\Billing, a::b) reads like every other qualified name.
        name = _SCOPE_SEPARATOR.sub(".", name)
    known = definitions.get(name_node.start_byte)
    if not name or (known is not None and known.pattern_index < pattern_index):
        return
    node = captures[role.capture][0]
    last = _last_node(node) if grammar.has_open_namespaces else node
    definitions[name_node.start_byte] = _Definition(
        kind=kind,
        node=node,
        name=name,
        name_node=name_node,
        doc_node=_first(captures.get(_DOC)),
        scope=_scope(_first(captures.get(_SCOPE)), source),
        pattern_index=pattern_index,
        start_byte=node.start_byte,
        start_line=node.start_point.row + 1,
        end_byte=last.end_byte,
        last=last,
    )


def _first(nodes: list[Node] | None) -> Node | None:
    return nodes[0] if nodes else None


def _scope(node: Node | None, source: bytes) -> str | None:
    """The dotted form of a ``@scope`` capture (``a::Foo`` → ``a.Foo``), or ``None``."""
    if node is None:
        return None
    return _SCOPE_SEPARATOR.sub(".", _text(source, node)).strip(". ") or None


def _include_preludes(definitions: list[_Definition]) -> None:
    """Moves each definition's start to its first decorator or attribute.

    This runs after nesting, on kept definitions only, because finding a node's parent or previous
    sibling costs time in its depth in the tree: for every definition of 10,000 nested functions it
    took seconds. Moving the start within the container does not change what contains what.
    """
    for definition in definitions:
        first = _first_node(definition.node)
        definition.start_byte = first.start_byte
        definition.start_line = first.start_point.row + 1


def _first_node(node: Node) -> Node:
    """Where a definition starts once its decorators and attributes are counted in."""
    parent = node.parent
    if parent is not None and parent.type in _DECORATOR_WRAPPER_TYPES:
        return parent
    first = node
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in _ATTRIBUTE_SIBLING_TYPES:
        first = sibling
        sibling = sibling.prev_named_sibling
    return first


def _last_node(node: Node) -> Node:
    """The node a definition ends with: a namespace written without braces
    (C# ``namespace A.B;``, PHP ``namespace App;``) holds the rest of the file."""
    if node.type in _OPEN_ENDED_NAMESPACE_TYPES and node.child_by_field_name(_BODY_FIELD) is None:
        return node.parent or node
    return node


def _import_name(name: str, module_nodes: list[Node] | None, source: bytes, spec: LanguageSpec) -> str:
    path = name.strip().strip(_IMPORT_PATH_DELIMITERS)
    if not module_nodes:
        return path
    module_text = _decode(source[module_nodes[0].start_byte : module_nodes[-1].end_byte])
    module = module_text.strip().strip(_IMPORT_PATH_DELIMITERS)
    if not module or module.endswith(spec.import_separator):
        return module + path
    return f"{module}{spec.import_separator}{path}"


def _nest(definitions: list[_Definition]) -> list[_Definition]:
    """Fills in parents and qualified names, and turns functions in class-like parents into methods;
    returns the definitions that are kept as symbols, leaving out those folded into an ancestor.

    ``definitions`` is in source order with outer definitions before the ones they contain, so a
    stack of the open definitions yields each one's innermost container. Whatever a folded
    definition contains is folded too, into the same kept ancestor.
    """
    kept: list[_Definition] = []
    open_definitions: list[_Definition] = []
    for definition in definitions:
        while open_definitions and not _contains(open_definitions[-1], definition):
            open_definitions.pop()
        container = open_definitions[-1] if open_definitions else None
        open_definitions.append(definition)
        if container is not None and (container.folded or len(open_definitions) > MAX_DEFINITION_DEPTH):
            definition.folded = True
            definition.holder = container.holder if container.folded else container
            continue
        if (
            container is not None
            and definition.kind is SymbolKind.FUNCTION
            and container.kind in _CLASS_LIKE_KINDS
        ):
            definition.kind = SymbolKind.METHOD
        parent = container.qualified_name if container is not None else None
        if definition.scope is not None:
            parent = f"{parent}.{definition.scope}" if parent else definition.scope
        qualified_name = f"{parent}.{definition.name}" if parent else definition.name
        if len(qualified_name) > MAX_QUALIFIED_NAME_CHARS:
            definition.folded = True
            definition.holder = container
            continue
        definition.parent = parent
        definition.qualified_name = qualified_name
        kept.append(definition)
    return kept


def _contains(outer: _Definition, inner: _Definition) -> bool:
    """Whether ``inner`` lies inside ``outer``; two names defined by one node are siblings."""
    same_extent = outer.start_byte == inner.start_byte and outer.end_byte == inner.end_byte
    return not same_extent and outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _symbol(definition: _Definition, source: bytes, root: Node) -> Symbol:
    return Symbol(
        kind=definition.kind,
        name=definition.name,
        qualified_name=definition.qualified_name,
        span=_span(definition.start_line, definition.last, source),
        signature=_signature(definition, source),
        doc=_doc(definition, source, root),
        parent=definition.parent,
    )


def _span(start_line: int, node: Node, source: bytes) -> Span:
    # Some grammars let a definition swallow the whitespace after it (a final newline, or the
    # indentation of the next line in Scala); the span ends at its last visible character.
    end = visible_end = node.end_byte
    while visible_end > node.start_byte and source[visible_end - 1] in _WHITESPACE_BYTES:
        visible_end -= 1
    end_line = node.end_point.row + 1 - source.count(b"\n", visible_end, end)
    return Span(start_line, max(start_line, end_line))


def _signature(definition: _Definition, source: bytes) -> str:
    node = definition.node
    start = _signature_start(node)
    body = None if definition.kind in _BODYLESS_KINDS else _body(node, definition.name_node.end_byte)
    if body is None:
        line_end = source.find(b"\n", start, node.end_byte)
        first_line_end = node.end_byte if line_end < 0 else line_end
        return signature_from_first_line(_decode(source[start:first_line_end]))
    header_end = body.start_byte
    # A comment between the header and the body (Python's "def f():  # why") is not signature.
    for child in node.children:
        if (
            _COMMENT_TYPE_MARKER in child.type
            and definition.name_node.end_byte <= child.start_byte < header_end
        ):
            header_end = child.start_byte
            break
    return signature_from_header(_decode(source[start:header_end]))


def _signature_start(node: Node) -> int:
    """Where the signature starts: after the annotations and attributes that open the definition.

    They are part of the span, like Python's decorators, but not of the signature
    (``@Override public void close()`` reads as ``public void close()``).
    """
    for child in node.children:
        if child.type in _ANNOTATION_TYPES or _COMMENT_TYPE_MARKER in child.type:
            continue
        if child.type not in _MODIFIER_LIST_TYPES:
            return child.start_byte
        for modifier in child.children:
            if modifier.type not in _ANNOTATION_TYPES and _COMMENT_TYPE_MARKER not in modifier.type:
                return modifier.start_byte
    return node.start_byte


def _body(node: Node, after_byte: int) -> Node | None:
    """The definition's body: breadth-first, the first ``body`` field or block-like node."""
    level = [node]
    for _ in range(_MAX_BODY_DEPTH):
        next_level: list[Node] = []
        for candidate in level:
            body = candidate.child_by_field_name(_BODY_FIELD)
            if body is not None and body.start_byte >= after_byte:
                return body
            for child in candidate.named_children:
                if child.type in _BLOCK_TYPES and child.start_byte >= after_byte:
                    return child
                next_level.append(child)
        level = next_level
    return None


def _doc(definition: _Definition, source: bytes, root: Node) -> str:
    if definition.doc_node is not None:
        return doc_from_docstring(_text(source, definition.doc_node))
    comments = _comments_above(definition.start_byte, source, root)
    return doc_from_comments(_text(source, comment) for comment in comments)


def _comments_above(start_byte: int, source: bytes, root: Node) -> list[Node]:
    """The comments on the lines right above ``start_byte``, up to a blank or non-comment line.

    This walks the text line by line instead of the tree's siblings because grammars disagree on
    where a comment before a dedented definition hangs (Python puts it inside the previous block).
    """
    comments: list[Node] = []
    line_start = source.rfind(b"\n", 0, start_byte) + 1
    while line_start > 0:
        previous_start = source.rfind(b"\n", 0, line_start - 1) + 1
        content_end = previous_start + len(source[previous_start : line_start - 1].rstrip())
        if content_end == previous_start:
            break
        comment = _comment_at(root.descendant_for_byte_range(content_end - 1, content_end))
        if comment is None:
            break
        comment_line_start = source.rfind(b"\n", 0, comment.start_byte) + 1
        if source[comment_line_start : comment.start_byte].strip():
            break
        comments.append(comment)
        line_start = comment_line_start
    comments.reverse()
    return comments


def _comment_at(node: Node | None) -> Node | None:
    """The outermost comment node around ``node`` (Rust nests doc parts inside its comments)."""
    while node is not None and not node.is_named:
        node = node.parent
    if node is None or _COMMENT_TYPE_MARKER not in node.type:
        return None
    while node.parent is not None and _COMMENT_TYPE_MARKER in node.parent.type:
        node = node.parent
    return node


def _attribute(
    uses: list[_Use], definitions: Sequence[_Definition], kept: Sequence[_Definition]
) -> tuple[Reference, ...]:
    """Gives each use the qualified name of its innermost enclosing kept definition, dropping repeats.

    A definition's own name (kept or folded) is not a use of it, and a name captured both as a type and as
    something more specific (a call, a base, an import) is only the specific use. Uses and
    definitions are both swept in source order, keeping the chain of definitions open at the
    current position on a stack.
    """
    defined = {(d.name_node.start_byte, d.name_node.end_byte) for d in definitions}
    specific = defined | {(start, end) for start, end, _, kind, _, _ in uses if kind is not _TYPE}
    attributed: dict[tuple[RefKind, str, int, str | None], None] = {}
    open_definitions: list[_Definition] = []
    next_definition = 0
    uses.sort(key=_USE_POSITION)
    for position, end, line, kind, name, scope in uses:
        if not name or (position, end) in (specific if kind is _TYPE else defined):
            continue
        while next_definition < len(kept) and kept[next_definition].start_byte <= position:
            entering = kept[next_definition]
            while open_definitions and not _contains(open_definitions[-1], entering):
                open_definitions.pop()
            open_definitions.append(entering)
            next_definition += 1
        while open_definitions and open_definitions[-1].end_byte <= position:
            open_definitions.pop()
        container = open_definitions[-1].qualified_name if open_definitions else None
        source = container if scope is None else f"{container}.{scope}" if container else scope
        attributed[kind, name, line, source] = None
    return tuple(Reference(kind, name, line, source) for kind, name, line, source in attributed)


def _text(source: bytes, node: Node) -> str:
    return _decode(source[node.start_byte : node.end_byte])


def _decode(raw: bytes) -> str:
    return raw.decode(TEXT_ENCODING, errors="replace")
