"""The hover over a symbol, as Markdown: signature, doc, uses with links, the latest change of its
lines (git "why"), and a command link.

Links are ``file:`` URIs with a ``#L<line>`` fragment, which VS Code opens at that line. The command
link runs ``smartctx.contextForSymbol`` (protocol.py documents its arguments), which the client
implements; a client must mark the hover's Markdown as trusted for command links to work.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

from smartctx.core.context import SymbolSummary
from smartctx.core.history import RecentChange
from smartctx.lsp.protocol import CONTEXT_FOR_SYMBOL_COMMAND, ContextForSymbolArguments
from smartctx.retrieval.pack import fence_for

_MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]()<>#+!|~]")


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
        parts.append(_plain(symbol.doc.strip().split("\n\n")[0]))
    parts.append(_uses_line(symbol, root))
    if symbol.latest_change is not None:
        parts.append(_why_line(symbol.latest_change))
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


def _why_line(change: RecentChange) -> str:
    """The latest change of the definition's lines: pull request or commit, title, author, day."""
    source = f"#{change.pr}" if change.pr is not None else f"commit {change.commit[:10]}"
    return f"Last changed by {source}: {_plain(change.title)} ({_plain(change.author)}, {change.date[:10]})"


def _plain(text: str) -> str:
    """Repository text shown as text: a client trusts this Markdown for its command link, so a doc
    comment or a commit title must not be able to add links, images or HTML of its own."""
    return _MARKDOWN_SPECIAL.sub(r"\\\g<0>", text)


def _line_link(root: Path, path: str, line: int) -> str:
    return f"{(root / path).as_uri()}#L{line}"
