"""The MCP server (``smartctx mcp``): the only package that imports the MCP SDK."""
