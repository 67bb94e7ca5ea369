"""The LSP base protocol's framing (``Content-Length`` headers, then a JSON body), read so that no byte
sequence can kill the server or leave it deaf.

pygls's reader trusts the stream: it allocates whatever a header asks for, matches the header name
case-sensitively with CRLF only, and after one miscounted frame never finds a frame start again. This
decoder is sans-IO (bytes in, events out) so every fault is a unit test, and it keeps three promises:

- memory is bounded: a body above ``max_body_bytes`` is never held, only skipped, and no header
  line may grow past ``MAX_HEADER_LINE_BYTES``;
- header names are case-insensitive and a bare LF ends a line as well as CRLF;
- after any fault (garbage, a missing or malformed length, a length that is too short or too long)
  the next ``Content-Length:`` in the stream starts the next frame.

A body that cannot be read still gives its request id where the id can be found (an oversized
body's first bytes, a body in UTF-16, one nested too deeply), so the request is answered; a UTF-8
byte order mark before a body is skipped.

A body whose declared length is longer than what the client sent would otherwise wait for bytes
that never come. A valid body is exactly one JSON value, so when a complete JSON value is followed
by the start of another frame, the body ends there and the rest is framed again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# The default cap on one message body. VS Code sends whole documents in didOpen; 64 MiB is far above
# any file the index takes (its size cap is much lower) and far below what hurts the machine.
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
# A header line longer than this is garbage (real ones are below 100 bytes).
MAX_HEADER_LINE_BYTES = 8 * 1024
# A header block with more lines than this is garbage (the protocol defines two headers).
MAX_HEADER_LINES = 32
# How many times one pending body may be tested for an early end: each test parses the pending
# bytes, so the bound keeps a body full of ``Content-Length:`` text linear to read.
MAX_EARLY_END_TESTS = 8
# How much of an oversized body is kept to look for its request id, so the client gets an answer.
OVERSIZED_ID_WINDOW_BYTES = 4096

_FRAME_START = b"content-length:"
_FRAME_START_PATTERN = re.compile(re.escape(_FRAME_START), re.IGNORECASE)
_LENGTH_DIGITS_MAX = 20
# An id value: an integer (not the start of a fraction) or a short string.
_ID_VALUE = rb'(-?\d{1,10}(?![\d.eE])|"(?:[^"\\\x00-\x1f]|\\.){0,256}")'
# An id value after ``"id"``.
_ID_VALUE_PATTERN = re.compile(rb"\s*:\s*" + _ID_VALUE)
# The id as the last member of the outermost object: the body's last ``}`` closes it.
_LAST_ID_PATTERN = re.compile(rb'[,{]\s*"id"\s*:\s*' + _ID_VALUE + rb"\s*\}\s*\Z")
# What may come before a body's JSON value: whitespace, and a UTF-8 byte order mark.
_LEADING_WHITESPACE = " \t\r\n\ufeff"
_QUOTE = ord('"')
_BACKSLASH = ord("\\")
_JSON_WHITESPACE = b" \t\r\n"


@dataclass(frozen=True)
class Message:
    """A complete body that is one JSON value (not yet checked to be a JSON-RPC message)."""

    value: Any


@dataclass(frozen=True)
class Unparsable:
    """A complete body that is not UTF-8 JSON; the reason is for the ParseError's message.
    ``request_id`` is the outermost ``"id"`` as sent when it could be read all the same (a body in
    UTF-16, one nested too deeply), so the request is answered to it; else None."""

    reason: str
    request_id: Any = None


@dataclass(frozen=True)
class Oversized:
    """A frame whose body was skipped for its size; ``request_id`` is the id found in its first
    bytes, if any, so the request can still be answered."""

    declared_bytes: int
    request_id: int | str | None


@dataclass(frozen=True)
class Skipped:
    """Bytes that were not part of any frame (garbage, a header block without a usable length)."""

    byte_count: int
    reason: str


Event = Message | Unparsable | Oversized | Skipped


class FrameDecoder:
    """Feed it bytes as they arrive; it returns the events those bytes complete."""

    def __init__(self, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.max_body_bytes = max_body_bytes
        self._buffer = bytearray()
        # The declared body length once a header block is complete, else None.
        self._body_bytes: int | None = None
        # While a body is pending: how far its bytes were searched for a frame start, and how many
        # early ends were tested.
        self._searched = 0
        self._early_end_tests = 0
        # While an oversized body is skipped: the bytes left to skip, and what is reported at its end.
        self._skip_left = 0
        self._skipping: Oversized | None = None

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while (event := self._next_event()) is not None:
            events.append(event)
        return events

    def _next_event(self) -> Event | None:
        if self._skipping is not None:
            return self._skip()
        if self._body_bytes is None:
            return self._headers()
        return self._body(self._body_bytes)

    def _headers(self) -> Event | None:
        """Read one header block; anything that is not one is skipped up to the next frame start."""
        start = _find_frame_start(self._buffer, 0)
        if start < 0:
            # Keep a tail that may be the beginning of a split ``Content-Length:``.
            dropped = len(self._buffer) - (len(_FRAME_START) - 1)
            if dropped > 0:
                del self._buffer[:dropped]
                return Skipped(dropped, "bytes outside any frame")
            return None
        if start > 0:
            del self._buffer[:start]
            return Skipped(start, "bytes before Content-Length")
        length: int | None = None
        position = 0
        for _ in range(MAX_HEADER_LINES):
            end = self._buffer.find(b"\n", position, position + MAX_HEADER_LINE_BYTES + 1)
            if end < 0:
                if len(self._buffer) - position > MAX_HEADER_LINE_BYTES:
                    return self._resync(position + 1, "a header line is too long")
                return None
            line = bytes(self._buffer[position:end]).rstrip(b"\r")
            position = end + 1
            if not line:
                if length is None:
                    return self._resync(position, "a header block without Content-Length")
                del self._buffer[:position]
                return self._begin_body(length)
            name, colon, value = line.partition(b":")
            if not colon or not name.strip():
                return self._resync(position, f"a malformed header line {line[:80]!r}")
            if name.strip().lower() == _FRAME_START[:-1]:
                parsed = _content_length(value)
                if parsed is None or (length is not None and parsed != length):
                    return self._resync(position, f"an unusable Content-Length {value[:40]!r}")
                length = parsed
        return self._resync(position, "too many header lines")

    def _resync(self, after: int, reason: str) -> Skipped:
        """Skip to the next frame start, or to ``after`` if it comes first: a frame start inside a
        bad header line counts, since a miscounted body leaves the next header glued to its end."""
        start = _find_frame_start(self._buffer, 1, after)
        dropped = start if start > 0 else after
        del self._buffer[:dropped]
        return Skipped(dropped, reason)

    def _begin_body(self, length: int) -> Event | None:
        self._body_bytes = length
        self._searched = 0
        self._early_end_tests = 0
        return self._body(length)

    def _begin_skip(self, length: int) -> Event | None:
        """Start skipping an oversized body once its first bytes are here to look for its id in.

        The id is looked for only before the next frame start: bytes after it belong to another
        message, whose id this answer must not take.
        """
        window_bytes = min(OVERSIZED_ID_WINDOW_BYTES, length)
        next_start = _find_frame_start(self._buffer, 1, window_bytes)
        if len(self._buffer) < window_bytes and next_start < 0:
            return None
        window = bytes(self._buffer[: next_start if next_start > 0 else window_bytes])
        self._body_bytes = None
        self._skipping = Oversized(length, _find_request_id(window))
        self._skip_left = length
        return self._skip()

    def _body(self, length: int) -> Event | None:
        if length > self.max_body_bytes:
            return self._begin_skip(length)
        if len(self._buffer) >= length:
            body = bytes(self._buffer[:length])
            del self._buffer[:length]
            self._body_bytes = None
            return self._decode(body)
        early_end = self._early_end()
        if early_end is None:
            return None
        body = bytes(self._buffer[:early_end])
        del self._buffer[:early_end]
        self._body_bytes = None
        return self._decode(body)

    def _decode(self, body: bytes) -> Message | Unparsable:
        """The body's JSON value.

        A body declared too long swallowed the start of the next frame: when the body is one JSON
        value followed by more bytes, the value is the message; when it is not JSON, what looks like
        the start of a frame is given back. Either way the rest is framed again.
        """
        foreign = _foreign_encoding(body)
        if foreign is not None:
            return foreign
        try:
            # RFC 8259 lets a parser ignore a byte order mark; some writers put one before UTF-8.
            return Message(json.loads(body.decode("utf-8-sig")))
        except RecursionError:
            return Unparsable("the body nests arrays or objects too deeply", _deep_request_id(body))
        except ValueError as error:
            end = _json_value_end(body)
            if end is not None and body[end:].strip(_JSON_WHITESPACE):
                self._buffer[:0] = body[end:]
                return self._decode(body[:end])
            reason = (
                f"the body is not UTF-8 ({error.reason} at byte {error.start})"
                if isinstance(error, UnicodeDecodeError)
                else f"the body is not JSON ({error})"
            )
            swallowed = _swallowed_frame_start(body)
            self._buffer[:0] = body[swallowed:]
            return Unparsable(reason)

    def _early_end(self) -> int | None:
        """Where the pending body ends, if its bytes already hold a complete JSON value followed by
        a frame start; each byte is searched once and the parse is tried a bounded number of times."""
        while self._early_end_tests < MAX_EARLY_END_TESTS:
            start = _find_frame_start(self._buffer, max(1, self._searched))
            if start < 0:
                self._searched = max(0, len(self._buffer) - (len(_FRAME_START) - 1))
                return None
            self._searched = start + 1
            self._early_end_tests += 1
            end = _json_value_end(bytes(self._buffer[:start]))
            if end is not None and not self._buffer[end:start].strip(_JSON_WHITESPACE):
                return start
        return None

    def _skip(self) -> Event | None:
        """Drop an oversized body as it arrives; a frame start inside it ends it early, since a real
        body holds no raw header and a client that lied about the length must not deafen the server."""
        assert self._skipping is not None
        start = _find_frame_start(self._buffer, 0, self._skip_left)
        if start >= 0:
            drop = start
        else:
            # Keep a possible split frame start for the next feed, unless the body ends here.
            tail = len(_FRAME_START) - 1
            drop = min(self._skip_left, max(0, len(self._buffer) - tail))
            if len(self._buffer) >= self._skip_left:
                drop = self._skip_left
        del self._buffer[:drop]
        self._skip_left -= drop
        if start < 0 and self._skip_left > 0:
            return None
        skipped, self._skipping, self._skip_left = self._skipping, None, 0
        return skipped


def _find_frame_start(buffer: bytearray, start: int, end: int | None = None) -> int:
    """The offset of the next ``Content-Length:`` (any case) from ``start`` to ``end``, or -1."""
    found = _FRAME_START_PATTERN.search(buffer, start, len(buffer) if end is None else min(end, len(buffer)))
    return -1 if found is None else found.start()


def _swallowed_frame_start(body: bytes) -> int:
    """Where the next frame starts inside (or at the very end of) a body that is not JSON: the
    first ``Content-Length:``, else a tail that begins one; ``len(body)`` if there is neither."""
    start = _find_frame_start(bytearray(body), 1)
    if start > 0:
        return start
    lowered = body[-(len(_FRAME_START) - 1) :].lower()
    for size in range(len(lowered), 0, -1):
        if _FRAME_START.startswith(lowered[-size:]):
            return len(body) - size
    return len(body)


def _content_length(value: bytes) -> int | None:
    """The length a header value declares, or None if it is not a non-negative decimal number. A
    number too long to be real is kept as "larger than any limit" so the body is skipped, not read."""
    digits = value.strip(b" \t")
    if not digits.isdigit():
        return None
    return int(digits) if len(digits) <= _LENGTH_DIGITS_MAX else 10**_LENGTH_DIGITS_MAX


def _foreign_encoding(body: bytes) -> Unparsable | None:
    """A body that is JSON in UTF-16 or UTF-32 (by its byte order mark or its zero bytes, as RFC
    4627 tells them apart): LSP messages are UTF-8, so it is not read, but its id is; None for
    any other body."""
    encoding = json.detect_encoding(body)
    if encoding.startswith("utf-8"):
        return None
    try:
        value = json.loads(body.decode(encoding))
    except (ValueError, RecursionError):
        return None
    request_id = value.get("id") if isinstance(value, dict) else None
    return Unparsable(f"the body is {encoding.upper()}; LSP messages are UTF-8", request_id)


def _deep_request_id(body: bytes) -> int | str | None:
    """The id of a body nested too deeply to parse, when it is plainly in its first or last bytes
    (clients write it before the params, or as the last member)."""
    head = _find_request_id(body[:OVERSIZED_ID_WINDOW_BYTES])
    if head is not None:
        return head
    tail = _LAST_ID_PATTERN.search(body[-OVERSIZED_ID_WINDOW_BYTES:])
    return _plain_id(tail.group(1)) if tail is not None else None


def _json_value_end(data: bytes) -> int | None:
    """The byte offset where the JSON value at the start of ``data`` ends, or None if none does."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(text, len(text) - len(text.lstrip(_LEADING_WHITESPACE)))
    except (ValueError, RecursionError):
        return None
    return len(text[:end].encode("utf-8"))


def _find_request_id(window: bytes) -> int | str | None:
    """The request id in the first bytes of a body that will not be read, if one is plainly there:
    an ``"id"`` key of the outermost object (not one inside ``params``)."""
    depth = 0
    position = 0
    while position < len(window):
        byte = window[position]
        if byte == _QUOTE:
            string_end = _string_end(window, position)
            if string_end is None:
                return None
            if depth == 1 and window[position:string_end] == b'"id"':
                match = _ID_VALUE_PATTERN.match(window, string_end)
                return _plain_id(match.group(1)) if match is not None else None
            position = string_end
            continue
        if byte in b"{[":
            depth += 1
        elif byte in b"}]":
            depth -= 1
        position += 1
    return None


def _string_end(window: bytes, quote: int) -> int | None:
    """The offset after the JSON string that starts at ``quote``, or None if it does not end here."""
    position = quote + 1
    while position < len(window):
        if window[position] == _BACKSLASH:
            position += 2
        elif window[position] == _QUOTE:
            return position + 1
        else:
            position += 1
    return None


def _plain_id(text: bytes) -> int | str | None:
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None
