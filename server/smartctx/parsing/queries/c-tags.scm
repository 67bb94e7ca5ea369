; C tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Functions: definitions and file-level prototypes, returning values or (double) pointers.

(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.function

(translation_unit
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    ]) @definition.function)

; Macros: object-like ones are constants, function-like ones functions.

(preproc_def
  name: (identifier) @name) @definition.constant

(preproc_function_def
  name: (identifier) @name) @definition.function

; A typedef of a struct, union or enum body is that struct or enum, under the typedef's name.

(type_definition
  type: [(struct_specifier body: (_)) (union_specifier body: (_))]
  declarator: (type_identifier) @name) @definition.struct

(type_definition
  type: (enum_specifier body: (_))
  declarator: (type_identifier) @name) @definition.enum

(type_definition
  type: [
    (primitive_type)
    (type_identifier)
    (sized_type_specifier)
    (struct_specifier !body)
    (union_specifier !body)
    (enum_specifier !body)
  ]
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))
    (array_declarator declarator: (type_identifier) @name)
  ]) @definition.type

; Tagged structs, unions and enums with a body, at file level or in a declaration.

[
  (translation_unit [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (declaration type: [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
]

[
  (translation_unit (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
  (declaration type: (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
]

; Calls, also through function pointers in structs.

(call_expression
  function: [
    (identifier) @name
    (field_expression field: (field_identifier) @name)
    (parenthesized_expression (identifier) @name)
  ]) @reference.call

; Includes: the path without quotes or angle brackets.

(preproc_include
  path: [
    (string_literal (string_content) @name)
    (system_lib_string) @name
  ]) @reference.import

; Types: every named type.

(type_identifier) @name @reference.type
