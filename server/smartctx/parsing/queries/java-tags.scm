; Java tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Types; records are classes.

[
  (class_declaration name: (identifier) @name)
  (record_declaration name: (identifier) @name)
] @definition.class

[
  (interface_declaration name: (identifier) @name)
  (annotation_type_declaration name: (identifier) @name)
] @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

; Methods and constructors, also of anonymous classes.

[
  (method_declaration name: (identifier) @name)
  (constructor_declaration name: (identifier) @name)
  (compact_constructor_declaration name: (identifier) @name)
] @definition.method

; static final fields with UPPER_CASE names are constants.

((field_declaration
  (modifiers "static" "final")
  declarator: (variable_declarator
    name: (identifier) @name)) @definition.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

; Calls.

(method_invocation
  name: (identifier) @name) @reference.call

; Inheritance: extends and implements, for classes, records, enums and interfaces.

(superclass
  [
    (type_identifier) @name
    (scoped_type_identifier (type_identifier) @name .)
    (generic_type [(type_identifier) @name (scoped_type_identifier (type_identifier) @name .)])
  ]) @reference.inherit

[
  (super_interfaces
    (type_list
      [
        (type_identifier) @name
        (scoped_type_identifier (type_identifier) @name .)
        (generic_type [(type_identifier) @name (scoped_type_identifier (type_identifier) @name .)])
      ]))
  (extends_interfaces
    (type_list
      [
        (type_identifier) @name
        (scoped_type_identifier (type_identifier) @name .)
        (generic_type [(type_identifier) @name (scoped_type_identifier (type_identifier) @name .)])
      ]))
] @reference.inherit

; Imports: the dotted name (the package for a wildcard import).

(import_declaration
  [(identifier) (scoped_identifier)] @name) @reference.import

; Types: every named type.

(type_identifier) @name @reference.type
