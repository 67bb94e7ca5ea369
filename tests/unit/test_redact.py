"""The redactor on its own: every planted form goes, real code stays, and a second pass changes nothing.

The exit pass remembers the lines it found clean and scans only the lines it has not seen; the
tests below check its answers against a fresh process's, which has seen nothing.
"""

from __future__ import annotations

import json
import logging
import random
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import hyperscan
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from secret_corpus import Planted, build
from smartctx.secrets.log_format import RedactingFormatter
from smartctx.secrets.prefilter import _on_match, prefilter_database
from smartctx.secrets.redaction import redact, redact_once, redact_tree
from smartctx.secrets.rules import OWN_LINE_RULES, OWN_TEXT_RULES, REDACTED, compiled_rule_set
from smartctx.secrets.scan import (
    _call_matches,
    _generic_matches,
    _gitleaks_spans,
    _KeywordLines,
    _own_spans,
    line_local_spans,
    lower_ascii,
)

CORPUS = build(seed=3, copies=1)
SERVER = Path(__file__).resolve().parents[2] / "server" / "smartctx"
# At most this many replacements per 10,000 lines of real code that holds no secret.
MAX_FALSE_POSITIVES_PER_10K_LINES = 1


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: f"{case.form} ({case.language})")
def test_every_planted_form_is_redacted_and_lines_are_kept(case: Planted) -> None:
    redacted, count = redact(case.content)
    assert count >= 1
    for line in case.value.splitlines():
        if "-----" not in line:
            assert line not in redacted
    assert redacted.count("\n") == case.content.count("\n")
    assert redact(redacted) == (redacted, 0)


def test_the_forms_that_used_to_leak_are_redacted() -> None:
    """The forms issue 10 found leaking even from pack text, each as a user would write it."""
    texts = [
        "export API_KEY=Zt8qLw2Xv9Rk4Pm7Nc1B\n",
        'DATABASE_URL = "postgres://app:hunter2@db.internal/app"\n',
        "$config = ['password' => 'Qm9vT3k8Lp2Zx7Vw'];\n",
        'ENV.fetch("SECRET_KEY_BASE", "9f8e7d6c5b4a39281706f5e4d3c2b1a0")\n',
        "const dbPassword = `Kp3Xr8Wm2Qz7Lt5Nv`;\n",
        "cfg['password'] = 'Rt6Yh2Bn8Mk4Pq9Wz'\n",
        "client = 'sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc'\n",
    ]
    for text in texts:
        redacted, count = redact(text)
        assert count == 1 and REDACTED in redacted, text


@pytest.mark.parametrize(
    "text",
    [
        'GITHUB_TOKEN = "ghp_' + "0" * 30 + 'a1B2c3"\n',
        'client = "ghp_' + "Wq3Zr8Xm2Kp7Lt5Nv9Bc4Df6Gh1Jk0Ls3Qa7x" + '"\n',
        '"""Clone with github_pat_' + "0" * 81 + ' for now."""\n',
        "token: github_pat_" + "A1" * 42 + "\n",
        "# staging bot xoxb-" + "1" * 11 + "-" + "1" * 12 + "-" + "a" * 24 + "\n",
        'STRIPE_SECRET = "sk_live_' + "0" * 24 + '"\n',
        'access_key_id = "AKIA' + "A" * 16 + '"\n',
        'NPM_TOKEN="npm_' + "x" * 36 + '"\n',
    ],
)
def test_a_value_in_a_provider_token_format_is_redacted_whatever_its_entropy(text: str) -> None:
    """Issue 22: tokens of zeros, or a character off their format's length, passed every field."""
    redacted, count = redact(text)
    assert count == 1 and REDACTED in redacted
    assert not any(
        prefix in redacted for prefix in ("ghp_", "github_pat_", "xoxb-", "sk_live_", "AKIA", "npm_")
    )


@pytest.mark.parametrize(
    "text",
    [
        "Classic tokens start with ghp_ and fine-grained ones with github_pat_.\n",
        "ghp_" + "0" * 41 + "\n",
        "# AWS's documentation uses AKIAIOSFODNN7EXAMPLE\n",
        "Slovakia AKIAXYZ\n",
        "prefix_ghp_short\n",
    ],
)
def test_a_provider_prefix_outside_its_format_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def test_real_code_is_left_alone() -> None:
    """smartctx's own source and part of the standard library: no secrets, so (almost) no replacement."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    paths = [*SERVER.rglob("*.py"), *(stdlib / "asyncio").rglob("*.py"), *(stdlib / "email").rglob("*.py")]
    texts = [path.read_text(encoding="utf-8") for path in paths]
    lines = sum(text.count("\n") for text in texts)
    replaced = sum(redact(text)[1] for text in texts)
    assert lines > 2_000
    assert replaced / lines * 10_000 <= MAX_FALSE_POSITIVES_PER_10K_LINES


def test_plain_values_and_placeholders_are_not_redacted() -> None:
    text = 'password = "changeme"\ntoken = ""\napi_key = os.environ["API_KEY"]\nurl = "https://user:${PASSWORD}@host"\n'
    assert redact(text) == (text, 0)


def test_a_private_key_block_cut_off_by_a_pack_is_still_redacted() -> None:
    text = 'KEY = """-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1abc\nqrs\n'
    redacted, count = redact(text)
    assert count == 1 and "MIIEow" not in redacted and redacted.count("\n") == 3


def test_a_tree_is_redacted_in_every_string_and_keeps_its_shape() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    tree = {
        "text": f"x {token}",
        "items": [{"doc": token, "n": 3, "ok": True, "none": None}],
        "id": "a.py::f",
    }
    assert redact_tree(tree) == {
        "text": f"x {REDACTED}",
        "items": [{"doc": REDACTED, "n": 3, "ok": True, "none": None}],
        "id": "a.py::f",
    }


def test_a_tree_holding_anything_but_json_values_is_refused_not_sent_unread() -> None:
    """An object inside a tree could hold strings the walk cannot see: the exit refuses it."""

    class Opaque:
        text = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

    with pytest.raises(TypeError, match="Opaque"):
        redact_tree({"items": [{"doc": Opaque()}]})


def test_a_password_in_a_url_is_redacted_wherever_the_url_stands() -> None:
    """The URL rule is tried one line at a time: inside a long text, after other lines, in a tree."""
    url = "postgres://app:Hunter2xyz@db.internal/app"
    filler = "".join(f"line {n} of code, see https://example.com/docs/{n}\n" for n in range(300))
    redacted, count = redact(f"{filler}DATABASE_URL = '{url}'\n{filler}")
    assert count == 1 and "Hunter2xyz" not in redacted
    assert (
        redact_tree({"uri": url, "links": [url, filler]})["uri"]
        == f"postgres://app:{REDACTED}@db.internal/app"
    )


def test_log_lines_are_redacted_with_their_tracebacks() -> None:
    token = "glpat-" + "Zx8Kq2Lm7Np4Rt6Vw9Yb"
    formatter = RedactingFormatter("%(message)s")
    try:
        raise ValueError(f"bad token {token}")
    except ValueError:
        record = logging.LogRecord("smartctx", logging.ERROR, __file__, 1, "using %s", (token,), None)
        record.exc_info = sys.exc_info()
    line = formatter.format(record)
    assert token not in line and "ValueError: bad token [REDACTED]" in line


# Run in a process of its own, so that no line or answer is remembered from an earlier scan.
_FRESH_SCAN = """
import json, sys
from smartctx.secrets.redaction import redact
print(json.dumps([redact(text) for text in json.load(sys.stdin)]))
"""


def fresh_answers(texts: list[str]) -> list[tuple[str, int]]:
    """What ``redact`` answers for each text in a process that has redacted nothing before."""
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_SCAN],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
    )
    return [(text, count) for text, count in json.loads(done.stdout)]


# Headings, fences and list marks as a pack joins its pieces with, and nothing at all.
_GLUE = (
    "",
    "\n",
    "\n\n## 2. function `f` — a.py:1-9\n\n```python\n",
    "```\n\n",
    "- a.py:3-4 function `g`: `",
    " ",
)


def _piece(rng: random.Random, texts: list[str]) -> str:
    """A stretch of one text cut anywhere: mid-line, mid-secret, or whole."""
    text = rng.choice(texts)
    start = rng.randrange(len(text) + 1) if rng.random() < 0.5 else 0
    end = rng.randrange(start, len(text) + 1) if rng.random() < 0.5 else len(text)
    return text[start:end]


def test_the_exit_pass_answers_as_a_scan_of_the_whole_text_would() -> None:
    """Pieces already scanned (as the pipeline scans each body and summary) and joined into one text
    (as a pack joins them), secrets cut across the joins: the exit pass over the joined text, which
    skips the lines it knows, finds exactly what a process that never saw the pieces finds."""
    rng = random.Random(11)
    planted = [case.content for case in build(seed=8, copies=1)]
    code = [path.read_text(encoding="utf-8") for path in sorted((SERVER / "retrieval").glob("*.py"))[:6]]
    pieces: list[list[str]] = []
    for _ in range(300):
        parts = [_piece(rng, planted if rng.random() < 0.6 else code) for _ in range(rng.randrange(2, 6))]
        pieces.append(parts)
    for parts in pieces:
        for part in parts:
            redact(part)
    joined = [rng.choice(_GLUE).join(parts) for parts in pieces]
    # The exit sees a pack made of the pieces as the pipeline redacted them, too.
    joined += [rng.choice(_GLUE).join(redact(part)[0] for part in parts) for parts in pieces]
    assert [redact(text) for text in joined] == fresh_answers(joined)
    assert sum(count for _, count in fresh_answers(joined)) > 100


def test_a_message_of_many_strings_is_redacted_as_each_string_alone() -> None:
    """The exit redacts all the strings of a message in one scan; each answer is the string's own."""
    cases = build(seed=9, copies=1)
    strings = [case.content for case in cases] + [f"{case.symbol} ({case.path}:1-9)" for case in cases]
    strings += [case.value for case in cases] + ["", "\n", "plain"]
    redacted = redact_tree({"items": [{"text": text} for text in strings]})
    assert [item["text"] for item in redacted["items"]] == [text for text, _ in fresh_answers(strings)]


def test_texts_redacted_once_together_are_each_redacted_as_alone() -> None:
    """An indexed file's texts (its path, names, signatures, docs and bodies) are scanned as one,
    remembering nothing: each answer is still the text's own, secrets at either end of a text and
    a key block across its lines included."""
    rng = random.Random(12)
    planted = [case.content for case in build(seed=10, copies=1)]
    code = [path.read_text(encoding="utf-8") for path in sorted((SERVER / "retrieval").glob("*.py"))[:4]]
    files = [
        ["", "\n", *(_piece(rng, rng.choice((planted, code))) for _ in range(rng.randrange(1, 8)))]
        for _ in range(60)
    ]
    expected = fresh_answers([text for texts in files for text in texts])
    answers = [answer for texts in files for answer in redact_once(texts)]
    assert answers == expected
    assert sum(count for _, count in answers) > 30


def test_a_line_is_redacted_wherever_it_stands_in_a_text() -> None:
    """A rule that looks for the start of a line finds it after a line break too, so a piece has the
    same secrets alone and inside a pack."""
    secret = "Xy18Q~" + "Ab3dEf5hIj7kLm9nOp1qRs3tUv5wXy7zAb"
    assert redact(secret) == (REDACTED, 1)
    assert redact(f"x = 1\n{secret}\n") == (f"x = 1\n{REDACTED}\n", 1)


def test_env_defaults_are_found_from_call_openings_as_the_expression_finds_them() -> None:
    """The default of a secret-named environment variable is looked for only where a call opens;
    on real code and on fuzzed calls, every match the rule's expression has is found, and no other."""
    (rule,) = [rule for rule in OWN_TEXT_RULES if rule.functions]
    rng = random.Random(5)
    fragments = [
        "os.getenv(",
        'ENV.fetch( "SECRET_KEY" ,\n "',
        'getEnv(\n\t"api_key", "',
        "x.get('",
        'get("token",',
        '"Zt8qLw2Xv9Rk4Pm7Nc1B")',
        " ",
        "\n",
        '"',
        "'",
        "fetch",
        "env",
        "(",
        ",",
        "password",
        "abcdefghijkLMNOP",
        'GETENV ( "DB_PASSWORD" , "qQ9wE8rT7yU6iO5pA4" )',
        "\u212a",
        "getProperty(",
    ]
    texts = [path.read_text(encoding="utf-8") for path in sorted(SERVER.rglob("*.py"))]
    texts += ["".join(rng.choice(fragments) for _ in range(rng.randrange(1, 12))) for _ in range(5000)]
    found = 0
    for text in texts:
        expected = [match.span() for match in rule.pattern.finditer(text)]
        assert [match.span() for match in _call_matches(rule, text, lower_ascii(text))] == expected, text
        found += bool(expected)
    assert found > 1000


def test_generic_rules_find_from_their_words_what_their_expressions_find() -> None:
    """A rule of gitleaks' generic form is tried only within its run before one of its words; on
    real code, the planted corpus and fuzzed lines dense in words, runs, case folding and odd
    characters, every match each such rule's expression has is found, and no other."""
    rules = [rule for rule in compiled_rule_set().line_rules if rule.words_at is not None]
    assert len(rules) > 90
    rng = random.Random(11)
    fragments = [
        *("api", "API", "Api", "aPi", "key", "KEY", "\u212aey", "to\u212aen", "token", "secret"),
        *("passwd", "password", "auth", "access", "creds", "credential", "sonar_login", "twitter"),
        *("snyk-api-key", "heroku", "x" * 45, "_", ".", "-", "é", "\u017f", " ", "\t", "=", ":", "=>", "|| "),
        *('"', "'", "`", ";", ",", "Zt8qLw2Xv9Rk4Pm7Nc1B", "abcdefghijKLMNOPqrst0123", "12345678-90ab-cdef"),
    ]
    lines = [
        line for text in (*(case.content for case in CORPUS), *_SOURCE_TEXTS) for line in text.split("\n")
    ]
    lines += ["".join(rng.choice(fragments) for _ in range(rng.randrange(1, 16))) for _ in range(5000)]
    found = 0
    for line in lines:
        for rule in rules:
            if rule.words_at.search(line) is None:
                continue
            expected = [match.span() for match in rule.pattern.finditer(line, 0, len(line))]
            shown = [
                match.span()
                for match in _generic_matches(rule.pattern, rule.words_at, line, [(0, len(line))])
            ]
            assert shown == expected, (rule.id, line)
            found += bool(expected)
    assert found > 500


# Lines to build random texts from: every line of the planted corpus and of smartctx's own source.
_SOURCE_TEXTS = [path.read_text("utf-8") for path in sorted(SERVER.rglob("*.py"))]
_SOURCE_LINES = [
    line for text in [*(case.content for case in CORPUS), *_SOURCE_TEXTS] for line in text.split("\n")
]
# Characters the prefilter reads differently from Python's expressions (beyond ASCII, the Kelvin
# sign and the long s that case folding turns into "k" and "s", the controls Python's ``\s``
# matches), and the punctuation that secrets' forms turn on.
_ODD_CHARACTERS = [
    "é",
    "\u212a",
    "\u017f",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1f",
    "\x00",
    "\r",
    "\t",
    "=",
    '"',
    "'",
    ":",
    " ",
]


@st.composite
def _spliced_texts(draw: st.DrawFn) -> str:
    """Lines of code and planted secrets, some cut, joined with others or salted with odd characters."""
    lines = []
    for _ in range(draw(st.integers(1, 30))):
        line = draw(st.sampled_from(_SOURCE_LINES))
        action = draw(st.sampled_from(["keep", "cut", "join", "salt"]))
        if action == "cut" and line:
            line = line[draw(st.integers(0, len(line) - 1)) :]
        elif action == "join":
            line += draw(st.sampled_from(_SOURCE_LINES))
        elif action == "salt":
            at = draw(st.integers(0, len(line)))
            line = line[:at] + draw(st.sampled_from(_ODD_CHARACTERS)) + line[at:]
        lines.append(line)
    return "\n".join(lines)


def _plain_line_local_spans(text: str, lowered: str) -> list[tuple[int, int]]:
    """What the line rules find without the prefilter: each rule its keywords name, on each line
    holding one of them (the scan as it was before Hyperscan)."""
    rule_set = compiled_rule_set()
    where = _KeywordLines(text, lowered, rule_set.line_keywords)
    named = sorted({index for keyword in where.present for index in rule_set.line_rules_by_keyword[keyword]})
    return [
        *_gitleaks_spans(text, where, tuple(rule_set.line_rules[index] for index in named)),
        *_own_spans(text, lowered, where, OWN_LINE_RULES),
    ]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_spliced_texts())
def test_the_prefiltered_scan_finds_what_every_rule_on_every_keyword_line_finds(text: str) -> None:
    """Hyperscan says which rules can match which lines; the spans are those of the plain scan."""
    lowered = lower_ascii(text)
    assert sorted(line_local_spans(text, lowered)) == sorted(_plain_line_local_spans(text, lowered))


def test_the_prefilter_finds_every_planted_form_the_plain_scan_finds() -> None:
    """The whole corpus, each case as one text: the same spans with and without the prefilter."""
    found = 0
    for case in CORPUS:
        lowered = lower_ascii(case.content)
        spans = sorted(line_local_spans(case.content, lowered))
        assert spans == sorted(_plain_line_local_spans(case.content, lowered)), case.form
        found += bool(spans)
    # Most forms are found by the line rules: the comparison is not of two empty answers.
    assert found > len(CORPUS) // 2


def _prefilter_hits(database: hyperscan.Database, text: bytes) -> list[tuple[int, int]]:
    hits: list[tuple[int, int]] = []
    database.scan(text, match_event_handler=_on_match, context=hits, scratch=hyperscan.Scratch(database))
    return hits


def test_a_saved_prefilter_is_loaded_and_a_damaged_one_is_compiled_again(isolated_cache: Path) -> None:
    patterns = [re.compile(r"\btoken=(\w{8,})"), re.compile("password", re.IGNORECASE)]
    text = b"x token=abcdefgh1 PASSWORD\n"
    compiled = _prefilter_hits(prefilter_database(patterns), text)
    [saved] = isolated_cache.glob("secret-prefilter-*.hsdb")
    whole = saved.read_bytes()
    assert compiled and _prefilter_hits(prefilter_database(patterns), text) == compiled
    saved.write_bytes(whole[: len(whole) // 2] + bytes(len(whole) - len(whole) // 2))
    assert _prefilter_hits(prefilter_database(patterns), text) == compiled
    assert saved.read_bytes() == whole
