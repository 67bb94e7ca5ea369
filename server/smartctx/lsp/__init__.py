"""The language server: the only package that imports pygls and lsprotocol.

See architecture.md, *The protocol*.
"""
