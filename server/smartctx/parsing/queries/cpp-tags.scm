; C++ tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Members defined outside their class (void Circle::area() → Circle.area), also of templates.

(function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
      name: [(identifier) (destructor_name) (operator_name)] @name))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
      name: [(identifier) (destructor_name) (operator_name)] @name)))
    (reference_declarator (function_declarator declarator: (qualified_identifier
      scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
      name: [(identifier) (destructor_name) (operator_name)] @name)))
  ]) @definition.method

; Functions (methods when defined or declared in a class body), returning values, pointers or references.

(function_definition
  declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (operator_name)] @name))
  ]) @definition.function

; Member functions declared without a body (pure virtual ones, or defined out of class).
(field_declaration
  declarator: [
    (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(field_identifier) (operator_name)] @name))
  ]) @definition.function

; Free function prototypes at file or namespace level, also inside an include guard or an #if block
; there. A deeper conditional is not looked into: inside a function body `std::string s(name);`
; parses as a prototype too.
[
  (translation_unit
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (reference_declarator (function_declarator declarator: (identifier) @name))
      ]) @definition.function)
  (declaration_list
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (reference_declarator (function_declarator declarator: (identifier) @name))
      ]) @definition.function)
  (translation_unit (preproc_ifdef
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (reference_declarator (function_declarator declarator: (identifier) @name))
      ]) @definition.function))
  (translation_unit (preproc_if
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (reference_declarator (function_declarator declarator: (identifier) @name))
      ]) @definition.function))
  (declaration_list (preproc_ifdef
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (reference_declarator (function_declarator declarator: (identifier) @name))
      ]) @definition.function))
  (declaration_list (preproc_if
    (declaration
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (reference_declarator (function_declarator declarator: (identifier) @name))
      ]) @definition.function))
]

; Types.

(class_specifier
  name: (type_identifier) @name
  body: (_)) @definition.class

[
  (struct_specifier name: (type_identifier) @name body: (_))
  (union_specifier name: (type_identifier) @name body: (_))
] @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (_)) @definition.enum

[
  (type_definition declarator: (type_identifier) @name)
  (alias_declaration name: (type_identifier) @name)
] @definition.type

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.module

; Constants: const and constexpr variables at file or namespace level (also inside an include guard
; or an #if block there), and object-like macros.

([
  (translation_unit
    (declaration
      (type_qualifier) @_qualifier
      declarator: (init_declarator declarator: (identifier) @name)) @definition.constant)
  (declaration_list
    (declaration
      (type_qualifier) @_qualifier
      declarator: (init_declarator declarator: (identifier) @name)) @definition.constant)
  (translation_unit (preproc_ifdef
    (declaration
      (type_qualifier) @_qualifier
      declarator: (init_declarator declarator: (identifier) @name)) @definition.constant))
  (translation_unit (preproc_if
    (declaration
      (type_qualifier) @_qualifier
      declarator: (init_declarator declarator: (identifier) @name)) @definition.constant))
  (declaration_list (preproc_ifdef
    (declaration
      (type_qualifier) @_qualifier
      declarator: (init_declarator declarator: (identifier) @name)) @definition.constant))
  (declaration_list (preproc_if
    (declaration
      (type_qualifier) @_qualifier
      declarator: (init_declarator declarator: (identifier) @name)) @definition.constant))
]
  (#any-of? @_qualifier "const" "constexpr"))

(preproc_def
  name: (identifier) @name) @definition.constant

(preproc_function_def
  name: (identifier) @name) @definition.function

; Calls, also of qualified (std::move) and template (std::make_unique<T>) functions.

(call_expression
  function: [
    (identifier) @name
    (field_expression field: (field_identifier) @name)
    (field_expression field: (template_method name: (field_identifier) @name))
    (qualified_identifier name: (identifier) @name)
    (qualified_identifier name: (template_function name: (identifier) @name))
    (template_function name: (identifier) @name)
  ]) @reference.call

; Base classes.

(base_class_clause
  [
    (type_identifier) @name
    (qualified_identifier name: (type_identifier) @name)
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (template_type name: (type_identifier) @name))
  ]) @reference.inherit

; Includes: the path without quotes or angle brackets.

(preproc_include
  path: [
    (string_literal (string_content) @name)
    (system_lib_string) @name
  ]) @reference.import

; Types: every named type.

(type_identifier) @name @reference.type
