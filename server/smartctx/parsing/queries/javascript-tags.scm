; JavaScript (and JSX) tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Classes, also class expressions bound to a name.

(class_declaration
  name: (identifier) @name) @definition.class

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class

; Methods are the members of class bodies; object literal members are not symbols.

(class_body
  (method_definition
    name: [(property_identifier) (private_property_identifier) (computed_property_name)] @name) @definition.method)

(class_body
  (field_definition
    property: [(property_identifier) (private_property_identifier)] @name
    value: [(arrow_function) (function_expression)]) @definition.method)

; Functions: declarations, and function values bound to a name or assigned to a property.

[
  (function_declaration name: (identifier) @name)
  (generator_function_declaration name: (identifier) @name)
] @definition.function

[
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)]))
  (variable_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)]))
] @definition.function

(expression_statement
  (assignment_expression
    left: [
      (identifier) @name
      (member_expression property: (property_identifier) @name)
    ]
    right: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; Module-level UPPER_CASE consts are constants; other variables are not symbols.

(program
  (lexical_declaration
    "const"
    (variable_declarator
      name: (identifier) @name)) @definition.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

(program
  (export_statement
    declaration: (lexical_declaration
      "const"
      (variable_declarator
        name: (identifier) @name)) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

; Calls; require() is an import, not a call.

((call_expression
  function: (identifier) @name) @reference.call
  (#not-eq? @name "require"))

(call_expression
  function: (member_expression
    property: [(property_identifier) (private_property_identifier)] @name)) @reference.call

; Inheritance.

(class_heritage
  [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.inherit

; Imports: the module specifier as written.

(import_statement
  source: (string (string_fragment) @name)) @reference.import

(export_statement
  source: (string (string_fragment) @name)) @reference.import

((call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @name))) @reference.import
  (#eq? @_require "require"))

(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @name))) @reference.import

; Types: constructed classes and JSX components (capitalised element names).

(new_expression
  constructor: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.type

((jsx_opening_element
  name: (identifier) @name) @reference.type
  (#match? @name "^[A-Z]"))

((jsx_self_closing_element
  name: (identifier) @name) @reference.type
  (#match? @name "^[A-Z]"))
