"""The wire format every front end shares: the JSON shapes of a pack, an expanded definition and an
index status, the conversion of core values into them, and the names of a request's options.

See architecture.md, *The protocol*.

The language server, the MCP server and ``smartctx context --format json`` all send what this
package makes, so the three agree on every value. It knows no transport: only ``smartctx.lsp`` imports
pygls and lsprotocol, only ``smartctx.mcp`` the MCP SDK.
"""
