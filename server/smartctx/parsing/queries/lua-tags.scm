; Lua tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Functions; "function T.f" and "function T:m" belong to the table T, and ":" makes a method.

(function_declaration
  name: (identifier) @name) @definition.function

(function_declaration
  name: (dot_index_expression
    table: (_) @scope
    field: (identifier) @name)) @definition.function

(function_declaration
  name: (method_index_expression
    table: (_) @scope
    method: (identifier) @name)) @definition.method

; Function values bound to a name: "local f = function() … end", "T.f = function() … end".

(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @name)
    (expression_list . value: (function_definition)))) @definition.function

(assignment_statement
  (variable_list
    .
    name: [
      (identifier) @name
      (dot_index_expression table: (_) @scope field: (identifier) @name)
    ])
  (expression_list . value: (function_definition))) @definition.function

; UPPER_CASE locals of the chunk are constants.

((chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name))) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

; A table constructor bound to a capitalised local of the chunk is a class: its functions are
; written "function Queue:push(…)". ALL_CAPS names were taken as constants above.

((chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name)
      (expression_list . value: (table_constructor)))) @definition.class)
  (#match? @name "^[A-Z]"))

; Calls; require is an import.

((function_call
  name: [
    (identifier) @name
    (dot_index_expression field: (identifier) @name)
    (method_index_expression method: (identifier) @name)
  ]) @reference.call
  (#not-eq? @name "require"))

; Imports: the required module name.

((function_call
  name: (identifier) @_require
  arguments: (arguments . (string content: (string_content) @name))) @reference.import
  (#eq? @_require "require"))
