"""The language server (design.md §4): the only package that imports pygls and lsprotocol."""
