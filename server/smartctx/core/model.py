"""Plain values shared by every layer: what a parse yields and what the index holds.

Every type here is frozen and knows nothing of SQL, JSON or LSP, so each layer can pass them on
without copying and tests can compare them with ``==``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class SymbolKind(str, Enum):
    """What a definition is. The values are stored in the index, so they never change meaning."""

    MODULE = "module"
    CLASS = "class"
    STRUCT = "struct"
    INTERFACE = "interface"
    ENUM = "enum"
    TRAIT = "trait"
    TYPE = "type"
    FUNCTION = "function"
    METHOD = "method"
    CONSTANT = "constant"


class RefKind(str, Enum):
    """How one piece of code points at another: the edge kinds of architecture.md, *The index*."""

    CALL = "calls"
    REFERENCE = "references"
    IMPORT = "imports"
    INHERIT = "inherits"
    CONTAINS = "contains"


# The edge kinds that count as a use of a definition ("used by", usage, impact); imports and
# containment do not.
USE_EDGE_KINDS = (RefKind.CALL.value, RefKind.REFERENCE.value)


@dataclass(frozen=True, slots=True)
class Span:
    """Lines 1-based and inclusive, as a person cites them."""

    start_line: int
    end_line: int

    def __post_init__(self) -> None:
        if self.start_line < 1 or self.end_line < self.start_line:
            raise ValueError(f"invalid span {self.start_line}-{self.end_line}")


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition found in a file.

    ``qualified_name`` is the dotted path inside the file (``Outer.method``, ``outer.inner``); the
    file's module node carries the module's own dotted name. ``parent`` is the qualified name of the
    enclosing definition, or ``None`` at the top level of the file.
    """

    kind: SymbolKind
    name: str
    qualified_name: str
    span: Span
    signature: str
    doc: str
    parent: str | None


@dataclass(frozen=True, slots=True)
class Reference:
    """A name used somewhere in a file, not yet resolved to a definition.

    ``name`` is the identifier as written: the called or inherited name (``save``), or for
    imports the imported path (``django.db.models`` or ``./widget``). ``source`` is the qualified
    name of the innermost enclosing definition, or ``None`` when the use is at module level.
    """

    kind: RefKind
    name: str
    line: int
    source: str | None


@dataclass(frozen=True, slots=True)
class FoldedDefinition:
    """A definition nested too deep (or named too long) to be a symbol of its own: its text belongs
    to ``holder``, the qualified name of its innermost kept ancestor (``None``: the module)."""

    name: str
    line: int
    holder: str | None


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Everything one file contributes to the index, besides its module node."""

    language: str
    symbols: tuple[Symbol, ...]
    references: tuple[Reference, ...]
    has_errors: bool
    folded: tuple[FoldedDefinition, ...] = ()
