"""Which secret detector smartctx should use, measured: recall on planted secrets, false positives on
real code, time; then whether any planted value leaves through any field of 1,000 packs.

Detectors compared on the same text:

* ``smartctx`` — ``smartctx.secrets`` as shipped (gitleaks' rules as data + smartctx's own forms);
* ``gitleaks-rules`` — the ported gitleaks rules alone; ``own-rules`` — smartctx's own forms alone;
* ``detect-secrets`` / ``bc-detect-secrets`` — Yelp's detector and Bridgecrew's fork with their
  default plugins, run in their own virtual environments (``--detect-secrets PYTHON``, repeatable
  as ``NAME=PYTHON``), since neither is a smartctx dependency.

Recall: a planted value counts as redacted when no 8-character piece of it survives the detector's
replacement. False positives: every replacement in the real code (which holds no secret).

    .venv/bin/python -m bench.reliability.secrets_bench --packs 1000 \\
        --detect-secrets detect-secrets=/tmp/dsvenv/bin/python \\
        --detect-secrets bc-detect-secrets=/tmp/bcvenv/bin/python
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tests.secret_corpus import Planted, build, planted_repository

from bench.datasets import CHECKOUT
from bench.repository import indexed_store
from smartctx.core.context import ContextOptions, ContextRequest
from smartctx.core.tokens import TokenCounter
from smartctx.history.changes import GitHistory
from smartctx.indexing.sources import WorkspaceSources
from smartctx.retrieval.pipeline import build_context
from smartctx.retrieval.symbols import expand_node
from smartctx.secrets import redaction, scan
from smartctx.secrets.rules import REDACTED
from smartctx.wire.convert import pack_to_wire

PIECE_CHARS = 8


# The files read from a --code folder: source and documentation, as a pack would quote them.
CODE_SUFFIXES = frozenset({".py", ".js", ".mjs", ".cjs", ".ts", ".go", ".rs", ".java", ".rb", ".md", ".rst"})


def real_code(extra: list[Path]) -> list[Path]:
    """Real code with no secrets: smartctx's server and client sources, parts of the standard library
    and every source or documentation file under the ``extra`` folders."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    paths = [
        *sorted((CHECKOUT / "server" / "smartctx").rglob("*.py")),
        *sorted((CHECKOUT / "client-vscode" / "src").rglob("*.ts")),
        *sorted((CHECKOUT / "client-vscode" / "scripts").rglob("*.sh")),
        *[
            p
            for part in ("asyncio", "email", "http", "json", "logging", "urllib")
            for p in sorted((stdlib / part).rglob("*.py"))
        ],
        *[
            p
            for folder in extra
            for p in sorted(folder.rglob("*"))
            if p.suffix in CODE_SUFFIXES and p.is_file()
        ],
    ]
    return paths


def leaked(value: str, text: str) -> bool:
    """Whether any 8-character piece of ``value`` (or all of a shorter one) is still in ``text``."""
    # A webhook URL's scheme, host and path are public; its secret is the rest ("https://" is in
    # every pack that shows a URL).
    value = re.sub(r"^https?://[^/]+/(?:services/)?", "", value)
    if len(value) <= PIECE_CHARS:
        return value in text
    # Private key blocks are judged by their base64 lines, not their BEGIN/END labels.
    lines = [line for line in value.splitlines() if "-----" not in line] or [value]
    return any(
        line[i : i + PIECE_CHARS] in text
        for line in lines
        for i in range(0, max(1, len(line) - PIECE_CHARS + 1), PIECE_CHARS)
    )


Detector = Callable[[list[str]], list[tuple[str, int]]]


def measure(name: str, replace: Detector, planted: list[Planted], code: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    planted_out = replace([case.content for case in planted])
    planted_s = time.perf_counter() - started
    started = time.perf_counter()
    code_out = replace(code)
    code_s = time.perf_counter() - started
    missed = [case for case, (text, _) in zip(planted, planted_out, strict=True) if leaked(case.value, text)]
    lines = sum(text.count("\n") + 1 for text in code)
    false_positives = sum(count for _, count in code_out)
    examples = [
        line
        for before, (after, count) in zip(code, code_out, strict=True)
        if count
        for line in set(before.splitlines()) - set(after.splitlines())
    ]
    return {
        "detector": name,
        "planted": len(planted),
        "redacted": len(planted) - len(missed),
        "recall": round(1 - len(missed) / len(planted), 4),
        "missed": sorted({f"{case.form} ({case.language})" for case in missed}),
        "code_lines": lines,
        "false_positives": false_positives,
        "fp_per_10k_lines": round(false_positives / lines * 10_000, 2),
        "fp_examples": examples[:15],
        "ms_per_1k_lines": round(code_s * 1000 / lines * 1000, 2),
        "planted_s": round(planted_s, 3),
    }


def smartctx_detector(texts: list[str]) -> list[tuple[str, int]]:
    return [redaction.redact(text) for text in texts]


def subset_detector(keep: str) -> Detector:
    """The shipped redactor with one of its two halves switched off."""

    def run(texts: list[str]) -> list[tuple[str, int]]:
        own, gitleaks = scan._own_spans, scan._gitleaks_spans
        # The answers and clean lines the whole redactor remembered do not hold for half of it.
        answers, clean_lines = redaction._answers, redaction._clean_lines
        redaction._answers = redaction._Answers(redaction.MAX_ANSWER_CHARS)
        redaction._clean_lines = redaction._CleanLines(redaction.MAX_CLEAN_LINE_CHARS)
        if keep == "gitleaks":
            scan._own_spans = lambda text, lowered, where, rules: ()  # type: ignore[assignment]
        else:
            scan._gitleaks_spans = lambda text, where, rules: ()  # type: ignore[assignment]
        try:
            return [redaction.redact(text) for text in texts]
        finally:
            scan._own_spans, scan._gitleaks_spans = own, gitleaks
            redaction._answers, redaction._clean_lines = answers, clean_lines

    return run


_WORKER = r"""
import json, sys, tempfile, os
from detect_secrets import SecretsCollection
from detect_secrets.settings import default_settings
texts = json.load(sys.stdin)
out = []
with tempfile.TemporaryDirectory() as folder, default_settings():
    for index, text in enumerate(texts):
        path = os.path.join(folder, f"f{index}.txt")
        with open(path, "w") as handle:
            handle.write(text)
        found = SecretsCollection()
        found.scan_file(path)
        out.append(sorted({s.secret_value for _, s in found if s.secret_value}))
json.dump(out, sys.stdout)
"""


def detect_secrets_detector(python: str) -> Detector:
    """detect-secrets in its own environment: each secret value it reports is replaced everywhere."""

    def run(texts: list[str]) -> list[tuple[str, int]]:
        done = subprocess.run(
            [python, "-c", _WORKER], input=json.dumps(texts), capture_output=True, text=True, check=True
        )
        results = []
        for text, values in zip(texts, json.loads(done.stdout), strict=True):
            count = 0
            for value in values:
                count += text.count(value)
                text = text.replace(value, REDACTED)
            results.append((text, count))
        return results

    return run


def leaks_in_packs(planted: list[Planted], packs: int, seed: int) -> dict[str, Any]:
    """Build ``packs`` packs (bodies, summaries, recentPRs, impact) over the corpus; count leaks by field."""
    rng = random.Random(seed)
    leaks: dict[str, int] = {}
    examples: set[str] = set()
    checked_fields = 0
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "corpus"
        root.mkdir()
        commit_values = planted_repository(root, planted)
        values = [case.value for case in planted] + commit_values
        store = indexed_store(root, Path(folder) / "index")
        counter = TokenCounter("o200k_base")
        history = GitHistory(root)
        symbols = [case.symbol for case in planted]
        started = time.perf_counter()
        with store.snapshot() as snapshot:
            for index in range(packs):
                words = rng.sample(symbols, rng.randint(1, 4))
                task = " ".join(words) + rng.choice(["", " token", " password handling", " connect client"])
                options = ContextOptions(
                    max_bodies=rng.randint(1, 10),
                    max_summaries=rng.randint(0, 30),
                    include_prs=index % 2 == 0,
                    include_impact=index % 3 == 0,
                    budget_tokens=rng.choice([2000, 8000, 20000]),
                )
                pack = build_context(
                    ContextRequest(task, options), snapshot, counter, WorkspaceSources(root), history=history
                )
                wire = pack_to_wire(pack)
                for field, text in fields(wire, ""):
                    checked_fields += 1
                    for value in values:
                        if leaked(value, text):
                            leaks[field] = leaks.get(field, 0) + 1
                            examples.add(f"{field}: {value[:24]}")
                for item in wire["bodies"][:1]:
                    detail = expand_node(snapshot, WorkspaceSources(root), counter, item["id"])
                    for field, text in (
                        ("expand.source", detail.source),
                        ("expand.signature", detail.signature),
                        ("expand.doc", detail.doc),
                    ):
                        checked_fields += 1
                        if any(leaked(value, text) for value in values):
                            leaks[field] = leaks.get(field, 0) + 1
        elapsed = time.perf_counter() - started
        store.close()
    return {
        "packs": packs,
        "fields_checked": checked_fields,
        "leaks_by_field": leaks,
        "leak_examples": sorted(examples)[:20],
        "s": round(elapsed, 1),
    }


def fields(value: Any, path: str) -> Iterable[tuple[str, str]]:
    """Every string in a wire value, with its field path minus list indexes (``bodies.recentPRs.title``)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from fields(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for item in value:
            yield from fields(item, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--copies", type=int, default=2, help="copies of every form and language (fresh values)"
    )
    parser.add_argument("--packs", type=int, default=1000)
    parser.add_argument("--detect-secrets", action="append", default=[], metavar="NAME=PYTHON")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--code",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="more real code to count false positives on (repeatable), e.g. a site-packages folder",
    )
    args = parser.parse_args()
    planted = build(seed=7, copies=args.copies)
    forms = {case.form for case in planted}
    languages = {case.language for case in planted}
    paths = real_code(args.code)
    code = [path.read_text(encoding="utf-8", errors="replace") for path in paths]
    print(
        f"corpus: {len(planted)} planted values, {len(forms)} forms, {len(languages)} languages/formats; "
        f"real code: {len(paths)} files, {sum(t.count(chr(10)) + 1 for t in code):,} lines"
    )
    detectors: list[tuple[str, Detector]] = [
        ("smartctx", smartctx_detector),
        ("gitleaks-rules", subset_detector("gitleaks")),
        ("own-rules", subset_detector("own")),
    ]
    for spec in args.detect_secrets:
        name, _, python = spec.partition("=")
        detectors.append((name, detect_secrets_detector(python)))
    results = [measure(name, run, planted, code) for name, run in detectors]
    for result in results:
        print(json.dumps(result, indent=1))
    packs = leaks_in_packs(planted, args.packs, seed=11) if args.packs else None
    if packs:
        print(json.dumps(packs, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"detectors": results, "packs": packs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
