; inherits: typescript
; TSX tags: every TypeScript pattern, plus JSX components (capitalised element names) as types.

((jsx_opening_element
  name: (identifier) @name) @reference.type
  (#match? @name "^[A-Z]"))

((jsx_self_closing_element
  name: (identifier) @name) @reference.type
  (#match? @name "^[A-Z]"))
