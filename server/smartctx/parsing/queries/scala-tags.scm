; Scala tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Types; objects are classes (their members are methods).

[
  (class_definition name: (identifier) @name)
  (object_definition name: (identifier) @name)
] @definition.class

(trait_definition
  name: (identifier) @name) @definition.trait

(enum_definition
  name: (identifier) @name) @definition.enum

(type_definition
  name: (type_identifier) @name) @definition.type

; Functions, with or without a body; in a class, object or trait they are methods.

[
  (function_definition name: (identifier) @name)
  (function_declaration name: (identifier) @name)
] @definition.function

; Capitalised vals of an object are constants by convention.

((object_definition
  body: (template_body
    (val_definition
      pattern: (identifier) @name) @definition.constant))
  (#match? @name "^[A-Z]"))

; Calls: the called name, also through a receiver or with type arguments.

(call_expression
  function: [
    (identifier) @name
    (field_expression field: (identifier) @name)
    (generic_function function: [(identifier) @name (field_expression field: (identifier) @name)])
  ]) @reference.call

; Inheritance: extends … with ….

(extends_clause
  [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (stable_type_identifier (type_identifier) @name .)
  ]) @reference.inherit

; Imports. The grammar writes a path as a row of identifiers, so each path length is a pattern of
; its own: "import a.b.c" → a.b.c; "import a.b.{C, D}" → a.b.C, a.b.D; "import a.b._" → a.b.

(import_declaration . (identifier) @name .) @reference.import
(import_declaration . (identifier) @module . (identifier) @name .) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @name .) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @name .) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @name .) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @name .) @reference.import

(import_declaration . (identifier) @module
  . (namespace_selectors [(identifier) @name (arrow_renamed_identifier name: (identifier) @name)])) @reference.import
(import_declaration . (identifier) @module . (identifier) @module
  . (namespace_selectors [(identifier) @name (arrow_renamed_identifier name: (identifier) @name)])) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @module
  . (namespace_selectors [(identifier) @name (arrow_renamed_identifier name: (identifier) @name)])) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @module
  . (namespace_selectors [(identifier) @name (arrow_renamed_identifier name: (identifier) @name)])) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @module
  . (namespace_selectors [(identifier) @name (arrow_renamed_identifier name: (identifier) @name)])) @reference.import

(import_declaration . (identifier) @name . (namespace_wildcard) .) @reference.import
(import_declaration . (identifier) @module . (identifier) @name . (namespace_wildcard) .) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @name . (namespace_wildcard) .) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @name . (namespace_wildcard) .) @reference.import
(import_declaration . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @module . (identifier) @name . (namespace_wildcard) .) @reference.import

; Types: every named type.

(type_identifier) @name @reference.type
