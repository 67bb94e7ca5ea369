"""Fuzz ``smartctx serve`` over real stdio: generated frames (framing faults, bad envelopes, params of
every method, sizes) interleaved with valid requests. Counts crashes, hangs, unanswered requests and
wrong answers; prints one table and writes JSON to bench/out/fuzz_lsp.json.

    .venv/bin/python -m bench.reliability.fuzz_lsp --frames 6000 --seed 1

What counts as what:
- crash: the server process ended, stopped reading its input for ``--wait-s``, or did not end
  within ``--wait-s`` of shutdown and exit;
- hang: a request that must be answered was not, within ``--wait-s`` of its round's end; a request
  whose id cannot be read is due a reply to id null, so a round with fewer of those than such
  requests counts a hang for each one short;
- missing: a valid request (a probe) got no answer;
- no id: a reply without an ``id`` member (JSON-RPC: null when the request's id cannot be read);
- wrong: an answer with an unexpected code, an error carrying ``data`` or a traceback, an
  InternalError, a second answer to one id, an answer to an id never sent, or more replies to id
  null than a round's frames can explain.

Unanswered requests are the hangs and the missing together.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, Queue
from typing import Any

from bench.datasets import CHECKOUT, OUT_DIR

FIXTURE = CHECKOUT / "tests" / "fixtures" / "shop"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# A fuzzed request may fairly be refused for these reasons besides bad params.
REFUSALS = {INVALID_PARAMS, METHOD_NOT_FOUND, INVALID_REQUEST, -32800, -32801, -32010}
# Faults shown in the output, each cut to so many characters (a wrong answer may be a whole pack).
MAX_EXAMPLES = 20
MAX_EXAMPLE_CHARS = 400
# The server's limit during the run, small so oversized frames are cheap to send.
MAX_MESSAGE_BYTES = 256 * 1024

ANY_REPLY = "any"  # any answer but an InternalError or one with internals
RESULT = "result"
# A result whose metadata.warnings holds this code (lsp/protocol.py UNKNOWN_FIELD_WARNING).
UNKNOWN_FIELD_WARNING = "unknown-field"

METHODS = [
    "textDocument/hover",
    "workspace/executeCommand",
    "smartctx/contextForTask",
    "smartctx/expand",
    "smartctx/indexStatus",
    "textDocument/definition",
    "$/unknown",
]
NOTIFICATIONS = [
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "workspace/didChangeWatchedFiles",
    "$/cancelRequest",
    "$/setTrace",
    # A second initialized, which the server ignores (it once opened every index again and could
    # not exit after).
    "initialized",
]
# Notifications sent with an id: requests for methods that do not exist (exit included).
NOTIFICATIONS_AS_REQUESTS = [*NOTIFICATIONS, "exit"]
# Parameters with strings a lone surrogate can be put into, by method.
STRING_PARAMS = [
    "textDocument/hover",
    "smartctx/contextForTask",
    "smartctx/expand",
    "workspace/executeCommand",
]


@dataclass
class Case:
    kind: str
    data: bytes
    # Request ids this case must get answered, with what: RESULT, an error code, or ANY_REPLY.
    expect: dict[Any, Any] = field(default_factory=dict)
    # Ids that may be answered (at most once, by no InternalError), e.g. requests inside damaged frames.
    maybe: set[Any] = field(default_factory=set)
    # How many replies to id null the case is due (requests whose id cannot be read), or None when
    # that depends on how a damaged frame is cut.
    null_replies: int | None = 0


def framed(body: bytes, name: bytes = b"Content-Length", eol: bytes = b"\r\n", delta: int = 0) -> bytes:
    return name + b": %d" % (len(body) + delta) + eol + eol + body


def dumps(message: Any) -> bytes:
    return json.dumps(message).encode()


class Generator:
    """Cases from one seeded random source, so a run can be replayed."""

    def __init__(self, seed: int, workspace: Path) -> None:
        self.random = random.Random(seed)
        self.workspace = workspace
        self.counter = 0

    def new_id(self, prefix: str) -> str | int:
        self.counter += 1
        return self.counter if self.random.random() < 0.5 else f"{prefix}-{self.counter}"

    def case(self) -> Case:
        makers: list[Callable[[], Case]] = [
            self.framing,
            self.envelope,
            self.params,
            self.notification,
            self.size,
            self.ids,
            self.encoding,
            self.text,
            self.focus,
        ]
        return self.random.choice(makers)()

    def valid_params(self, method: str) -> Any:
        uri = (self.workspace / "shop" / "orders.py").as_uri()
        position = {"line": self.random.randint(0, 30), "character": self.random.randint(0, 20)}
        return {
            "textDocument/hover": {"textDocument": {"uri": uri}, "position": position},
            "textDocument/definition": {"textDocument": {"uri": uri}, "position": position},
            "workspace/executeCommand": {"command": "smartctx.reindex"},
            "smartctx/contextForTask": {"task": "how are orders totalled", "options": {"maxBodies": 2}},
            "smartctx/expand": {"id": "shop/orders.py::Order"},
            "smartctx/indexStatus": None,
            "$/unknown": {},
        }[method]

    def junk(self, depth: int = 0) -> Any:
        choices: list[Callable[[], Any]] = [
            lambda: None,
            lambda: self.random.choice([True, False]),
            lambda: self.random.randint(-(2**40), 2**40),
            lambda: self.random.random() * 10,
            lambda: "".join(chr(self.random.randint(0, 0x2FF)) for _ in range(self.random.randint(0, 12))),
            lambda: "\ud800",
            lambda: "file:///" + "../" * self.random.randint(0, 5) + "etc/passwd",
        ]
        if depth < 3:
            choices += [
                lambda: [self.junk(depth + 1) for _ in range(self.random.randint(0, 3))],
                lambda: {self.random.choice(["uri", "line", "id", "task", "x"]): self.junk(depth + 1)},
            ]
        return self.random.choice(choices)()

    def mutate(self, value: Any) -> Any:
        """``value`` with one field replaced, removed or added (recursively), or replaced whole."""
        if not isinstance(value, dict) or not value or self.random.random() < 0.2:
            return self.junk()
        key = self.random.choice(sorted(value))
        mutated = dict(value)
        roll = self.random.random()
        if roll < 0.3:
            del mutated[key]
        elif roll < 0.7:
            mutated[key] = self.mutate(value[key])
        else:
            mutated[key] = self.junk()
        return mutated

    def framing(self) -> Case:
        request_id = self.new_id("f")
        body = dumps({"jsonrpc": "2.0", "id": request_id, "method": "smartctx/indexStatus"})
        fault = self.random.choice(
            [
                "lower",
                "lf",
                "short",
                "long",
                "garbage",
                "no-length",
                "huge",
                "digits",
                "empty",
                "utf8",
                "nest",
                "split",
            ]
        )
        if fault == "lower":
            return Case("framing", framed(body, name=b"content-length"), expect={request_id: RESULT})
        if fault == "lf":
            return Case("framing", framed(body, eol=b"\n"), expect={request_id: RESULT})
        if fault == "split":
            # A valid frame preceded by a header-looking prefix: it must still be found.
            return Case("framing", b"Content-Type: x\r\n" + framed(body), expect={request_id: RESULT})
        if fault == "short":
            return Case(
                "framing",
                framed(body, delta=-self.random.randint(1, 5)),
                maybe={request_id},
                null_replies=None,
            )
        if fault == "long":
            return Case("framing", framed(body, delta=self.random.randint(1, 40)), maybe={request_id})
        if fault == "garbage":
            garbage = bytes(self.random.randint(0, 255) for _ in range(self.random.randint(1, 300)))
            return Case("framing", garbage.replace(b":", b"."))
        if fault == "no-length":
            return Case("framing", b"Content-Type: x\r\n\r\n" + body, maybe={request_id})
        if fault == "huge":
            length = self.random.choice([2**31, 2**63, 99999999999, MAX_MESSAGE_BYTES + 1])
            return Case("framing", b"Content-Length: %d\r\n\r\n" % length + body, maybe={request_id})
        if fault == "digits":
            return Case("framing", b"Content-Length: " + b"9" * self.random.randint(20, 5000) + b"\r\n\r\n{}")
        if fault == "empty":
            return Case("framing", framed(b""), null_replies=1)
        if fault == "utf8":
            return Case("framing", framed(b"\xff\xfe" + body), null_replies=1)
        return Case("framing", framed(b"[" * self.random.randint(1000, 100_000)), null_replies=1)

    def envelope(self) -> Case:
        request_id = self.new_id("e")
        bad: list[tuple[Any, dict[Any, Any]]] = [
            ({"jsonrpc": "2.0", "id": request_id, "method": self.junk()}, {request_id: INVALID_REQUEST}),
            (
                {"jsonrpc": "1.0", "id": request_id, "method": "smartctx/indexStatus"},
                {request_id: INVALID_REQUEST},
            ),
            ({"id": request_id, "method": "smartctx/indexStatus"}, {request_id: INVALID_REQUEST}),
            ({"jsonrpc": "2.0", "id": self.random.choice([{}, [], True, None]), "method": "x"}, {}),
            (
                [{"jsonrpc": "2.0", "id": request_id, "method": "smartctx/indexStatus"}],
                {request_id: INVALID_REQUEST},
            ),
            ([], {}),
            (self.junk(), {}),
            (
                {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {"capabilities": {}}},
                {request_id: INVALID_REQUEST},
            ),
            (
                {"jsonrpc": "2.0", "id": request_id, "method": "smartctx/indexStatus", "params": 5},
                {request_id: INVALID_PARAMS},
            ),
            ({"jsonrpc": "2.0", "id": "unsent-response", "result": None}, {}),
        ]
        message, expect = self.random.choice(bad)
        well_formed = isinstance(message, dict) and message.get("id") == request_id and message.get("jsonrpc")
        if well_formed and isinstance(message.get("method"), str):
            # A junk method that is a string is a well-formed request for an unknown method.
            expect = {request_id: ANY_REPLY} if message["method"] != "initialize" else expect
        # A value that happens to be a valid message is answered like one.
        if message == {"jsonrpc": "2.0", "id": request_id, "method": "smartctx/indexStatus"}:
            expect = {request_id: RESULT}
        return Case("envelope", framed(dumps(message)), expect=expect, null_replies=null_replies(message))

    def params(self) -> Case:
        request_id = self.new_id("p")
        method = self.random.choice(METHODS)
        params = self.mutate(self.valid_params(method))
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None or self.random.random() < 0.5:
            message["params"] = params
        return Case("params", framed(dumps(message)), expect={request_id: ANY_REPLY})

    def notification(self) -> Case:
        method = self.random.choice(NOTIFICATIONS)
        uri = (self.workspace / "shop" / f"fuzz{self.random.randint(0, 3)}.py").as_uri()
        valid = {
            "textDocument": {
                "uri": uri,
                "languageId": "python",
                "version": 1,
                "text": "def f():\n    pass\n",
            },
            "contentChanges": [{"text": "x = 1\n"}],
            "changes": [{"uri": uri, "type": 2}],
            # An id no request has: cancelling a real one would turn its answer into RequestCancelled.
            "id": f"never-sent-{self.random.randint(0, 10)}",
            "value": "off",
        }
        params = self.mutate(valid) if self.random.random() < 0.8 else valid
        return Case("notification", framed(dumps({"jsonrpc": "2.0", "method": method, "params": params})))

    def ids(self) -> Case:
        """Ids JSON-RPC allows but LSP refuses (answered to as sent), requests that lost their
        method, and notifications sent with an id."""
        self.counter += 1
        request_id = self.new_id("i")
        forms: list[tuple[Any, dict[Any, Any]]] = [
            ({"jsonrpc": "2.0", "id": self.counter + 0.5, "method": "smartctx/indexStatus"}, {}),
            ({"jsonrpc": "2.0", "id": 2**40 + self.counter, "method": "smartctx/indexStatus"}, {}),
            ({"jsonrpc": "2.0", "id": request_id, "params": {}}, {}),
            ({"jsonrpc": "2.0", "id": request_id}, {}),
            (
                {"jsonrpc": "2.0", "id": request_id, "method": self.random.choice(NOTIFICATIONS_AS_REQUESTS)},
                {request_id: METHOD_NOT_FOUND},
            ),
        ]
        message, expect = self.random.choice(forms)
        expect = expect or {message["id"]: INVALID_REQUEST}
        if self.random.random() < 0.5 and "method" in message:
            message["params"] = {}
        return Case("ids", framed(dumps(message)), expect=expect)

    def encoding(self) -> Case:
        """Bodies that are not read as they are, each with an id that can be: a UTF-8 byte order
        mark (skipped: the request is answered), UTF-16 and UTF-32, params nested too deeply."""
        request_id = self.new_id("u")
        text = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "smartctx/indexStatus"})
        form = self.random.choice(["bom", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-be", "deep"])
        if form == "bom":
            return Case("encoding", framed(b"\xef\xbb\xbf" + text.encode()), expect={request_id: RESULT})
        if form == "deep":
            depth = self.random.randint(1000, 50_000)
            params = '"params": ' + "[" * depth + "]" * depth
            members = ['"jsonrpc": "2.0"', '"method": "smartctx/indexStatus"', params]
            members.insert(self.random.choice([0, len(members)]), '"id": ' + json.dumps(request_id))
            body = ("{" + ", ".join(members) + "}").encode()
            return Case("encoding", framed(body), expect={request_id: PARSE_ERROR})
        return Case("encoding", framed(text.encode(form)), expect={request_id: PARSE_ERROR})

    def text(self) -> Case:
        """A lone surrogate (a valid JSON escape, not a character) put into one string of a valid
        request's params: InvalidParams naming the field."""
        request_id = self.new_id("t")
        method = self.random.choice(STRING_PARAMS)
        params = self.valid_params(method)
        if method == "workspace/executeCommand":
            params = {**params, "arguments": ["x"]}
        strings = list(string_leaves(params))
        set_leaf(params, self.random.choice(strings), self.random.choice(["\ud800", "\udfff"]), self.random)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return Case("text", framed(dumps(message)), expect={request_id: INVALID_PARAMS})

    def focus(self) -> Case:
        """contextForTask with a focus field of the wrong type (InvalidParams) or one the protocol
        does not define (a result with an unknown-field warning)."""
        request_id = self.new_id("c")
        uri = (self.workspace / "shop" / "orders.py").as_uri()
        ill_typed = [
            {"uri": self.random.choice([5, True, [], {}])},
            {"uri": uri, "position": self.random.choice(["x", {"line": "1"}, {"line": 1, "character": "2"}])},
            {"openFiles": self.random.choice(["x", [None], [{"uri": 5}], [{"uri": uri, "visible": "yes"}]])},
            {"recentEdits": self.random.choice(["x", [None], [{"uri": uri, "editedAt": 5}]])},
        ]
        unknown = {
            self.random.choice(["openUris", "recentUris", "cursor", "x"]): self.random.choice(
                ["x", [None], 5, {"a": 1}, None]
            ),
            "openFiles": [{"uri": uri, "visible": True}],
        }
        if self.random.random() < 0.5:
            focus, expected = self.random.choice(ill_typed), INVALID_PARAMS
        else:
            focus, expected = unknown, UNKNOWN_FIELD_WARNING
        params = {"task": "how are orders totalled", "options": {"maxBodies": 2}, "focus": focus}
        message = {"jsonrpc": "2.0", "id": request_id, "method": "smartctx/contextForTask", "params": params}
        return Case("focus", framed(dumps(message)), expect={request_id: expected})

    def size(self) -> Case:
        request_id = self.new_id("s")
        roll = self.random.random()
        if roll < 0.2:
            # A long task is valid but costs a pack; kept short enough that rounds stay quick.
            task = "order total " * self.random.randint(1, 2000)
            message = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "smartctx/contextForTask",
                "params": {"task": task},
            }
            return Case("size", framed(dumps(message)), expect={request_id: ANY_REPLY})
        if roll < 0.5:
            filler = "y" * self.random.randint(1, MAX_MESSAGE_BYTES - 100)
            message = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "smartctx/indexStatus",
                "params": {"f": filler},
            }
            return Case("size", framed(dumps(message)), expect={request_id: RESULT})
        filler = "x" * (MAX_MESSAGE_BYTES + self.random.randint(1, 100_000))
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "smartctx/indexStatus",
            "params": {"f": filler},
        }
        return Case("size", framed(dumps(message)), expect={request_id: INVALID_REQUEST})


def null_replies(message: Any) -> int:
    """How many replies to id null a whole message is due: one when it is not a request or a
    response the server can read the id of (a batch, a non-object, an object with neither a
    method nor an id, a call whose id is not a string or a number)."""
    if not isinstance(message, dict):
        return 1
    if "id" not in message:
        return 0 if "method" in message and message.get("jsonrpc") == "2.0" else 1
    request_id = message["id"]
    readable = isinstance(request_id, int | float | str) and not isinstance(request_id, bool)
    return 0 if readable or "method" not in message else 1


def string_leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of the strings in ``value``."""
    if isinstance(value, str):
        return [path]
    if isinstance(value, dict):
        return [leaf for key, member in value.items() for leaf in string_leaves(member, (*path, key))]
    if isinstance(value, list):
        return [leaf for index, member in enumerate(value) for leaf in string_leaves(member, (*path, index))]
    return []


def set_leaf(value: Any, path: tuple[Any, ...], insert: str, source: random.Random) -> None:
    """Put ``insert`` at a random place of the string at ``path``."""
    *parents, last = path
    for key in parents:
        value = value[key]
    position = source.randint(0, len(value[last]))
    value[last] = value[last][:position] + insert + value[last][position:]


class Server:
    """``smartctx serve`` with a thread reading its framed output into a queue."""

    def __init__(self, workspace: Path, index_dir: Path, wait_s: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "smartctx", "serve", "--max-message-bytes", str(MAX_MESSAGE_BYTES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdin is not None
        # Written without blocking, past the buffered writer, so a server that stops reading is seen,
        # not waited on forever (stdout stays buffered: its reads must return whole bodies).
        self._stdin = self.process.stdin.fileno()
        os.set_blocking(self._stdin, False)
        self.wait_s = wait_s
        self.messages: Queue[dict[str, Any] | None] = Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.workspace = workspace
        self.index_dir = index_dir

    def _read(self) -> None:
        assert self.process.stdout is not None
        stream = self.process.stdout
        while True:
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if not length:
                self.messages.put(None)
                return
            self.messages.put(json.loads(stream.read(length)))

    def write(self, data: bytes) -> bool:
        """Write all of ``data``; False if the server has gone or read none of it for ``wait_s``."""
        unsent = memoryview(data)
        while unsent:
            _, writable, _ = select.select([], [self._stdin], [], self.wait_s)
            if not writable:
                return False
            try:
                unsent = unsent[os.write(self._stdin, unsent) :]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                return False
        return True

    def alive(self) -> bool:
        return self.process.poll() is None


@dataclass
class Tally:
    frames: int = 0
    cases: Counter[str] = field(default_factory=Counter)
    crashes: int = 0
    hangs: int = 0
    missing: int = 0
    no_id: int = 0
    wrong: int = 0
    answered: int = 0
    probes: int = 0
    examples: list[str] = field(default_factory=list)

    def fault(self, what: str, detail: str) -> None:
        setattr(self, what, getattr(self, what) + 1)
        if len(self.examples) < MAX_EXAMPLES:
            shown = detail if len(detail) <= MAX_EXAMPLE_CHARS else detail[: MAX_EXAMPLE_CHARS - 1] + "…"
            self.examples.append(f"{what}: {shown}")


def judge(answer: dict[str, Any], expected: Any) -> str | None:
    """Why ``answer`` is wrong for ``expected``, or None."""
    error = answer.get("error")
    if error is not None and ("data" in error or "Traceback" in str(error.get("message"))):
        return f"internals in {error}"
    if error is not None and error.get("code") == INTERNAL_ERROR:
        return f"InternalError {error.get('message')}"
    if expected == RESULT:
        return None if "result" in answer else f"expected a result, got {error}"
    if expected == UNKNOWN_FIELD_WARNING:
        warnings = (answer.get("result") or {}).get("metadata", {}).get("warnings", [])
        found = any(warning.get("code") == expected for warning in warnings)
        return None if found else f"expected a result with an {expected} warning, got {answer}"
    if expected == ANY_REPLY:
        return None if error is None or error.get("code") in REFUSALS else f"unexpected code {error}"
    return (
        None if error is not None and error.get("code") == expected else f"expected {expected}, got {answer}"
    )


def run_fuzz(frames: int, seed: int, wait_s: float = 20.0, round_cases: int = 25) -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="smartctx-fuzz-") as temp:
        workspace = Path(temp) / "shop"
        shutil.copytree(FIXTURE, workspace)
        server = Server(workspace, Path(temp) / "index", wait_s)
        generator = Generator(seed, workspace)
        pending: dict[Any, Any] = {}
        maybe: set[Any] = set()
        seen: set[Any] = set()
        # Replies to id null in the current round.
        null_replies = 0

        def collect(until: float) -> None:
            while pending and time.monotonic() < until:
                try:
                    message = server.messages.get(timeout=0.2)
                except Empty:
                    continue
                if message is None:
                    return
                if "method" in message:
                    if "id" in message:
                        server.write(framed(dumps({"jsonrpc": "2.0", "id": message["id"], "result": None})))
                    continue
                account(message)

        def account(message: dict[str, Any]) -> None:
            nonlocal null_replies
            if "id" not in message:
                tally.fault("no_id", f"a reply without an id member: {message}")
            answer_id = message.get("id")
            if answer_id is None:
                null_replies += 1
                code = message.get("error", {}).get("code")
                if code not in (PARSE_ERROR, INVALID_REQUEST):
                    tally.fault("wrong", f"to id null: {message}")
                return
            tally.answered += 1
            key = json.dumps(answer_id)
            if key in seen:
                tally.fault("wrong", f"a second answer to {answer_id!r}")
                return
            seen.add(key)
            if key in pending:
                problem = judge(message, pending.pop(key))
            elif key in maybe:
                maybe.discard(key)
                problem = judge(message, ANY_REPLY)
            else:
                problem = f"an answer to an id never sent: {message}"
            if problem is not None:
                tally.fault("wrong", problem)

        initialize = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "capabilities": {},
                "initializationOptions": {"indexDir": str(server.index_dir)},
            },
        }
        server.write(framed(dumps(initialize)))
        pending[json.dumps("init")] = RESULT
        collect(time.monotonic() + 60)
        server.write(framed(dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}})))

        round_number = 0
        while tally.frames < frames and server.alive():
            round_number += 1
            null_replies = 0
            # The replies to id null the round's cases are due: at least, and exactly when known.
            null_due = 0
            null_exact = True
            stalled = False
            for _ in range(round_cases):
                case = generator.case()
                null_due += case.null_replies or 0
                null_exact = null_exact and case.null_replies is not None
                tally.cases[case.kind] += 1
                tally.frames += 1
                for request_id, expected in case.expect.items():
                    pending[json.dumps(request_id)] = expected
                maybe.update(json.dumps(request_id) for request_id in case.maybe)
                probe = f"probe-{round_number}-{tally.frames}"
                pending[json.dumps(probe)] = RESULT
                tally.probes += 1
                valid = framed(dumps({"jsonrpc": "2.0", "id": probe, "method": "smartctx/indexStatus"}))
                stalled = not server.write(case.data + valid)
                if stalled:
                    break
            collect(time.monotonic() + wait_s)
            if not server.alive():
                tally.fault("crashes", f"exit code {server.process.returncode} in round {round_number}")
                break
            if stalled:
                tally.fault("crashes", f"the server stopped reading its input in round {round_number}")
                break
            for key in list(pending):
                kind = "missing" if key.startswith('"probe') else "hangs"
                tally.fault(kind, f"no answer to {key} in round {round_number}")
                pending.pop(key)
            # Every reply to id null was written before the round's last probe was answered.
            for _ in range(null_due - null_replies):
                tally.fault(
                    "hangs",
                    f"round {round_number}: {null_due} replies to id null due, {null_replies} came",
                )
            if null_exact and null_replies > null_due:
                tally.fault(
                    "wrong", f"round {round_number}: {null_replies} replies to id null, {null_due} due"
                )
        server.write(framed(dumps({"jsonrpc": "2.0", "id": "down", "method": "shutdown"})))
        pending[json.dumps("down")] = RESULT
        collect(time.monotonic() + wait_s)
        server.write(framed(dumps({"jsonrpc": "2.0", "method": "exit"})))
        try:
            code = server.process.wait(wait_s)
        except subprocess.TimeoutExpired:
            server.process.kill()
            tally.fault("crashes", "the server did not exit after shutdown and exit")
        else:
            if code != 0:
                tally.fault("crashes", f"exit code {code} after shutdown and exit")
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--frames", type=int, default=6000, help="generated frames (each followed by a valid request)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--wait-s", type=float, default=20.0, help="how long a round's answers may take")
    args = parser.parse_args()
    started = time.monotonic()
    tally = run_fuzz(args.frames, args.seed, args.wait_s)
    seconds = time.monotonic() - started
    row = {
        "frames": tally.frames,
        "valid requests": tally.probes,
        "answers": tally.answered,
        "crashes": tally.crashes,
        "hangs": tally.hangs,
        "missing": tally.missing,
        "no id": tally.no_id,
        "wrong": tally.wrong,
        "seconds": round(seconds, 1),
    }
    print("| " + " | ".join(row) + " |")
    print("|" + "---|" * len(row))
    print(
        "| "
        + " | ".join(f"{value:,}" if isinstance(value, int) else str(value) for value in row.values())
        + " |"
    )
    print(f"unanswered requests (hangs and missing): {tally.hangs + tally.missing:,}")
    print("frames by kind: " + ", ".join(f"{kind} {count:,}" for kind, count in sorted(tally.cases.items())))
    for example in tally.examples:
        print("  " + example)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    result = {**row, "seed": args.seed, "by_kind": dict(tally.cases), "examples": tally.examples}
    (OUT_DIR / "fuzz_lsp.json").write_text(json.dumps(result, indent=2))
    return 0 if not (tally.crashes or tally.hangs or tally.missing or tally.no_id or tally.wrong) else 1


if __name__ == "__main__":
    sys.exit(main())
