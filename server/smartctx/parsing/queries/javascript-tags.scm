; JavaScript (and JSX) tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Classes, also class expressions bound to a name.

(class_declaration
  name: (identifier) @name) @definition.class

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class

; Methods: the members of class bodies, and arrow-valued fields.

(class_body
  (method_definition
    name: [(property_identifier) (private_property_identifier) (computed_property_name)] @name) @definition.method)

(class_body
  (field_definition
    property: [(property_identifier) (private_property_identifier)] @name
    value: [(arrow_function) (function_expression)]) @definition.method)

; Members of object literals, the hooks of Vite and Rollup plugins and the callbacks of option
; objects: methods and function-valued properties. An object bound to a variable or nested under a
; key is named after it (const legacy = { config() {} } in viteLegacyPlugin is
; viteLegacyPlugin.legacy.config, transform: { handler() {} } is transform.handler); any other
; object's members belong to the enclosing definition. A module-level UPPER_CASE const is a
; constant symbol already, which names its members. Keys written as strings ('./a.js': () => …, as
; in glob import maps) are data rather than names.

((variable_declarator
  name: (identifier) @scope
  value: (object
    [
      (method_definition name: [(property_identifier) (computed_property_name)] @name)
      (pair
        key: (property_identifier) @name
        value: [(arrow_function) (function_expression) (generator_function)])
    ] @definition.method))
  (#not-match? @scope "^[A-Z][A-Z0-9_]*$"))

(pair
  key: (property_identifier) @scope
  value: (object
    [
      (method_definition name: [(property_identifier) (computed_property_name)] @name)
      (pair
        key: (property_identifier) @name
        value: [(arrow_function) (function_expression) (generator_function)])
    ] @definition.method))

(object
  [
    (method_definition name: [(property_identifier) (computed_property_name)] @name)
    (pair
      key: (property_identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)])
  ] @definition.method)

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
