; TypeScript tags in smartctx's capture convention (see smartctx/parsing/extract.py).
; tsx-tags.scm inherits these patterns and adds JSX.

; Types.

[
  (class_declaration name: (type_identifier) @name)
  (abstract_class_declaration name: (type_identifier) @name)
] @definition.class

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

; Namespaces, and ambient modules (declare module "name", named without its quotes).
[
  (internal_module name: [(identifier) (nested_identifier)] @name)
  (module name: [(identifier) @name (nested_identifier) @name (string (string_fragment) @name)])
] @definition.module

; Methods: members of class bodies, abstract and interface method signatures, and arrow-valued fields.

(class_body
  (method_definition
    name: [(property_identifier) (private_property_identifier) (computed_property_name)] @name) @definition.method)

(class_body
  (public_field_definition
    name: [(property_identifier) (private_property_identifier)] @name
    value: [(arrow_function) (function_expression)]) @definition.method)

(abstract_method_signature
  name: (property_identifier) @name) @definition.method

; Method signatures of inline object types are not symbols, only those of interfaces.
(interface_body
  (method_signature
    name: (property_identifier) @name) @definition.method)

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

; The same object behind a type assertion or check (= { … } as const, = { … } satisfies Plugin).
((variable_declarator
  name: (identifier) @scope
  value: [
    (as_expression
      (object
        [
          (method_definition name: [(property_identifier) (computed_property_name)] @name)
          (pair
            key: (property_identifier) @name
            value: [(arrow_function) (function_expression) (generator_function)])
        ] @definition.method))
    (satisfies_expression
      (object
        [
          (method_definition name: [(property_identifier) (computed_property_name)] @name)
          (pair
            key: (property_identifier) @name
            value: [(arrow_function) (function_expression) (generator_function)])
        ] @definition.method))
  ])
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

; Functions: declarations, ambient signatures, and function values bound to a name.

[
  (function_declaration name: (identifier) @name)
  (generator_function_declaration name: (identifier) @name)
  (function_signature name: (identifier) @name)
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

; Inheritance: extends (classes and interfaces) and implements.

(extends_clause
  value: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.inherit

[
  (implements_clause
    [
      (type_identifier) @name
      (nested_type_identifier name: (type_identifier) @name)
      (generic_type name: [(type_identifier) @name (nested_type_identifier name: (type_identifier) @name)])
    ])
  (extends_type_clause
    type: [
      (type_identifier) @name
      (nested_type_identifier name: (type_identifier) @name)
      (generic_type name: [(type_identifier) @name (nested_type_identifier name: (type_identifier) @name)])
    ])
] @reference.inherit

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

; Types: every type name written in a type position, and constructed classes.

(type_identifier) @name @reference.type

(new_expression
  constructor: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.type
