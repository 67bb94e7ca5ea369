"""The frame decoder, fed byte streams with every kind of framing fault, whole and one byte at a time."""

from __future__ import annotations

import json

import pytest

from smartctx.lsp.framing import Event, FrameDecoder, Message, Oversized, Skipped, Unparsable

REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "m"}
BODY = json.dumps(REQUEST).encode()
MAX_BODY_BYTES = 1000


def framed(
    body: bytes = BODY, length: int | None = None, name: bytes = b"Content-Length", eol: bytes = b"\r\n"
) -> bytes:
    return name + b": %d" % (len(body) if length is None else length) + eol + eol + body


def whole(stream: bytes) -> list[Event]:
    return [event for event in FrameDecoder(MAX_BODY_BYTES).feed(stream) if not isinstance(event, Skipped)]


def trickled(stream: bytes) -> list[Event]:
    decoder = FrameDecoder(MAX_BODY_BYTES)
    return [
        event for byte in stream for event in decoder.feed(bytes([byte])) if not isinstance(event, Skipped)
    ]


UNPARSABLE = Unparsable("")

CASES: dict[str, tuple[bytes, list[Event]]] = {
    "a frame": (framed(), [Message(REQUEST)]),
    "lower-case name, LF only": (framed(name=b"content-length", eol=b"\n"), [Message(REQUEST)]),
    "other headers": (b"Content-Type: application/vscode-jsonrpc\r\n" + framed(), [Message(REQUEST)]),
    "garbage before": (b"\x00garbage\r\n\r\n" + framed(), [Message(REQUEST)]),
    "declared one short": (framed(length=len(BODY) - 1) + framed(), [UNPARSABLE, Message(REQUEST)]),
    "declared one long": (framed(length=len(BODY) + 1) + framed(), [Message(REQUEST), Message(REQUEST)]),
    "declared far too long": (framed(length=900) + framed(), [Message(REQUEST), Message(REQUEST)]),
    "no length": (b"Content-Type: x\r\n\r\n" + BODY + framed(), [Message(REQUEST)]),
    "a negative length": (b"Content-Length: -1\r\n\r\n" + framed(), [Message(REQUEST)]),
    "a 5,000-digit length": (
        b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n" + BODY + framed(),
        [Oversized(10**20, 1), Message(REQUEST)],
    ),
    "oversized, id outside params": (
        framed(b'{"params": {"id": 9}, "id": "x", "p": "' + b"y" * 2000 + b'"}') + framed(),
        [Oversized(2041, "x"), Message(REQUEST)],
    ),
    "not UTF-8": (framed(b"\xff\xfe") + framed(), [UNPARSABLE, Message(REQUEST)]),
    "a UTF-8 byte order mark": (
        framed(b"\xef\xbb\xbf" + BODY) + framed(),
        [Message(REQUEST), Message(REQUEST)],
    ),
    "UTF-16": (framed(BODY.decode().encode("utf-16")) + framed(), [UNPARSABLE, Message(REQUEST)]),
    "an empty body": (framed(b"") + framed(), [UNPARSABLE, Message(REQUEST)]),
}


@pytest.mark.parametrize("case", CASES)
def test_each_fault_costs_at_most_its_own_frame(case: str) -> None:
    stream, expected = CASES[case]
    for events in (whole(stream), trickled(stream)):
        assert [UNPARSABLE if isinstance(event, Unparsable) else event for event in events] == expected


def deep(depth: int, id_last: bool) -> bytes:
    params = '"params": ' + "[" * depth + "]" * depth
    members = [params, '"id": "deep"'] if id_last else ['"id": "deep"', params]
    return ("{" + ", ".join(['"jsonrpc": "2.0"', *members]) + "}").encode()


# Bodies that are not read, and the request id found in them all the same.
UNREAD_IDS: dict[str, tuple[bytes, object]] = {
    "UTF-16 with a byte order mark": (BODY.decode().encode("utf-16"), 1),
    "UTF-16LE": (BODY.decode().encode("utf-16-le"), 1),
    "UTF-32BE": (json.dumps({**REQUEST, "id": 2.5}).encode("utf-32-be"), 2.5),
    "nested too deeply, the id first": (deep(5000, id_last=False), "deep"),
    "nested too deeply, the id last": (deep(5000, id_last=True), "deep"),
    "nested too deeply, an id only inside": (
        b'{"jsonrpc": "2.0", "params": ' + b"[" * 5000 + b'{"id": 5}' + b"]" * 5000 + b"}",
        None,
    ),
    "not JSON in UTF-16": (b"\xff\xfe" + "{nope".encode("utf-16-le"), None),
}


@pytest.mark.parametrize("case", UNREAD_IDS)
def test_the_id_of_a_body_that_is_not_read_is_found(case: str) -> None:
    body, request_id = UNREAD_IDS[case]
    events = FrameDecoder(100_000).feed(framed(body))
    assert [event.request_id for event in events if isinstance(event, Unparsable)] == [request_id]


def test_a_body_nested_too_deeply_is_unparsable() -> None:
    events = FrameDecoder().feed(framed(b"[" * 100_000))
    assert events == [Unparsable("the body nests arrays or objects too deeply")]


def test_an_endless_garbage_stream_keeps_memory_bounded() -> None:
    decoder = FrameDecoder(MAX_BODY_BYTES)
    skipped = sum(
        event.byte_count
        for _ in range(100)
        for event in decoder.feed(b"x" * 65536)
        if isinstance(event, Skipped)
    )
    assert 100 * 65536 - skipped < len("Content-Length:")
    assert decoder.feed(framed())[-1] == Message(REQUEST)
