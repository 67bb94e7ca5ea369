"""Task text of every shape parses into weighted words and the exact things it names."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smartctx.retrieval.query import (
    IDENTIFIER_WEIGHT,
    MAX_NAMED,
    MAX_PARSED_WORDS,
    MAX_TITLE_CHARS,
    REPEAT_SATURATION,
    TITLE_FACTOR,
    Frame,
    parse_task,
    repeat_factor,
    without_comments,
)
from smartctx.secrets.redaction import redact


def test_identifiers_weigh_more_than_prose() -> None:
    task = parse_task("The HttpResponseRedirect in `get_queryset` breaks when the cache is cold")
    assert task.words["httpresponseredirect"] > task.words["cache"]
    assert task.words["getqueryset"] > task.words["cold"]
    assert {"http", "response", "redirect", "queryset"} <= set(task.words)
    assert "the" not in task.words and "when" not in task.words
    assert "HttpResponseRedirect" in task.identifiers and "get_queryset" in task.identifiers


def test_frames_paths_and_dotted_names() -> None:
    task = parse_task(
        "Traceback:\n"
        '  File "/usr/lib/python3/site-packages/django/db/models/query.py", line 812, in bulk_create\n'
        "see django/forms/fields.py and models.Field.get_db_prep_value; also src/app.ts:14:3"
    )
    assert Frame("usr/lib/python3/site-packages/django/db/models/query.py", 812, "bulk_create") in task.frames
    assert Frame("src/app.ts", 14) in task.frames
    assert "django/forms/fields.py" in task.file_paths
    assert "models.Field.get_db_prep_value" in task.dotted_names


def test_frames_come_innermost_first() -> None:
    """Python prints the most recent call last; Rust, Go, Java and JavaScript print it first."""
    python = parse_task(
        'Traceback (most recent call last):\n  File "app/cli.py", line 9, in main\n'
        '  File "app/forms.py", line 4, in clean\nValueError: bad'
    )
    assert python.frames == (Frame("app/forms.py", 4, "clean"), Frame("app/cli.py", 9, "main"))
    rust = parse_task("panicked at src/forms.rs:4:9\n   at src/main.rs:9:5")
    assert rust.frames == (Frame("src/forms.rs", 4), Frame("src/main.rs", 9))


def test_a_jvm_stack_trace_gives_its_package_folders_and_methods() -> None:
    trace = parse_task(
        "java.lang.IllegalStateException: closed\n"
        "\tat io.netty.handler.codec.http.HttpObjectDecoder.decode(HttpObjectDecoder.java:420)"
        " ~[netty.jar:4.1]\n"
        "\tat io.netty.channel.Pipeline$Head.<init>(Pipeline.java:12)\n"
        "\tat io.grpc.ServerImpl.lambda$start$0(ServerImpl.java:99)\n"
        "\tat io.grpc.ServerImpl.<clinit>(ServerImpl.java:5)\n"
    )
    assert trace.frames[:4] == (
        Frame("io/netty/handler/codec/http/HttpObjectDecoder.java", 420, "decode"),
        Frame("io/netty/channel/Pipeline.java", 12, "Head"),
        Frame("io/grpc/ServerImpl.java", 99, "start"),
        Frame("io/grpc/ServerImpl.java", 5, ""),
    )
    # Each frame once: not again as a bare ``HttpObjectDecoder.java:420``.
    assert [frame.line for frame in trace.frames].count(420) == 1


def test_a_traceback_pasted_with_escaped_quotes_keeps_its_frames() -> None:
    """A traceback copied out of JSON or a shell string: its quotes escaped, a Windows path's
    backslashes kept as they are."""
    escaped = parse_task(
        'Traceback (most recent call last):\n  File \\"/tmp/run/app/cli.py\\", line 9, in main\n'
        '  File \\"/tmp/run/app/forms.py\\", line 4, in clean'
    )
    assert escaped.frames == (
        Frame("tmp/run/app/forms.py", 4, "clean"),
        Frame("tmp/run/app/cli.py", 9, "main"),
    )
    windows = parse_task('  File "C:\\work\\app\\forms.py", line 4, in clean')
    assert windows.frames == (Frame("C:/work/app/forms.py", 4, "clean"),)


@pytest.mark.parametrize(
    ("task", "asks", "test_paths"),
    [
        ("flaky test for the parser", True, ()),
        ("Tests fail on Windows", True, ()),
        ("add a unittest for the parser", True, ()),
        ("test_parse_header fails since 2.1", False, ()),
        ("in my test the total is wrong", False, ()),
        ("write unit tests for the parser", True, ()),
        # Whether a named test file makes the task about tests depends on the workspace (search.py).
        ("see pkg/tests/parser_spec.py", False, ("pkg/tests/parser_spec.py",)),
        ("the parser drops comments", False, ()),
        ("this path is undocumented and untested", False, ()),
        ("pytest crashes when collecting a package", False, ()),
        ("broken in the latest release", False, ()),
        # A traceback through the test that shows the bug is a bug report, not a task about tests.
        ('Traceback (most recent call last):\n  File "tests/test_parser.py", line 3, in test_x', False, ()),
        ("thread 'main' panicked at tests/parser.rs:14:5", False, ()),
        (
            'see tests/test_parser.py\n  File "tests/test_parser.py", line 3, in test_x',
            False,
            ("tests/test_parser.py",),
        ),
        ("parser.py drops comments", False, ()),
    ],
)
def test_tests_are_asked_for_only_in_so_many_words(
    task: str, asks: bool, test_paths: tuple[str, ...]
) -> None:
    parsed = parse_task(task)
    assert parsed.asks_for_tests is asks
    assert parsed.test_paths == test_paths


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_parses(text: str) -> None:
    task = parse_task(text)
    assert all(isinstance(word, str) and weight > 0 for word, weight in task.words.items())


def test_a_huge_log_stays_a_bounded_query() -> None:
    log = "\n".join(f"ERROR worker_{n} failed at step{n} with code {n}" for n in range(3000))
    task = parse_task(log)
    assert len(task.words) <= MAX_PARSED_WORDS and len(task.identifiers) <= MAX_NAMED


MEGABYTE = 1_000_000


@pytest.mark.parametrize("unit", ["\n", "  \n", "\r\n", ">>> \n", "numpy: 1.2\n", "```"])
def test_a_megabyte_of_hostile_text_is_read_without_hanging(unit: str) -> None:
    """Each line and each fence is looked at a bounded number of times. Two patterns once ran on to
    the text's end from every place they were tried: the environment rule's through the blank lines
    after each line's start (300,000 blank lines took over half an hour), and a code fence's info
    string to the next line break (a megabyte of fences without one took five minutes); now each text
    takes well under a second (bench/reliability/hostile_tasks.py measures it). A child process, so
    that a regression fails here after its minute instead of hanging the suite."""
    text = f"{unit!r} * {MEGABYTE // len(unit)}"
    script = f"from smartctx.retrieval.query import parse_task; parse_task({text}); print('read')"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "read\n"


def test_redaction_keeps_line_breaks() -> None:
    text = "a = 1\n-----BEGIN RSA PRIVATE KEY-----\nMIIB\nabc\n-----END RSA PRIVATE KEY-----\nb = 2\n"
    redacted, count = redact(text)
    assert count == 1
    assert redacted.count("\n") == text.count("\n")
    assert "MIIB" not in redacted


def test_plain_values_are_not_redacted() -> None:
    assert redact('password = "changeme"\ntoken = ""\n')[1] == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["alpha", "Beta", "gamma_delta", "`code`", "words", "x.y", "parsing"]), max_size=400
    )
)
def test_prose_words_are_among_the_words(parts: list[str]) -> None:
    task = parse_task(" ".join(parts) + " " + " ".join(f"word{n}" for n in range(200)))
    assert task.prose <= set(task.words)


def test_the_title_s_words_weigh_more_in_every_form() -> None:
    """A word of the first line counts TITLE_FACTOR times, whether the title has it as prose, as a
    name or as a part of one; a word of the explanation alone keeps its weight."""
    explanation = "\n\nThe ledger shows the refund; see order_total."
    task = parse_task("Refund fails in OrderRefund" + explanation)
    other_title = parse_task("Totals look odd" + explanation)
    assert task.words["refund"] == TITLE_FACTOR * other_title.words["refund"] > other_title.words["refund"]
    assert task.words["order"] == TITLE_FACTOR * other_title.words["order"]
    assert task.words["orderrefund"] == TITLE_FACTOR * IDENTIFIER_WEIGHT
    assert task.words["ledger"] == other_title.words["ledger"]
    assert task.words["ordertotal"] == other_title.words["ordertotal"]


def test_the_times_a_task_says_each_word_count_its_every_form() -> None:
    """``said`` counts each word once a mention, whether as prose, as a whole name or as a part of
    one; the words' own weights do not change with it."""
    once = parse_task("Slow totals\n\nThe ledger is slow to sum.")
    thrice = parse_task("Slow totals\n\nThe ledger is slow to sum. The Ledger, and ledger_rows.")
    assert once.said["ledger"] == 1
    assert thrice.said["ledger"] == 3
    assert thrice.said["rows"] == thrice.said["ledgerrows"] == 1
    assert thrice.said["slow"] == 2
    assert thrice.words["ledger"] == once.words["ledger"]
    assert set(thrice.said) == set(thrice.words)


def test_a_quoted_stack_trace_says_no_word() -> None:
    """Its frames repeat the folders of every frame: a word only they say is said no times."""
    task = parse_task(
        "Refund lost\n\nThe refund is lost.\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/vendorlib/ledger.py", line 20, in settle\n'
        '  File "/usr/lib/python3/site-packages/vendorlib/ledger.py", line 41, in settle\n'
        "ValueError: refund\n"
    )
    assert task.said["refund"] == 3
    assert task.said["vendorlib"] == task.said["settle"] == 0
    assert {"vendorlib", "settle"} <= set(task.words)


def test_a_word_said_again_weighs_more_up_to_a_limit() -> None:
    assert repeat_factor(1) == 1.0 < repeat_factor(2) < repeat_factor(3) < repeat_factor(10_000)
    assert repeat_factor(10_000) < 1 + REPEAT_SATURATION


def test_a_first_line_too_long_for_a_title_is_read_as_the_rest() -> None:
    """A one-line log pasted first is no title: its words count as if it came second."""
    log = "ERROR cache miss for OrderRefund " + "retrying the ledger " * 250
    assert len(log) > MAX_TITLE_CHARS
    first = parse_task(log + "\nThe refund is lost.")
    second = parse_task("Look\n" + log + "\nThe refund is lost.")
    assert first.words["orderrefund"] == second.words["orderrefund"] == IDENTIFIER_WEIGHT
    assert first.words["ledger"] == second.words["ledger"]


def test_a_one_line_task_keeps_its_words_weights_relative() -> None:
    one_line = parse_task("Refund fails in OrderRefund when the ledger is closed")
    assert one_line.words["orderrefund"] / one_line.words["ledger"] == 3


def test_a_templates_html_comments_are_not_task_words() -> None:
    task = parse_task(
        "fix math max on an empty list\n"
        "<!--\nThanks for contributing! Good examples: explain your approach\n-->\n"
        "<!-- describe the problem -->Added tests."
    )
    assert {"math", "max", "empty", "list", "added"} <= set(task.words)
    assert not {"contributing", "examples", "explain", "approach", "describe"} & set(task.words)


def test_html_comments_in_fenced_code_and_unclosed_ones_stay() -> None:
    fenced = "Broken page:\n```html\n<!-- header_partial -->\n```\n<!-- template words -->after"
    assert without_comments(fenced) == "Broken page:\n```html\n<!-- header_partial -->\n```\n after"
    assert without_comments("a <!-- b -->c <!-- d") == "a  c <!-- d"
    assert without_comments("no comment at all") == "no comment at all"


@pytest.mark.parametrize(
    ("task", "scopes"),
    [
        ("ws: fix write callback error handling", ("ws",)),
        ("fix(dap): configuration done body is not required", ("dap",)),
        ("feat(lsp, hover)!: show the type", ("lsp", "hover")),
        ("fix({react,preact}-query): default TData", ("react-query", "preact-query")),
        ("ext/autodoc: typehints in the signature", ("ext", "autodoc")),
        # A change type is no scope, and neither is a sentence that has a colon.
        ("fix: a typo", ()),
        ("BUG: linalg.solve drops the dtype", ()),
        ("Using rst_prolog removes: the headings", ()),
        ("Union queryset should raise on distinct().", ()),
        # Only the title's start is read.
        ("Hover shows the wrong type\n\nlsp: see the log", ()),
    ],
)
def test_a_titles_scope_is_read_from_its_start(task: str, scopes: tuple[str, ...]) -> None:
    assert parse_task(task).scopes == scopes
