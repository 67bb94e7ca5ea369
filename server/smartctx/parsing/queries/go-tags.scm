; Go tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Functions, and methods qualified by their receiver's type (func (s *Store) Get → Store.Get).

(function_declaration
  name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @scope
        (pointer_type (type_identifier) @scope)
        (generic_type type: (type_identifier) @scope)
        (pointer_type (generic_type type: (type_identifier) @scope))
      ]))
  name: (field_identifier) @name) @definition.method

; Types. A declaration of one type is the symbol, so that the signature reads "type Store struct";
; the specs of a grouped "type ( … )" are symbols of their own.

(type_declaration
  .
  (type_spec
    name: (type_identifier) @name
    type: (struct_type))
  .) @definition.struct

(type_declaration
  .
  (type_spec
    name: (type_identifier) @name
    type: (interface_type))
  .) @definition.interface

(type_declaration
  .
  [
    (type_spec name: (type_identifier) @name)
    (type_alias name: (type_identifier) @name)
  ]
  .) @definition.type

(type_spec
  name: (type_identifier) @name
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

[
  (type_spec name: (type_identifier) @name)
  (type_alias name: (type_identifier) @name)
] @definition.type

; Interface methods.

(method_elem
  name: (field_identifier) @name) @definition.method

; Constants, with the same single-or-grouped rule as types.

(const_declaration
  .
  (const_spec
    name: (identifier) @name)
  .) @definition.constant

(const_spec
  name: (identifier) @name) @definition.constant

; Calls.

(call_expression
  function: [
    (identifier) @name
    (selector_expression field: (field_identifier) @name)
    (parenthesized_expression (identifier) @name)
    (parenthesized_expression (selector_expression field: (field_identifier) @name))
  ]) @reference.call

; Embedding: an unnamed struct field or an interface element is inherited.

(field_declaration_list
  (field_declaration
    !name
    type: [
      (type_identifier) @name
      (qualified_type name: (type_identifier) @name)
      (pointer_type (type_identifier) @name)
      (pointer_type (qualified_type name: (type_identifier) @name))
    ])) @reference.inherit

(interface_type
  (type_elem
    .
    [
      (type_identifier) @name
      (qualified_type name: (type_identifier) @name)
    ]
    .)) @reference.inherit

; Imports: the import path.

(import_spec
  path: (interpreted_string_literal
    (interpreted_string_literal_content) @name)) @reference.import

; Types: every named type, except the predeclared ones.

((type_identifier) @name @reference.type
  (#not-match? @name "^(any|bool|byte|comparable|complex(64|128)|error|float(32|64)|u?int(8|16|32|64)?|rune|string|uintptr)$"))
