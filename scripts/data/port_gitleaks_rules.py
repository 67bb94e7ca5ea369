"""Port gitleaks' default rules (config/gitleaks.toml) to the data file smartctx's redactor reads.

gitleaks (https://github.com/gitleaks/gitleaks, MIT License, Copyright (c) 2019 Zachary Rice) keeps
its detection rules as data: a regular expression per rule, keywords that must occur before the
expression is tried, an entropy floor for the captured secret and allowlists. This script copies
that data, rewrites the few RE2 constructs Python's ``re`` spells differently, and writes
``server/smartctx/secrets/secret_rules.json`` with the origin, commit and licence named in the file.

    python scripts/data/port_gitleaks_rules.py path/to/gitleaks.toml COMMIT

Rules that only apply to some file paths are left out: the redactor sees text, not paths.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import tomllib

OUTPUT = Path(__file__).resolve().parents[2] / "server" / "smartctx" / "secrets" / "secret_rules.json"


def python_regex(go: str) -> str:
    """The RE2 expression ``go`` in Python's syntax.

    RE2 lets ``(?i)`` start anywhere and apply to the end of its group; Python wants such flags at
    the very start, so a later one becomes a scoped group ``(?i:…)`` closed where its group ends.
    RE2's ``\\z`` is Python's ``\\Z``, and a ``[`` inside a character class is escaped because
    Python warns that it may one day start a nested set.
    """
    out: list[str] = []
    # For each open group, how many scoped flag groups opened inside it must close with it.
    pending: list[int] = [0]
    in_class = False
    i = 0
    while i < len(go):
        char = go[i]
        if char == "\\":
            escape = go[i : i + 2]
            out.append("\\Z" if escape == "\\z" else escape)
            i += 2
            continue
        if in_class:
            if char == "]" and out[-1] not in ("[", "[^"):
                in_class = False
            out.append("\\[" if char == "[" else char)
            i += 1
            continue
        if char == "[":
            in_class = True
            if go.startswith("[^", i):
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            continue
        flags = re.match(r"\(\?([a-z]+)\)", go[i:])
        if flags and i > 0:
            out.append(f"(?{flags.group(1)}:")
            pending[-1] += 1
            i += flags.end()
            continue
        if char == "(":
            pending.append(0)
        elif char == ")":
            out.append(")" * pending.pop())
        out.append(char)
        i += 1
    out.append(")" * pending.pop())
    converted = "".join(out)
    re.compile(converted)
    return converted


def port_allowlist(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A rule's allowlist without its path conditions, or None if it has nothing else."""
    ported = {
        "target": entry.get("regexTarget", "secret"),
        "regexes": [python_regex(r) for r in entry.get("regexes", [])],
        "stopwords": [word.lower() for word in entry.get("stopwords", [])],
        "all": entry.get("condition", "OR") == "AND",
    }
    return ported if ported["regexes"] or ported["stopwords"] else None


def port(config: dict[str, Any], commit: str) -> dict[str, Any]:
    rules = []
    for rule in config["rules"]:
        if "regex" not in rule or "path" in rule:
            continue
        allowlists = [a for a in (port_allowlist(e) for e in rule.get("allowlists", [])) if a]
        rules.append(
            {
                "id": rule["id"],
                "regex": python_regex(rule["regex"]),
                "keywords": [k.lower() for k in rule.get("keywords", [])],
                "entropy": rule.get("entropy", 0.0),
                "secretGroup": rule.get("secretGroup", 0),
                "allowlists": allowlists,
            }
        )
    global_allowlist = config["allowlist"]
    return {
        "origin": "https://github.com/gitleaks/gitleaks config/gitleaks.toml",
        "commit": commit,
        "license": "MIT License, Copyright (c) 2019 Zachary Rice",
        "ported_by": "scripts/data/port_gitleaks_rules.py (rules with a path condition are left out)",
        "allowlist": {
            "target": "secret",
            "regexes": [python_regex(r) for r in global_allowlist.get("regexes", [])],
            "stopwords": [w.lower() for w in global_allowlist.get("stopwords", [])],
            "all": False,
        },
        "rules": rules,
    }


def main(argv: list[str]) -> int:
    source, commit = Path(argv[1]), argv[2]
    ported = port(tomllib.loads(source.read_text()), commit)
    OUTPUT.write_text(json.dumps(ported, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(ported['rules'])} rules written to {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
