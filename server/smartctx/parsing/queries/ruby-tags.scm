; Ruby tags in smartctx's capture convention (see smartctx/parsing/extract.py).

; Classes and modules; "class A::B" is B qualified by A.

(class
  name: [
    (constant) @name
    (scope_resolution scope: (_) @scope name: (constant) @name)
  ]) @definition.class

(module
  name: [
    (constant) @name
    (scope_resolution scope: (_) @scope name: (constant) @name)
  ]) @definition.module

; Methods: "def" and "def self." are functions, and methods when they sit in a class
; (also inside "class << self").

[
  (method name: (_) @name)
  (singleton_method name: (_) @name)
] @definition.function

; Constant assignments.

(assignment
  left: (constant) @name) @definition.constant

; Calls; require and require_relative are imports.

((call
  method: (identifier) @name) @reference.call
  (#not-match? @name "^require(_relative)?$"))

; Inheritance: the superclass (for "< Struct.new(…)", the receiver), and mixins.

(superclass
  [
    (constant) @name
    (scope_resolution name: (constant) @name)
    (call receiver: [(constant) @name (scope_resolution name: (constant) @name)])
  ]) @reference.inherit

((call
  method: (identifier) @_mixin
  arguments: (argument_list
    [
      (constant) @name
      (scope_resolution name: (constant) @name)
    ])) @reference.inherit
  (#any-of? @_mixin "include" "extend" "prepend"))

; Imports: the required path.

((call
  method: (identifier) @_require
  arguments: (argument_list . (string (string_content) @name))) @reference.import
  (#match? @_require "^require(_relative)?$"))

; Types: constants that receive a call (JSON.parse, Logger.new).

(call
  receiver: [
    (constant) @name
    (scope_resolution name: (constant) @name)
  ]) @reference.type
