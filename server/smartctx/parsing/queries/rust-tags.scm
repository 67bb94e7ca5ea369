; Rust tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Functions in an impl block are methods of the implementing type, also for "impl Trait for Type".

(impl_item
  type: [
    (type_identifier) @scope
    (generic_type type: (type_identifier) @scope)
    (scoped_type_identifier name: (type_identifier) @scope)
  ]
  body: (declaration_list
    (function_item
      name: (identifier) @name) @definition.method))

; Items.

[
  (function_item name: (identifier) @name)
  (function_signature_item name: (identifier) @name)
  (macro_definition name: (identifier) @name)
] @definition.function

[
  (struct_item name: (type_identifier) @name)
  (union_item name: (type_identifier) @name)
] @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(trait_item
  name: (type_identifier) @name) @definition.trait

(type_item
  name: (type_identifier) @name) @definition.type

(mod_item
  name: (identifier) @name) @definition.module

[
  (const_item name: (identifier) @name)
  (static_item name: (identifier) @name)
] @definition.constant

; Calls, also of paths (HashMap::new), turbofish generics and macros (format!).

(call_expression
  function: [
    (identifier) @name
    (field_expression field: (field_identifier) @name)
    (scoped_identifier name: (identifier) @name)
    (generic_function function: [
      (identifier) @name
      (field_expression field: (field_identifier) @name)
      (scoped_identifier name: (identifier) @name)
    ])
  ]) @reference.call

(macro_invocation
  macro: [
    (identifier) @name
    (scoped_identifier name: (identifier) @name)
  ]) @reference.call

; Inheritance: the trait an impl implements (on behalf of the type), and supertraits.

(impl_item
  trait: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: [
      (type_identifier) @name
      (scoped_type_identifier name: (type_identifier) @name)
    ])
  ]
  type: [
    (type_identifier) @scope
    (generic_type type: (type_identifier) @scope)
    (scoped_type_identifier name: (type_identifier) @scope)
  ]) @reference.inherit

(trait_item
  bounds: (trait_bounds
    [
      (type_identifier) @name
      (scoped_type_identifier name: (type_identifier) @name)
      (generic_type type: [
        (type_identifier) @name
        (scoped_type_identifier name: (type_identifier) @name)
      ])
    ])) @reference.inherit

; Imports: use paths as written; a braced list imports each of its paths under the common prefix.

(use_declaration
  argument: [
    (identifier) @name
    (scoped_identifier) @name
    (use_as_clause path: (_) @name)
    (use_wildcard (_) @name)
  ]) @reference.import

(use_declaration
  argument: (scoped_use_list
    path: (_) @module
    list: (use_list
      [
        (identifier) @name
        (scoped_identifier) @name
        (use_as_clause path: (_) @name)
        (self) @name
      ]))) @reference.import

; Types: every named type except Self.

((type_identifier) @name @reference.type
  (#not-eq? @name "Self"))
