; C tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Functions: definitions and file-level prototypes, returning values or (double) pointers.

(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.function

; Prototypes count where a file declares its functions: at file level, also inside include guards,
; #if blocks, extern "C" and the error regions that macros cause; not in a function's block, where
; they are mostly macro calls misread. One alternative per parent, since a query cannot say "any
; parent but a block" and a wildcard parent does not match inside ERROR.

[
  (translation_unit
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
  (preproc_ifdef
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
  (preproc_if
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
  (preproc_else
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
  (preproc_elif
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
  (preproc_elifdef
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
  (linkage_specification
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
  (declaration_list
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
  (ERROR
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
      ]) @definition.function)
]

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

; Tagged structs, unions and enums with a body, where a file defines its types: on their own at file
; level, in include guards and #if blocks, in extern "C" and in the error regions that macros cause,
; and as the type of a declaration there. In a typedef the typedef's name is the symbol (above); one
; nested in a field or a function body stays part of its container (matching every field and block
; would cost each file's query a tenth more for a handful of types).

[
  (translation_unit [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (preproc_ifdef [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (preproc_if [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (preproc_else [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (preproc_elif [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (preproc_elifdef [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (declaration_list [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (ERROR [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
  (declaration type: [(struct_specifier name: (type_identifier) @name body: (_)) (union_specifier name: (type_identifier) @name body: (_))] @definition.struct)
]

[
  (translation_unit (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
  (preproc_ifdef (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
  (preproc_if (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
  (preproc_else (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
  (preproc_elif (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
  (preproc_elifdef (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
  (declaration_list (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
  (ERROR (enum_specifier name: (type_identifier) @name body: (_)) @definition.enum)
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
