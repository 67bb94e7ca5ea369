; Python tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Definitions. The docstring is the string that opens the body.

(class_definition
  name: (identifier) @name
  body: (block . (expression_statement . (string) @doc)?)) @definition.class

(function_definition
  name: (identifier) @name
  body: (block . (expression_statement . (string) @doc)?)) @definition.function

; Module-level UPPER_CASE assignments are constants by convention; other assignments are not symbols.
(module
  (expression_statement
    (assignment
      left: (identifier) @name)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

; Calls: the called name, also through attributes (a.b.save() → save).

(call
  function: (identifier) @name) @reference.call

(call
  function: (attribute
    attribute: (identifier) @name)) @reference.call

; Base classes; keyword arguments such as metaclass= are not bases.

(class_definition
  superclasses: (argument_list
    [
      (identifier) @name
      (attribute attribute: (identifier) @name)
      (subscript value: (identifier) @name)
      (subscript value: (attribute attribute: (identifier) @name))
    ])) @reference.inherit

; Imports: "import a.b" → a.b; "from a.b import c" → a.b.c; "from . import x" → .x.

(import_statement
  name: [
    (dotted_name) @name
    (aliased_import name: (dotted_name) @name)
  ]) @reference.import

(import_from_statement
  module_name: (_) @module
  name: [
    (dotted_name) @name
    (aliased_import name: (dotted_name) @name)
  ]) @reference.import

(import_from_statement
  module_name: (_) @name
  (wildcard_import)) @reference.import

; Types named in annotations, including generic arguments and unions.

(type (identifier) @name) @reference.type

(type (attribute attribute: (identifier) @name)) @reference.type

(generic_type . (identifier) @name) @reference.type

(type
  (binary_operator
    [
      (identifier) @name
      (binary_operator (identifier) @name)
    ])) @reference.type
