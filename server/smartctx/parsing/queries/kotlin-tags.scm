; Kotlin tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Types: the keyword or modifier tells interfaces and enums from classes; objects are classes.

(class_declaration
  "interface"
  name: (identifier) @name) @definition.interface

((class_declaration
  (modifiers (class_modifier) @_modifier)
  name: (identifier) @name) @definition.enum
  (#eq? @_modifier "enum"))

[
  (class_declaration name: (identifier) @name)
  (object_declaration name: (identifier) @name)
] @definition.class

(type_alias
  type: (identifier) @name) @definition.type

; Functions; in a class, object or companion object they are methods.

(function_declaration
  name: (identifier) @name) @definition.function

; const val properties are constants.

((property_declaration
  (modifiers (property_modifier) @_modifier)
  (variable_declaration (identifier) @name)) @definition.constant
  (#eq? @_modifier "const"))

; Calls: the called name, also through a receiver (a.b.save() → save).

(call_expression
  .
  [
    (identifier) @name
    (navigation_expression (identifier) @name .)
  ]) @reference.call

; Inheritance: supertypes after the colon, with or without constructor calls.

(delegation_specifier
  [
    (user_type (identifier) @name .)
    (constructor_invocation (user_type (identifier) @name .))
    (explicit_delegation (user_type (identifier) @name .))
  ]) @reference.inherit

; Imports: the dotted name.

(import
  (qualified_identifier) @name) @reference.import

; Types: every user type.

(user_type
  (identifier) @name) @reference.type
