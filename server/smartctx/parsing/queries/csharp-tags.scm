; C# tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Types; records are classes, delegates are types.

[
  (class_declaration name: (identifier) @name)
  (record_declaration name: (identifier) @name)
] @definition.class

(struct_declaration
  name: (identifier) @name) @definition.struct

(interface_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(delegate_declaration
  name: (identifier) @name) @definition.type

[
  (namespace_declaration name: [(identifier) (qualified_name)] @name)
  (file_scoped_namespace_declaration name: [(identifier) (qualified_name)] @name)
] @definition.module

; Methods, constructors and finalizers; local functions are functions.

[
  (method_declaration name: (identifier) @name)
  (constructor_declaration name: (identifier) @name)
  (destructor_declaration name: (identifier) @name)
] @definition.method

(local_function_statement
  name: (identifier) @name) @definition.function

; const fields are constants.

((field_declaration
  (modifier) @_modifier
  (variable_declaration
    (variable_declarator
      name: (identifier) @name))) @definition.constant
  (#eq? @_modifier "const"))

; Calls.

(invocation_expression
  function: [
    (identifier) @name
    (generic_name . (identifier) @name)
    (member_access_expression name: [(identifier) @name (generic_name . (identifier) @name)])
  ]) @reference.call

; Inheritance: the base class and interfaces after the colon.

(base_list
  [
    (identifier) @name
    (qualified_name name: (identifier) @name)
    (generic_name . (identifier) @name)
    (primary_constructor_base_type type: (identifier) @name)
  ]) @reference.inherit

; Imports: the namespace or type of a using directive (for an alias, what it stands for).

(using_directive
  [(identifier) (qualified_name)] @name
  .) @reference.import

; Types: names in type positions (C# types are plain identifiers, so positions are listed).

[
  (_ type: [
    (identifier) @name
    (qualified_name name: (identifier) @name)
    (generic_name . (identifier) @name)
    (nullable_type type: (identifier) @name)
    (array_type type: (identifier) @name)
  ])
  (_ returns: [
    (identifier) @name
    (qualified_name name: (identifier) @name)
    (generic_name . (identifier) @name)
    (nullable_type type: (identifier) @name)
    (array_type type: (identifier) @name)
  ])
  (type_argument_list [
    (identifier) @name
    (qualified_name name: (identifier) @name)
    (generic_name . (identifier) @name)
  ])
] @reference.type
