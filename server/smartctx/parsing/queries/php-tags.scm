; PHP tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Namespaces; "namespace App\Billing;" without braces holds the rest of the file.

(namespace_definition
  name: (namespace_name) @name) @definition.module

; Types.

(class_declaration
  name: (name) @name) @definition.class

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(enum_declaration
  name: (name) @name) @definition.enum

; Functions and methods.

(function_definition
  name: (name) @name) @definition.function

(method_declaration
  name: (name) @name) @definition.method

; Constants, in classes or at file level.

(const_declaration
  (const_element
    (name) @name)) @definition.constant

; Calls: functions, methods, static methods.

(function_call_expression
  function: [
    (name) @name
    (qualified_name (name) @name .)
  ]) @reference.call

[
  (member_call_expression name: (name) @name)
  (nullsafe_member_call_expression name: (name) @name)
  (scoped_call_expression name: (name) @name)
] @reference.call

; Inheritance: extends, implements, and used traits.

[
  (base_clause [(name) @name (qualified_name (name) @name .)])
  (class_interface_clause [(name) @name (qualified_name (name) @name .)])
  (use_declaration [(name) @name (qualified_name (name) @name .)])
] @reference.inherit

; Imports: "use A\B\C" → A\B\C; "use A\B\{C, D}" → A\B\C and A\B\D.

(namespace_use_declaration
  (namespace_use_clause
    [(name) (qualified_name)] @name)) @reference.import

(namespace_use_declaration
  (namespace_name) @module
  body: (namespace_use_group
    (namespace_use_clause
      [(name) (qualified_name)] @name))) @reference.import

; Types: declared types of parameters, properties and returns, and instantiated classes.

(named_type
  [(name) @name (qualified_name (name) @name .)]) @reference.type

(object_creation_expression
  [(name) @name (qualified_name (name) @name .)]) @reference.type
