"""JSON-RPC and the LSP lifecycle, checked before anything is dispatched: every request with an id
gets exactly one answer, with the right error code and a message a person can act on.

pygls dispatches whatever it can structure and drops the rest without a word: a request whose
envelope or params do not fit gets no answer, an unexpected failure answers with a Python traceback
in ``error.data``, and the lifecycle is not enforced (requests before ``initialize`` reach the
handlers, a second ``initialize`` re-targets the server, a second ``initialized`` opens every index
again, ``exit`` without ``shutdown`` ends with 0). A reply whose request id cannot be read carries
``"id": null``, as JSON-RPC asks (pygls leaves the member out).
:class:`SmartctxProtocol` takes each decoded JSON value from the transport, answers what is wrong
with it, and hands pygls only messages it can handle.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
    JsonRpcParseError,
    JsonRpcRequestCancelled,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage
from pygls.protocol.language_server import lsp_method

from smartctx.core.json_text import lone_surrogate_at, replace_lone_surrogates
from smartctx.lsp.protocol import PROTOCOL_VERSION, ExperimentalCapabilities
from smartctx.lsp.redacting import RedactingProtocol

log = logging.getLogger(__name__)

JSONRPC_VERSION = "2.0"
# LSP's ``integer``: ids outside it cannot be echoed to a JavaScript client faithfully.
MIN_INTEGER = -(2**31)
MAX_INTEGER = 2**31 - 1

RequestId = int | str
_NOT_TEXT = (
    "holds a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not text: "
    "send each character whole, as UTF-8 or as an escaped pair"
)
# The id a reply carries: a request's id as sent when JSON-RPC allows it (a string or a number; LSP's
# narrower rule refuses some, but the client still waits for an answer to that id), else null.
ReplyId = int | float | str | None


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    message: dict[str, Any]


@dataclass(frozen=True)
class Notification:
    method: str
    message: dict[str, Any]


@dataclass(frozen=True)
class Response:
    id: RequestId
    message: dict[str, Any]


class EnvelopeError(Exception):
    """A message that is not valid JSON-RPC; ``request_id`` is set when the error can be answered
    to a request (an error response goes to id null when the id itself is unreadable)."""

    def __init__(self, message: str, request_id: ReplyId, answer: bool, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.request_id = request_id
        self.answer = answer
        self.code = code


def valid_id(value: Any) -> bool:
    """LSP ids are integers or strings; true, 1.5, null, objects and arrays are not."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return MIN_INTEGER <= value <= MAX_INTEGER
    return isinstance(value, str)


def reply_id(value: Any) -> ReplyId:
    """The id of the reply to a message whose ``id`` member is ``value`` (see :data:`ReplyId`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        # NaN and infinities are not JSON: echoed, they would make the reply unreadable.
        return value if math.isfinite(value) else None
    return value if isinstance(value, int | str) else None


def read_envelope(value: Any) -> Request | Notification | Response:
    """Classify one decoded JSON value; raises :class:`EnvelopeError` saying what is wrong."""
    if isinstance(value, list):
        raise EnvelopeError(
            "batches are not part of LSP: send each message in its own Content-Length frame",
            None,
            True,
            JsonRpcInvalidRequest.CODE,
        )
    if not isinstance(value, dict):
        raise EnvelopeError(
            f"a message must be a JSON object, got {_json_type(value)}",
            None,
            True,
            JsonRpcInvalidRequest.CODE,
        )
    has_id = "id" in value
    raw_id = value.get("id")
    request_id = raw_id if valid_id(raw_id) else None
    is_call = "method" in value
    if value.get("jsonrpc") != JSONRPC_VERSION:
        raise EnvelopeError(
            f'"jsonrpc" must be "2.0", got {_shown(value.get("jsonrpc"))}',
            reply_id(raw_id),
            is_call or not has_id,
            JsonRpcInvalidRequest.CODE,
        )
    if has_id and request_id is None:
        raise EnvelopeError(
            f'"id" must be an integer from {MIN_INTEGER} to {MAX_INTEGER} or a string, got {_shown(raw_id)}',
            reply_id(raw_id),
            is_call,
            JsonRpcInvalidRequest.CODE,
        )
    if not is_call:
        if request_id is None:
            raise EnvelopeError(
                'a message needs "method" (a request or notification) or "id" (a response)',
                None,
                True,
                JsonRpcInvalidRequest.CODE,
            )
        if "result" not in value and "error" not in value:
            # Neither a response nor a call: most likely a request that lost its method, whose
            # sender waits for an answer to its id.
            raise EnvelopeError(
                f'the message with id {request_id!r} has neither "method" (a request) nor "result" or "error"'
                " (a response)",
                request_id,
                True,
                JsonRpcInvalidRequest.CODE,
            )
        if "result" in value and "error" in value:
            raise EnvelopeError(
                f'the response to {request_id!r} must hold exactly one of "result" and "error"',
                request_id,
                False,
                JsonRpcInvalidRequest.CODE,
            )
        return Response(request_id, value)
    method = value["method"]
    if not isinstance(method, str):
        raise EnvelopeError(
            f'"method" must be a string, got {_shown(method)}', request_id, True, JsonRpcInvalidRequest.CODE
        )
    params = value.get("params")
    if params is not None and not isinstance(params, dict | list):
        raise EnvelopeError(
            f"the params of {method} must be an object or an array, got {_json_type(params)}",
            request_id,
            request_id is not None,
            JsonRpcInvalidParams.CODE,
        )
    return Request(request_id, method, value) if request_id is not None else Notification(method, value)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _shown(value: Any) -> str:
    """A client value in a message, cut short: the message must stay readable."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def params_problem(error: Exception) -> str:
    """What cattrs found wrong in a message, as JSON paths a person can look up."""
    if isinstance(error, cattrs.BaseValidationError):
        details = cattrs.transform_error(error, path="message")
        return "; ".join(details[:5]) + ("; …" if len(details) > 5 else "")
    return str(error) or type(error).__name__


class SmartctxProtocol(RedactingProtocol):
    """pygls's LSP protocol behind a checkpoint: envelope, lifecycle and params are checked here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_received = False
        self._initialized_received = False
        # Set by the exit notification: 0 after shutdown, 1 without (as LSP asks); the transport
        # stops reading once it is set.
        self.exit_code: int | None = None

    def receive(self, value: Any) -> None:
        """Handle one decoded JSON value from the transport."""
        try:
            envelope = read_envelope(value)
        except EnvelopeError as error:
            log.warning("invalid message: %s", error.message)
            if error.answer:
                self.answer_error(error.request_id, error.code, error.message)
            if isinstance(value, list):
                self._answer_batch_members(value)
            return
        if isinstance(envelope, Request):
            self._receive_request(envelope)
        elif isinstance(envelope, Notification):
            self._receive_notification(envelope)
        else:
            self._receive_response(envelope)

    def answer_error(self, request_id: ReplyId, code: int, message: str) -> None:
        self._send_response(request_id, error=types.ResponseError(code=code, message=message))  # type: ignore[arg-type]

    def answer_parse_error(self, reason: str, raw_id: Any = None) -> None:
        """ParseError, to the id of the request when it could be read all the same (``raw_id``)."""
        self.answer_error(
            reply_id(raw_id), JsonRpcParseError.CODE, f"the message could not be parsed: {reason}"
        )

    def _answer_batch_members(self, batch: list[Any]) -> None:
        """Each request inside a rejected batch is answered too, so a client waiting on it is not left
        waiting forever."""
        for member in batch:
            member_id = (
                reply_id(member.get("id")) if isinstance(member, dict) and "method" in member else None
            )
            if member_id is not None:
                self.answer_error(
                    member_id,
                    JsonRpcInvalidRequest.CODE,
                    "this request came in a batch, which LSP does not have: send it in its own frame",
                )

    def _receive_request(self, request: Request) -> None:
        problem = self._notification_problem(request.method) or self._lifecycle_problem(request.method)
        if problem is None and (where := lone_surrogate_at(request.message.get("params"), "params")):
            problem = JsonRpcInvalidParams.CODE, f"invalid params for {request.method}: {where} {_NOT_TEXT}"
        if problem is not None:
            code, message = problem
            log.warning("request %s (%r) refused: %s", request.method, request.id, message)
            self.answer_error(request.id, code, message)
            return
        try:
            structured = self._structure(request.message, request.method, JsonRPCRequestMessage)
        except Exception as error:
            message = f"invalid params for {request.method}: {params_problem(error)}"
            log.info("answered %r with InvalidParams: %s", request.id, message)
            self.answer_error(request.id, JsonRpcInvalidParams.CODE, message)
            return
        if request.method == types.INITIALIZE:
            self._initialize_received = True
        self.handle_message(structured)

    def _notification_problem(self, method: str) -> tuple[int, str] | None:
        """A request (a message with an id) for a method LSP defines as a notification is a request
        for a method that does not exist: MethodNotFound, as vscode-jsonrpc answers it, and not run
        (an ``exit`` with an id does not end the server)."""
        message_type = self.get_message_type(method)
        if message_type is None or not attrs.has(message_type) or "id" in attrs.fields_dict(message_type):
            return None
        return JsonRpcMethodNotFound.CODE, f"{method} is a notification, not a request: send it without an id"

    def _lifecycle_problem(self, method: str) -> tuple[int, str] | None:
        if self._shutdown:
            return (
                JsonRpcInvalidRequest.CODE,
                f"the server is shutting down and answers nothing but exit; {method} was not run",
            )
        if method == types.INITIALIZE and self._initialize_received:
            return JsonRpcInvalidRequest.CODE, "the server is already initialized; initialize is sent once"
        if method != types.INITIALIZE and not self._initialize_received:
            return JsonRpcServerNotInitialized.CODE, f"send initialize before {method}"
        return None

    def _receive_notification(self, notification: Notification) -> None:
        method = notification.method
        if method != types.EXIT and (self._shutdown or not self._initialize_received):
            # LSP: before initialize and after shutdown, notifications other than exit are dropped.
            log.info("notification %s dropped: the server is %s", method, self._phase())
            return
        where = lone_surrogate_at(notification.message.get("params"), "params")
        if where is not None:
            # A notification cannot be refused, and dropping a document change would put the
            # server's copy out of step with the editor's: the text goes on with U+FFFD in place
            # of each lone surrogate (one UTF-16 unit for one, so positions still match).
            log.warning("%s: %s %s; each was replaced by U+FFFD", method, where, _NOT_TEXT)
            notification = Notification(method, replace_lone_surrogates(notification.message))
        try:
            structured = self._structure(notification.message, method, JsonRPCNotification)
        except Exception as error:
            log.warning("notification %s dropped, invalid params: %s", method, params_problem(error))
            return
        if method == types.INITIALIZED:
            if self._initialized_received:
                # Run twice, it would open every folder's index a second time, and the first
                # watchers would outlive exit.
                log.warning("a second initialized notification was ignored: it is sent once")
                return
            self._initialized_received = True
        # lsprotocol types the cancelled id as int | str but passes any JSON value through, and pygls
        # looks it up in a dict: an array there would raise out of the read loop.
        if method == types.CANCEL_REQUEST and not valid_id(structured.params.id):
            log.warning(
                "$/cancelRequest dropped: id must be an integer or a string, got %s",
                _shown(structured.params.id),
            )
            return
        self.handle_message(structured)

    def _receive_response(self, response: Response) -> None:
        message = response.message
        try:
            if "error" in message:
                error = self._converter.structure(message["error"], types.ResponseError)
                self._handle_response(response.id, None, error)
                return
            result_type = self._result_types.pop(response.id, None)
            result = message["result"]
            if result_type is not None:
                result = self._converter.structure(message, result_type).result
        except Exception as error:
            log.warning("the client's response to %r is invalid: %s", response.id, params_problem(error))
            return
        self._handle_response(response.id, result)

    def _structure(self, message: dict[str, Any], method: str, fallback: type[Any]) -> Any:
        return self._converter.structure(message, self.get_message_type(method) or fallback)

    def _phase(self) -> str:
        return "shutting down" if self._shutdown else "not initialized yet"

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        """pygls's initialize, whose result also carries the protocol version (protocol.py): a
        client can tell a server too old for it from one that merely misbehaves."""
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        experimental: ExperimentalCapabilities = {"smartctx": {"protocolVersion": PROTOCOL_VERSION}}
        result.capabilities.experimental = experimental
        return result

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """Record the exit code; the transport stops reading, and ``serve`` returns the code (pygls
        calls ``sys.exit`` from a callback, where asyncio swallows the code)."""
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        self.exit_code = 0 if self._shutdown else 1
        if self.exit_code:
            log.warning("exit without shutdown: the server exits with code 1")

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        try:
            handler = self._get_handler(method_name)
        except JsonRpcMethodNotFound as error:
            log.info("answered %r: unknown method %s", msg_id, method_name)
            self._send_response(msg_id, None, error.to_response_error())
            return
        self._ctx_msg_id.set(msg_id)
        self._execute_handler(
            msg_id=msg_id,
            handler=handler,
            args=(params,),
            callback=lambda future: self._send_handler_result(future, msg_id=msg_id),
        )

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """Answer a finished request. A failure the handler meant (a JSON-RPC error) is answered as
        it is; any other is a server fault: logged with its traceback, answered without one."""
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            error: BaseException | None = JsonRpcRequestCancelled(f"request {msg_id!r} was cancelled")
        else:
            error = future.exception()
        if error is None:
            self._send_response(msg_id, result=future.result())
        elif isinstance(error, JsonRpcException):
            log.info("answered %r with an error: %s", msg_id, error.message)
            self._send_response(msg_id, error=error.to_response_error())
        else:
            log.error("request %r failed", msg_id, exc_info=error)
            internal = JsonRpcInternalError(
                f"the server failed to answer ({type(error).__name__}); its log has the details"
            )
            self._send_response(msg_id, error=internal.to_response_error())
