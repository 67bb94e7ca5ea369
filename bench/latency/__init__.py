"""Latency and memory of a request: in process, over LSP and over MCP, versions side by side."""
