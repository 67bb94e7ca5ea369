"""The live index of workspace folders, shared by every long-running front end (the language server
and the MCP server): background indexing, file watching, coalesced updates, queries on threads.

Nothing here knows a wire protocol; each front end converts at its own edge.
"""
