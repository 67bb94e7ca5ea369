"""The language server's handlers, one per LSP method, and the table that registers them.

Each handler converts its params (convert.py), delegates to the server's state (server.py), which
runs the work on a query thread or on a folder's index thread, and converts the answer back; the
event loop that calls them only parses and routes. Client data that fails validation is answered
with InvalidParams that says why, and the server keeps serving.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from smartctx.core.context import InvalidRequestError
from smartctx.live.live_index import IndexNotAvailableError
from smartctx.lsp.convert import (
    context_requests,
    expand_id,
    ignored_fields,
    reindex_to_wire,
)
from smartctx.lsp.hover import hover_markdown
from smartctx.lsp.protocol import (
    CONTEXT_FOR_TASK,
    EXPAND,
    INDEX_STATUS,
    REINDEX_COMMAND,
    ReindexResult,
)
from smartctx.lsp.redacting import RedactedJson
from smartctx.lsp.server import IndexUnavailableResponse, SmartctxServer
from smartctx.wire.convert import status_to_wire
from smartctx.wire.shapes import IndexStatus


@contextmanager
def invalid_params() -> Iterator[None]:
    """Client data that fails validation is the client's to fix: answer InvalidParams with why."""
    try:
        yield
    except InvalidRequestError as error:
        raise JsonRpcInvalidParams(str(error)) from None


def initialize(ls: SmartctxServer, params: types.InitializeParams) -> None:
    ls.open_workspace(params)


async def initialized(ls: SmartctxServer, params: types.InitializedParams) -> None:
    if ls.folders is not None and ls.folders.folders:
        await ls.begin_progress()
        for folder in ls.folders.folders:
            ls.folders.start(folder)


def did_change_workspace_folders(ls: SmartctxServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    ls.change_folders(params.event)


def shutdown(ls: SmartctxServer, params: None) -> None:
    ls.close_index()
    ls.stop_forwarding_logs()


async def context_for_task(ls: SmartctxServer, params: Any) -> RedactedJson:
    folders = ls.require_workspace().folders
    with invalid_params():
        requests = context_requests(params, [f.root for f in folders], ls.settings.context_defaults)
    return await ls.pack_answer(folders, requests, ignored_fields(params))


async def expand(ls: SmartctxServer, params: Any) -> RedactedJson:
    with invalid_params():
        wire_id = expand_id(params)
    return await ls.expand_answer(wire_id)


async def hover(ls: SmartctxServer, params: types.HoverParams) -> types.Hover | None:
    target = ls.word_at(params.text_document.uri, params.position)
    if target is None or ls.folders is None or not ls.settings.hover:
        return None
    workspace, (folder, path, line, word) = ls.folders, target
    symbol = await ls.on_query_thread(lambda: workspace.symbol_at(folder, path, line, word))
    if symbol is None:
        return None
    markdown = types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_markdown(symbol, folder.root))
    return types.Hover(contents=markdown)


async def reindex(ls: SmartctxServer, *arguments: Any) -> ReindexResult:
    workspace = ls.require_workspace()
    folders = workspace.folders
    if arguments:
        chosen = workspace.folder_named(arguments[0]) if len(arguments) == 1 else None
        if chosen is None:
            names = ", ".join(f"{folder.name} ({folder.uri})" for folder in folders)
            raise JsonRpcInvalidParams(
                f"{REINDEX_COMMAND} takes no argument or one workspace folder name or URI, "
                f"one of: {names}; got {list(arguments)!r}"
            )
        folders = (chosen,)
    try:
        reports = await asyncio.gather(*(asyncio.wrap_future(f) for f in workspace.reindex(folders)))
    except IndexNotAvailableError as error:
        raise IndexUnavailableResponse(str(error)) from None
    done = [report for report in reports if report is not None]
    if len(done) < len(reports):
        raise JsonRpcRequestCancelled("the server is shutting down; the re-index stopped")
    return reindex_to_wire(done)


def index_status(ls: SmartctxServer, params: Any) -> IndexStatus:
    return status_to_wire(ls.require_workspace().status())


def did_change_configuration(ls: SmartctxServer, params: types.DidChangeConfigurationParams) -> None:
    ls.change_settings(params.settings)


def did_open(ls: SmartctxServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.buffer_changed(params.text_document.uri, edited=False)


def did_change(ls: SmartctxServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.buffer_changed(params.text_document.uri, edited=True)


def did_save(ls: SmartctxServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.reindex_from_disk(params.text_document.uri)


def did_close(ls: SmartctxServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.buffer_closed(params.text_document.uri)


def did_change_watched_files(ls: SmartctxServer, params: types.DidChangeWatchedFilesParams) -> None:
    # A second source beside the server's own watcher: the paths join the same coalesced queue.
    for change in params.changes:
        ls.reindex_from_disk(change.uri)


# The handler table: each LSP method (and custom ``smartctx/*`` method) with its handler.
FEATURES: tuple[tuple[str, Callable[..., Any]], ...] = (
    (types.INITIALIZE, initialize),
    (types.INITIALIZED, initialized),
    (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, did_change_workspace_folders),
    (types.SHUTDOWN, shutdown),
    (CONTEXT_FOR_TASK, context_for_task),
    (EXPAND, expand),
    (types.TEXT_DOCUMENT_HOVER, hover),
    (INDEX_STATUS, index_status),
    (types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration),
    (types.TEXT_DOCUMENT_DID_OPEN, did_open),
    (types.TEXT_DOCUMENT_DID_CHANGE, did_change),
    (types.TEXT_DOCUMENT_DID_SAVE, did_save),
    (types.TEXT_DOCUMENT_DID_CLOSE, did_close),
    (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, did_change_watched_files),
)
# The ``workspace/executeCommand`` commands with theirs.
COMMANDS: tuple[tuple[str, Callable[..., Any]], ...] = ((REINDEX_COMMAND, reindex),)


def register_handlers(server: SmartctxServer) -> None:
    """Register the table's handlers on ``server``; pygls then calls each with the server first."""
    for method, handler in FEATURES:
        server.feature(method)(handler)
    for command, handler in COMMANDS:
        server.command(command)(handler)
