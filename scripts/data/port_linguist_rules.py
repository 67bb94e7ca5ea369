"""Port GitHub Linguist's vendored, documentation and generated path rules to the data file that
smartctx's ranking reads.

Linguist (https://github.com/github-linguist/linguist, MIT License, Copyright (c) 2017 GitHub, Inc.)
keeps the paths it leaves out of a repository's language statistics as data: one regular expression
per line in ``lib/linguist/vendor.yml`` and ``documentation.yml``, and in ``generated.rb`` the
path tests among its generated-file checks (``name.match(/…/)``). This script copies those
expressions (Ruby's and Python's syntax agree on every one of them) and writes
``server/smartctx/retrieval/linguist_rules.json`` with the origin, commit and licence named.

    python scripts/data/port_linguist_rules.py path/to/linguist COMMIT

Left out, with the reason kept in the file: patterns that match folders of ordinary source code in
real projects (``cache/`` is Django's cache framework, ``*.d.ts`` a TypeScript project's own
declarations) and Linguist's content checks (they need a file's text, which ranking does not read).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[2] / "server" / "smartctx" / "retrieval" / "linguist_rules.json"

LEFT_OUT = {
    "(^|/)cache/": "names ordinary source folders (django/core/cache/)",
    "(.*?)\\.d\\.ts$": "a TypeScript project's own type declarations are its code",
    "(^|/)\\.gitattributes$": "not source; never indexed",
    "(^|/)\\.gitignore$": "not source; never indexed",
    "(^|/)\\.gitmodules$": "not source; never indexed",
}

# ``name.match(/…/)`` or ``name =~ /…/``, with ``i`` after the closing slash for case-insensitive
# (kept as a scoped ``(?i:…)`` group, since the patterns are joined into one expression).
_NAME_MATCH = re.compile(r"name(?:\.match\(| =~ )/((?:\\/|[^/])+)/(i?)")


def yaml_patterns(text: str) -> list[str]:
    """The ``- pattern`` lines of one of Linguist's YAML lists."""
    return [line[2:].strip() for line in text.splitlines() if line.startswith("- ")]


def generated_patterns(ruby: str) -> list[str]:
    """The path expressions of generated.rb's checks that test the file name alone."""
    found: list[str] = []
    for match in _NAME_MATCH.finditer(ruby):
        pattern = f"(?i:{match.group(1)})" if match.group(2) else match.group(1)
        if pattern not in found:
            found.append(pattern)
    return found


def show(repo: Path, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, text=True, check=True
    ).stdout


def main() -> int:
    repo, commit = Path(sys.argv[1]), sys.argv[2]
    sections = {
        "vendored": yaml_patterns(show(repo, commit, "lib/linguist/vendor.yml")),
        "documentation": yaml_patterns(show(repo, commit, "lib/linguist/documentation.yml")),
        "generated": generated_patterns(show(repo, commit, "lib/linguist/generated.rb")),
    }
    for name, patterns in sections.items():
        kept = []
        for pattern in patterns:
            if pattern in LEFT_OUT:
                continue
            re.compile(pattern)
            kept.append(pattern)
        sections[name] = kept
    document = {
        "origin": "https://github.com/github-linguist/linguist lib/linguist/vendor.yml, documentation.yml,"
        " generated.rb (the checks on the file name alone)",
        "commit": commit,
        "license": "MIT License, Copyright (c) 2017 GitHub, Inc.",
        "ported_by": "scripts/data/port_linguist_rules.py",
        "left_out": LEFT_OUT,
        **sections,
    }
    OUTPUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"{OUTPUT}: " + ", ".join(f"{len(patterns)} {name}" for name, patterns in sections.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
