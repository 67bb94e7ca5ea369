"""Bytes → symbols and references, with tree-sitter; the only package that imports it.

``languages`` says which languages exist and which files are theirs; ``extract.SourceParser``
parses; ``queries/<language>-tags.scm`` holds each language's definitions and references.
"""
