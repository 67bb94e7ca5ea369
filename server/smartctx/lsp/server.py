"""The language server's state: settings, the workspace folders with their live indexes, unsaved
buffers, progress and log forwarding, and the query threads that answer requests.

The handlers (handlers.py) stay thin by delegating here: the event loop only parses messages and
routes them, indexing runs on the index thread and packing on query threads (see live_index.py).
Unsaved editor buffers are packed as they are and indexed once typing pauses, so a pack finds and
quotes what the user sees.

Every workspace folder has its own live index (workspace.py); folders come and go with
``workspace/didChangeWorkspaceFolders``, and each per-URI message goes to the folder holding the URI.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from importlib.metadata import version
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcContentModified,
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcRequestCancelled,
)
from pygls.lsp.server import LanguageServer

from smartctx.core.context import ContextPack, ContextRequest, InvalidRequestError, NodeChangedError, Warning
from smartctx.live.base import BaseSource
from smartctx.live.live_index import IndexNotAvailableError
from smartctx.live.paths import file_uri_path
from smartctx.live.status import StatusCounts
from smartctx.live.tasks import BackgroundTasks
from smartctx.live.workspace import Folder, Workspace
from smartctx.lsp.client_log import ClientLogHandler
from smartctx.lsp.json_converter import json_converter
from smartctx.lsp.protocol import INDEX_STATUS, INDEX_UNAVAILABLE_CODE
from smartctx.lsp.redacting import RedactedJson
from smartctx.lsp.rpc import SmartctxProtocol
from smartctx.lsp.settings import Settings, apply_changed_settings, parse_settings
from smartctx.parsing.languages import is_source
from smartctx.retrieval.pipeline import CancelledError as PipelineCancelledError
from smartctx.team import PublishError
from smartctx.wire.convert import node_to_wire, pack_to_wire, status_to_wire

log = logging.getLogger(__name__)

T = TypeVar("T")

SMARTCTX_LOGGER = "smartctx"
# stderr gets smartctx records at this level and above (and lower ones when the client asks for them);
# pack contents are never logged at this level.
STDERR_LOG_LEVEL = logging.INFO


class IndexUnavailableResponse(JsonRpcException):
    """The answer to a request while the index cannot be opened; the message says why."""

    CODE = INDEX_UNAVAILABLE_CODE


class SmartctxServer(LanguageServer):
    """Server state: settings, the workspace folders with their live indexes and unsaved buffers."""

    def __init__(self) -> None:
        super().__init__(
            "smartctx", version("smartctx"), protocol_cls=SmartctxProtocol, converter_factory=json_converter
        )
        self.tasks = BackgroundTasks()
        self.settings = Settings()
        self.folders: Workspace | None = None
        # Per document URI, the pending re-index of its buffer; each change restarts the wait.
        self._buffer_timers: dict[str, asyncio.TimerHandle] = {}
        # Each folder's last reported status, by folder URI: a notification aggregates these.
        self._reported: dict[str, StatusCounts] = {}
        self._progress_token: str | None = None
        self._client_log: ClientLogHandler | None = None

    def open_workspace(self, params: types.InitializeParams) -> None:
        self.settings, warnings = parse_settings(params.initialization_options, "initializationOptions")
        self._forward_logs()
        self.warn_user(warnings)
        loop = asyncio.get_running_loop()

        def on_status(uri: str, counts: StatusCounts) -> None:
            # Called on an index thread: hand the notification to the event loop.
            try:
                loop.call_soon_threadsafe(self.publish_status, uri, counts)
            except RuntimeError:
                log.debug("the event loop has closed; status not sent")

        self.folders = Workspace(
            self.settings.index_dir,
            on_status,
            self.tasks,
            self.settings.exclude,
            self._team_base(),
            base_only=self.settings.base_index_only,
        )
        given = [(folder.uri, folder.name) for folder in params.workspace_folders or []]
        if not given and params.root_uri:
            given = [(params.root_uri, "")]
        for uri, name in given:
            self._add_folder(uri, name)
        if not self.folders.folders:
            log.warning("no workspace folder to index (rootUri %s); requests will fail", params.root_uri)

    def _team_base(self) -> BaseSource | None:
        """The team's published base of the ``baseIndex`` setting, if set and usable."""
        url = self.settings.base_index
        if url is None:
            return None
        # Imported here: only a base needs the PostgreSQL driver (smartctx[team]).
        try:
            from smartctx.team.reading import TeamBase
        except ModuleNotFoundError as error:
            if error.name is None or not error.name.startswith("psycopg"):
                raise
            self.warn_user(["baseIndex needs the PostgreSQL driver: pip install 'smartctx[team]'"])
            return None
        try:
            return TeamBase(url, None, is_source)
        except PublishError as error:
            self.warn_user([f"baseIndex: {error}"])
            return None

    def _add_folder(self, uri: str, name: str) -> Folder | None:
        fs_path = file_uri_path(uri)
        if self.folders is None or fs_path is None:
            log.warning("workspace folder %s is not a file: URI; it is not indexed", uri)
            return None
        return self.folders.add(uri, fs_path, name)

    def change_folders(self, event: types.WorkspaceFoldersChangeEvent) -> None:
        """Close removed folders, and start indexing added ones in the background."""
        workspace = self.require_workspace()
        for removed in event.removed:
            folder = workspace.remove(removed.uri)
            if folder is not None:
                self._reported.pop(folder.uri, None)
                for uri in [uri for uri in self._buffer_timers if workspace.folder_of(uri) is None]:
                    self._cancel_buffer_timer(uri)
        for added in event.added:
            folder = self._add_folder(added.uri, added.name)
            if folder is not None:
                workspace.start(folder)
        if event.removed and workspace.folders:
            self.protocol.notify(INDEX_STATUS, status_to_wire(workspace.status(self._reported)))

    def change_settings(self, raw: Any) -> None:
        self.settings, warnings = apply_changed_settings(self.settings, raw)
        if self.folders is not None:
            self.folders.set_exclude(self.settings.exclude)
        self._forward_logs()
        self.warn_user(warnings)
        log.info("settings changed: %s", self.settings)

    def warn_user(self, warnings: list[str]) -> None:
        """Problems the user can fix in their settings: a message in the editor, and the log."""
        for warning in warnings:
            log.warning("%s", warning)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=f"smartctx: {warning}")
            )

    def _forward_logs(self) -> None:
        """Send smartctx log records at the configured level to the client instead of stderr."""
        level = self.settings.client_log_level_number
        smartctx_log = logging.getLogger(SMARTCTX_LOGGER)
        if self._client_log is None:
            self._client_log = ClientLogHandler(asyncio.get_running_loop(), self._log_to_client, level)
            smartctx_log.addHandler(self._client_log)
        self._client_log.setLevel(level)
        # The logger passes a record to its handlers only at its own level or above.
        smartctx_log.setLevel(min(level, STDERR_LOG_LEVEL))

    def _log_to_client(self, level: int, text: str) -> None:
        self.window_log_message(types.LogMessageParams(type=_message_type(level), message=text))

    def stop_forwarding_logs(self) -> None:
        if self._client_log is not None:
            logging.getLogger(SMARTCTX_LOGGER).removeHandler(self._client_log)
            self._client_log = None

    def require_workspace(self) -> Workspace:
        if self.folders is None or not self.folders.folders:
            raise JsonRpcInvalidParams("no workspace folder is open; start the server with a rootUri")
        return self.folders

    async def begin_progress(self) -> None:
        """Open a work-done progress for the first index, when the client can show one."""
        window = self.client_capabilities.window
        if window is None or not window.work_done_progress:
            return
        token = f"smartctx-index-{uuid.uuid4()}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception as error:
            log.warning("the client refused a progress token (%s); indexing without progress", error)
            return
        self.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title="smartctx: indexing", percentage=0, cancellable=False)
        )
        self._progress_token = token

    def publish_status(self, uri: str, reported: StatusCounts) -> None:
        """On the event loop: the indexStatus notification (every folder's status as one, with the
        one that changed as it reported it), and the progress of the first index."""
        if self.folders is None or self.folders.folder_named(uri) is None:
            return
        self._reported[uri] = reported
        counts = self.folders.status(self._reported)
        self.protocol.notify(INDEX_STATUS, status_to_wire(counts))
        token = self._progress_token
        if token is None:
            return
        if counts.indexing:
            percentage = 100 * counts.files_done // counts.files_total if counts.files_total else 0
            message = f"{counts.files_done:,}/{counts.files_total:,} files"
            self.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )
        else:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="index ready"))
            self._progress_token = None

    def buffer_changed(self, uri: str, *, edited: bool) -> None:
        """Pack the buffer as it is now, and index it once typing pauses (on its folder's index thread).
        ``edited``: the user changed it (not merely opened it), which steers the next packs."""
        found = self._folder_of(uri)
        if found is None:
            return
        folder, path = found
        if edited:
            folder.index.edits.record([path])
        text = self.workspace.get_text_document(uri).source
        folder.overlays = {**folder.overlays, path: text.encode("utf-8")}
        self._cancel_buffer_timer(uri)
        loop = asyncio.get_running_loop()
        self._buffer_timers[uri] = loop.call_later(self.settings.buffer_debounce_s, self._index_buffer, uri)

    def buffer_closed(self, uri: str) -> None:
        """Pack and index the file from disk again."""
        found = self._folder_of(uri)
        if found is None:
            return
        folder, path = found
        self._cancel_buffer_timer(uri)
        folder.overlays = {key: value for key, value in folder.overlays.items() if key != path}
        folder.index.close_buffer(path)

    def _index_buffer(self, uri: str) -> None:
        self._buffer_timers.pop(uri, None)
        found = self._folder_of(uri)
        if found is None:
            return
        folder, path = found
        text = folder.overlays.get(path)
        if text is not None:
            folder.index.update_buffer(path, text)

    def _cancel_buffer_timer(self, uri: str) -> None:
        timer = self._buffer_timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def reindex_from_disk(self, uri: str) -> None:
        found = self._folder_of(uri)
        if found is not None:
            folder, path = found
            folder.index.schedule_update([path])

    async def pack_answer(
        self, folders: tuple[Folder, ...], requests: list[ContextRequest], warnings: list[Warning]
    ) -> RedactedJson:
        """Run the pipeline on a query thread, and redact and serialise its pack there too, so the
        event loop only frames it; a ``$/cancelRequest`` stops the pipeline at the next stage.
        ``warnings`` (about the request itself) lead the pack's own."""
        workspace = self.require_workspace()
        cancelled = threading.Event()

        def answer() -> tuple[ContextPack, RedactedJson]:
            pack = workspace.context(folders, requests, cancelled.is_set)
            if warnings:
                pack = replace(pack, warnings=(*warnings, *pack.warnings))
            return pack, RedactedJson(pack_to_wire(pack))

        pack, result = await self.on_query_thread(answer, cancelled)
        # Logged here, just before the answer is written: a line written to stderr from the query
        # thread wakes the client's log reader while the answer is still being made, which cost
        # the answer about a millisecond on a busy machine (py-spy, bench/RESULTS.md).
        log.info(
            "contextForTask: %d bodies, %d summaries, %d tokens, %.0f ms",
            len(pack.bodies),
            len(pack.summaries),
            pack.tokens_used,
            sum(pack.timings_ms.values()),
        )
        return result

    async def expand_answer(self, wire_id: str) -> RedactedJson:
        """One node in full, found, redacted and serialised on a query thread."""
        workspace = self.require_workspace()
        folders = workspace.folders
        return await self.on_query_thread(
            lambda: RedactedJson(node_to_wire(workspace.expand(folders, wire_id)))
        )

    async def on_query_thread(self, call: Callable[[], T], cancelled: threading.Event | None = None) -> T:
        """Run ``call`` on a query thread; core errors become the JSON-RPC errors a client expects.

        A cancelled request sets ``cancelled`` (for work that checks it) and keeps the abandoned
        future, so a failure after the answer is still logged.
        """
        future = self.require_workspace().query_threads.submit(call)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if cancelled is not None:
                cancelled.set()
            self._keep_abandoned(future)
            raise
        except InvalidRequestError as error:
            raise JsonRpcInvalidParams(str(error)) from None
        except PipelineCancelledError:
            raise JsonRpcRequestCancelled("the request was cancelled") from None
        except IndexNotAvailableError as error:
            raise IndexUnavailableResponse(str(error)) from None
        except NodeChangedError as error:
            raise JsonRpcContentModified(str(error)) from None

    def word_at(self, uri: str, position: types.Position) -> tuple[Folder, str, int, str] | None:
        """The folder, its path, 1-based line and identifier under the cursor, if there is one."""
        found = self._folder_of(uri)
        if found is None:
            return None
        try:
            word = self.workspace.get_text_document(uri).word_at_position(position)
        except OSError as error:
            # A document the editor has not opened is read from disk, which may fail.
            raise JsonRpcInvalidParams(
                f"textDocument.uri {uri} is neither open in the editor nor a readable file ({error.strerror})"
            ) from None
        return (*found, position.line + 1, word) if word else None

    def close_index(self) -> None:
        if self.folders is not None:
            self.folders.close()
            self.folders = None

    def _keep_abandoned(self, future: Future[Any]) -> None:
        """A cancelled request's work may still be running: keep it so its failure is seen."""

        def finished(done: Future[Any]) -> None:
            error = None if done.cancelled() else done.exception()
            if error is not None and not isinstance(error, PipelineCancelledError):
                log.error("a cancelled request failed: %s", error, exc_info=error)

        future.add_done_callback(finished)

    def _folder_of(self, uri: str) -> tuple[Folder, str] | None:
        return None if self.folders is None else self.folders.folder_of(uri)


def _message_type(level: int) -> types.MessageType:
    if level >= logging.ERROR:
        return types.MessageType.Error
    if level >= logging.WARNING:
        return types.MessageType.Warning
    return types.MessageType.Info if level >= logging.INFO else types.MessageType.Log
