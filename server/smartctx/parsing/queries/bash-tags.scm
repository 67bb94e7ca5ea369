; Bash tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Functions, with or without the "function" keyword.

(function_definition
  name: (word) @name) @definition.function

; UPPER_CASE variables assigned at the top level of the script (also readonly/export ones) are constants.

((program
  (variable_assignment
    name: (variable_name) @name) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

((program
  (declaration_command
    (variable_assignment
      name: (variable_name) @name)) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

; Calls: every command is a call of its name, except "source" and ".", which are imports.

((command
  name: (command_name (word) @name)) @reference.call
  (#not-match? @name "^(source|\\.)$"))

; Imports: the sourced file.

((command
  name: (command_name (word) @_source)
  .
  argument: [(word) (string) (raw_string) (concatenation)] @name) @reference.import
  (#match? @_source "^(source|\\.)$"))
