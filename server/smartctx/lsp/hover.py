"""The hover over a symbol, as Markdown: signature, doc, uses with links, and a command link.

Links are ``file:`` URIs with a ``#L<line>`` fragment, which VS Code opens at that line. The command
link runs ``smartctx.contextForSymbol`` (protocol.py documents its arguments), which the client
implements; a client must mark the hover's Markdown as trusted for command links to work.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from smartctx.core.context import SymbolSummary
from smartctx.lsp.protocol import CONTEXT_FOR_SYMBOL_COMMAND, ContextForSymbolArguments
from smartctx.retrieval.pack import fence_for


def hover_markdown(symbol: SymbolSummary, root: Path) -> str:
    signature = symbol.signature.strip() or symbol.qualified_name
    fence = fence_for(signature)
    where = f"{symbol.file_path}:{symbol.start_line}-{symbol.end_line}"
    definition = _line_link(root, symbol.file_path, symbol.start_line)
    parts = [
        f"{fence}{symbol.language}\n{signature}\n{fence}",
        f"{symbol.kind} `{symbol.qualified_name}` — [{where}]({definition})",
    ]
    if symbol.doc.strip():
        parts.append(symbol.doc.strip().split("\n\n")[0])
    parts.append(_uses_line(symbol, root))
    arguments: ContextForSymbolArguments = {
        "id": symbol.id,
        "qualifiedName": symbol.qualified_name,
        "uri": (root / symbol.file_path).as_uri(),
    }
    command = f"command:{CONTEXT_FOR_SYMBOL_COMMAND}?{quote(json.dumps([arguments]))}"
    parts.append(f"[Open context for `{symbol.name}`]({command})")
    return "\n\n".join(parts) + "\n"


def _uses_line(symbol: SymbolSummary, root: Path) -> str:
    if symbol.use_count == 0:
        return "No uses found in the index."
    uses = "use" if symbol.use_count == 1 else "uses"
    files = "file" if symbol.use_files == 1 else "files"
    line = f"{symbol.use_count} {uses} in {symbol.use_files} {files}"
    links = [
        f"[`{use.caller}`]({_line_link(root, use.file_path, use.line)}) ({use.file_path}:{use.line})"
        for use in symbol.top_uses
    ]
    return f"{line}: " + ", ".join(links) if links else line


def _line_link(root: Path, path: str, line: int) -> str:
    return f"{(root / path).as_uri()}#L{line}"
