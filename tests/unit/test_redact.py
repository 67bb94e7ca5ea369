"""The redactor on its own: every planted form goes, real code stays, and a second pass changes nothing."""

from __future__ import annotations

import logging
import sys
import sysconfig
from pathlib import Path

import pytest

from secret_corpus import Planted, build
from smartctx.core.redact import REDACTED, RedactingFormatter, redact, redact_tree

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
